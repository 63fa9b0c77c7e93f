"""Issue 30, point 4: a near miss is minimal by construction. The candidate is the released
reference with one bounded span replaced, built in code; a span over the bound is rejected;
a rule fallback changes a clinical fact and says which rule fired."""

from __future__ import annotations

from pathlib import Path

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rubric_eval import prompts
from assay.rubric_eval.nearmiss import build_pair
from assay.rubric_eval.perturb import SpanBound, rule_fallback
from assay.rubric_eval.released import load_queries

RELEASED = Path(__file__).parents[1] / "data" / "seed000_released"


def bloating():
    """Query 1 of the released data ("how to reduce bloating") with its reference answer."""
    return load_queries(RELEASED / "reference_rubrics.jsonl",
                        conversations=RELEASED / "conversations.txt",
                        references=RELEASED / "reference_responses.jsonl", skipped={})["1"]


async def build(serve, tmp_path, reply, **kwargs):
    server = await serve(stages={prompts.PERTURB: reply})
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, CallStore.open(tmp_path / "calls.sqlite"))
        return await build_pair(caller, bloating(), **kwargs)


async def test_the_stored_candidate_is_the_reference_with_the_span_replaced(serve, tmp_path):
    query = bloating()
    before, after = "simethicone, activated charcoal", "simethicone, aspirin"
    # the model's own text differs from the reference in its whitespace (it passes the
    # whitespace-normalised check); what is stored is built from the reference
    loose = " ".join(query.reference.replace(before, after).split())
    pair = await build(serve, tmp_path, {"edit_span_before": before, "edit_span_after": after,
                                         "perturbed_response": loose, "error_type": "fact_swap"})
    assert pair.method == "llm"
    assert pair.candidate == query.reference.replace(before, after, 1) != loose


async def test_a_span_that_is_the_whole_answer_is_rejected(serve, tmp_path):
    query = bloating()
    one_line = "Drink water and rest."
    pair = await build(serve, tmp_path, {"edit_span_before": query.reference,
                                         "edit_span_after": one_line,
                                         "perturbed_response": one_line})
    assert pair.method == "rule" and pair.candidate != one_line
    assert len(pair.edit_span_before) <= 160


async def test_the_span_bound_is_configurable(serve, tmp_path):
    before, after = "simethicone, activated charcoal", "simethicone, aspirin"
    pair = await build(serve, tmp_path, {
        "edit_span_before": before, "edit_span_after": after,
        "perturbed_response": bloating().reference.replace(before, after)},
        bound=SpanBound(max_chars=10))
    assert pair.method == "rule"


def test_the_rule_fallback_leaves_percentages_and_names_alone():
    # the examples: "100%" -> "101%" and "ICD-10" -> "ICD-11" broke nothing
    text = "This works in 100% of cases (ICD-10 R10.4). Take 500 mg every 6 hours."
    edit = rule_fallback(text)
    assert (edit.before, edit.after, edit.rule) == ("500", "501", "number_bump:mg")


def test_the_rule_fallback_changes_the_targets_sentence_first():
    text = "Rest for 2 days. Give 15 mg/kg of paracetamol every 6 hours."
    edit = rule_fallback(text, target="Gives the correct paracetamol dose per kg")
    assert (edit.before, edit.rule) == ("15", "number_bump:mg/kg")
    assert edit.perturbed == "Rest for 2 days. Give 16 mg/kg of paracetamol every 6 hours."


def test_a_contraindication_flip_is_recorded_as_such():
    edit = rule_fallback("Do not sponge a child with cold water.")
    assert (edit.after, edit.error_type, edit.rule) == ("Do", "modality_flip", "negation_flip")


async def test_the_rule_that_fired_is_stored_with_the_pair(serve, tmp_path):
    pair = await build(serve, tmp_path, {"edit_span_before": "x", "edit_span_after": "y",
                                         "perturbed_response": "not an edit"})
    assert pair.method == "rule" and pair.rule in ("modal_flip", "negation_flip")
    assert pair.candidate.replace(pair.edit_span_after, pair.edit_span_before, 1) == (
        bloating().reference)
