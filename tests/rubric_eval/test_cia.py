"""CIA: gold atomisation clean-up and fallback, and the verifier's YES/NO rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.jobs import CallStore, StageCaller, StageError
from assay.judges import make_judge
from assay.rubric_eval import prompts
from assay.rubric_eval.cia import (
    _NEGATIVE_MARKERS,
    atomize,
    coverage_decision,
    fallback_points,
    infer_polarity,
    sanitize_points,
    verify_query,
)
from assay.rubric_eval.released import RubricEntry
from assay.testing import Faults

GOLD = [RubricEntry(criterion="Advises hydration.", axis="completeness", points=6),
        RubricEntry(criterion="Recommends steroids without assessment.", axis="accuracy",
                    points=-8)]


def test_sanitize_fixes_indices_axes_and_polarity_and_drops_duplicates():
    raw = [{"text": " Advise oral fluids ", "source_criterion_index": 1},
           {"text": "advise ORAL   fluids"},  # duplicate once case and spaces are ignored
           {"text": "Steroids are not started without assessment", "source_criterion_index": 2,
            "axis": "", "polarity": "negative"},  # invalid polarity → inferred from points < 0
           {"text": "Mentions rest", "source_criterion_index": 7, "polarity": "positive_requirement"},
           {"text": "   "}, "not a point"]
    points = sanitize_points("q1", raw, GOLD)
    assert [(p.ga_id, p.text, p.source_criterion_index, p.axis, p.polarity) for p in points] == [
        ("q1_1", "Advise oral fluids", 1, "completeness", "positive_requirement"),
        ("q1_2", "Steroids are not started without assessment", 2, "accuracy",
         "negative_constraint"),
        ("q1_3", "Mentions rest", 1, "completeness", "positive_requirement")]


def test_polarity_is_negative_for_negative_points_or_prohibiting_words():
    assert infer_polarity("Mentions dose", -1) == "negative_constraint"
    assert infer_polarity("Avoids jargon", 5) == "negative_constraint"
    assert infer_polarity("Never mentions price", None) == "negative_constraint"
    assert infer_polarity("Mentions dose", 5) == "positive_requirement"


def test_the_fallback_makes_one_point_per_criterion():
    points = fallback_points("7", GOLD)
    assert [(p.ga_id, p.text, p.polarity) for p in points] == [
        ("7_1", "Advises hydration.", "positive_requirement"),
        ("7_2", "Recommends steroids without assessment.", "negative_constraint")]


def test_yes_needs_a_support_index_within_the_criteria():
    assert coverage_decision({"decision": "YES", "support_index": 2}, 3) == (True, 2)
    assert coverage_decision({"decision": "yes", "support_index": 3}, 3) == (True, 3)
    assert coverage_decision({"decision": "YES", "support_index": 4}, 3) == (False, None)
    assert coverage_decision({"decision": "YES", "support_index": 0}, 3) == (False, None)
    assert coverage_decision({"decision": "YES", "support_index": None}, 3) == (False, None)
    assert coverage_decision({"decision": "YES", "support_index": 1.5}, 3) == (False, None)
    assert coverage_decision({"decision": "NO", "support_index": 1}, 3) == (False, None)


async def test_a_refusing_atomiser_falls_back_to_the_criteria(serve, tmp_path):
    server = await serve(stages={prompts.ATOMIZE: {"gold_atomic_points": []}},
                         faults=Faults(script=["refusal"]))
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        result = await atomize(StageCaller(judge, store), "q1", GOLD)
    assert "atomiser failed" in result["fallback"] and "refusal" in result["fallback"]
    assert [p["text"] for p in result["points"]] == [e.criterion for e in GOLD]


async def test_an_unparsed_atomiser_reply_fails_its_query_before_the_final_pass(serve,
                                                                               tmp_path):
    """The job's first pass: the query fails, and the final pass asks it once more."""
    server = await serve(stages={prompts.ATOMIZE: "never json"})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        with pytest.raises(StageError, match="stage 'cia_atomize': unparseable"):
            await atomize(StageCaller(judge, store), "q1", GOLD)


async def test_a_reply_unparsed_in_the_final_pass_takes_the_authors_fallback(serve, tmp_path):
    """Issue 40, point 5: a reply that still does not parse after the re-asks and the final pass
    is the model's deterministic answer, not a fault: one point per criterion, recorded."""
    server = await serve(stages={prompts.ATOMIZE: "never json"})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        result = await atomize(StageCaller(judge, store), "q1", GOLD, final=True)
    assert result["fallback_kind"] == "unreadable"
    assert result["fallback"].startswith("the atomiser's reply did not parse after the re-asks "
                                         "and a final pass")
    assert len(server.requests) == 3  # the reply and its two re-asks
    [call] = store.calls("atoms:q1")  # the failed call stays in the trace
    assert not call.ok and "unparseable" in call.failure
    # the fallback as seed 000's spec states it and the authors' code does it (quoted, with
    # its source, in tests/data/papers/seed000_atomiser_fallback.json): one point per
    # criterion, in order, negative for negative points or a prohibiting word
    source = json.loads((Path(__file__).parents[1] / "data" / "papers"
                         / "seed000_atomiser_fallback.json").read_text("utf-8"))
    assert "If the LLM fails, each criterion becomes one point" in source["spec"]["text"]
    assert list(_NEGATIVE_MARKERS) == source["code"]["negative_markers"]
    assert [(p["ga_id"], p["text"], p["source_criterion_index"], p["axis"], p["polarity"])
            for p in result["points"]] == [
        ("q1_1", "Advises hydration.", 1, "completeness", "positive_requirement"),
        ("q1_2", "Recommends steroids without assessment.", 2, "accuracy",
         "negative_constraint")]  # points < 0
    never = fallback_points("9", [RubricEntry(criterion="Never suggests aspirin.", points=4)])
    assert [(p.axis, p.polarity) for p in never] == [("unknown", "negative_constraint")]


@pytest.mark.parametrize("fault", ["server_error", "rate_limit", "timeout"])
async def test_a_transport_fault_never_takes_the_fallback_even_in_the_final_pass(
        serve, tmp_path, fault):
    server = await serve(stages={prompts.ATOMIZE: {"gold_atomic_points": []}},
                         faults=Faults(script=[fault] * 3, retry_after=0.0, hang_s=5.0))
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}", timeout_s=0.2,
                          retry={"max_retries": 1, "base_delay_s": 0.0}) as judge:
        with pytest.raises(StageError) as failed:
            await atomize(StageCaller(judge, store), "q1", GOLD, final=True)
    assert failed.value.kind.value == fault
    assert not failed.value.unreadable


async def test_the_verifier_sees_the_numbered_criteria_and_one_gold_point(serve, tmp_path):
    server = await serve(stages={prompts.VERIFY: {"decision": "YES", "support_index": 2,
                                                  "reason": "explicit"}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    points = fallback_points("q1", GOLD[:1])
    candidate = [RubricEntry(criterion="Mentions rest", points=3),
                 RubricEntry(criterion="Advises drinking fluids", points=5)]
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        [verdict] = await verify_query(StageCaller(judge, store), "q1", points, candidate,
                                       label="ours")
        with pytest.raises(ValueError, match="no ours rubric"):  # left out by the caller
            await verify_query(StageCaller(judge, store), "q1", points, None, label="ours")
    text = server.requests[0]["body"]["messages"][0]["content"]
    assert "Premise (Generated Rubric criteria list, knowledge source):\n1. Mentions rest\n" \
           "2. Advises drinking fluids\n\nHypothesis (single Gold Atomic Point):\n" \
           "Advises hydration.\n" in text
    assert verdict["verdict"] == "MET" and "support 2: Advises drinking fluids" in verdict[
        "explanation"]
    assert len(server.requests) == 1  # no call without a rubric
