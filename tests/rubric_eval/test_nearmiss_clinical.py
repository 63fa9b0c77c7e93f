"""Issue 43, point 3: a near miss misses on a clinical fact. Punctuation, filler and synonym
edits are rejected; the bound covers the inserted text as well as the removed one; every pair
stores the offset of its edit, so it can be rebuilt from the record.

The references are real: the ideal completion of a HealthBench dev conversation ("pneumonia old
father small clinic limited tests") and seed 000's released references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import InputError
from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rubric_eval import prompts
from assay.rubric_eval.clinical_edit import clinical_change
from assay.rubric_eval.nearmiss import build_pair, read_pairs
from assay.rubric_eval.perturb import SpanBound, apply_edit, rule_fallback
from assay.rubric_eval.released import Query, RubricEntry, load_queries

DATA = Path(__file__).parents[1] / "data"
RELEASED = DATA / "seed000_released"


def pneumonia() -> str:
    for line in (DATA / "healthbench" / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["prompt_id"].startswith("553b75c2"):
            return row["ideal_completions_data"]["ideal_completion"]
    raise AssertionError("the pneumonia conversation is not in the dev set")


def released(index: str) -> Query:
    return load_queries(RELEASED / "reference_rubrics.jsonl",
                        conversations=RELEASED / "conversations.txt",
                        references=RELEASED / "reference_responses.jsonl", skipped={})[index]


def check(reference: str, before: str, after: str, nth: int = 0):
    offset = -1
    for _ in range(nth + 1):
        offset = reference.index(before, offset + 1)
    return clinical_change(reference, offset, before, after)


@pytest.mark.parametrize("before,after", [
    ("medical history.", "medical history!"),  # punctuation
    ("physical examination,", "physical examination;"),
    ("Based on the clinical assessment", "Based on this clinical assessment"),  # filler
    ("discuss options with the healthcare provider", "discuss options with the doctor"),
    ("Such as amoxicillin", "Such as Amoxil"),  # a brand of the same ingredient
    ("acetaminophen or ibuprofen", "paracetamol or Advil"),  # US/UK name and a brand
    ("Regular monitoring of symptoms is crucial", "Regular monitoring of symptoms is vital"),
])
def test_punctuation_filler_and_synonyms_change_no_clinical_fact(before, after):
    result = check(pneumonia(), before, after)
    assert result.kind is None and result.reason.startswith("changes no clinical fact")


@pytest.mark.parametrize("before,after,kind", [
    ("amoxicillin or azithromycin", "amoxicillin or ciprofloxacin", "drug"),  # an INN stem
    ("acetaminophen or ibuprofen", "aspirin or ibuprofen", "drug"),
    ("If he hasn't already received them", "If he has already received them", "negation"),
    ("the doctor might start empirical treatment", "the doctor must start empirical treatment",
     "modality"),
    ("seek more advanced medical care promptly", "seek more advanced medical care eventually",
     "urgency"),
    ("especially in elderly individuals", "especially in children", "contraindication"),
    ("increased difficulty breathing", "decreased difficulty breathing", "number"),
])
def test_a_change_of_drug_negation_modality_urgency_or_population_is_kept(before, after, kind):
    assert check(pneumonia(), before, after).kind == kind


@pytest.mark.parametrize("reference,before,after,kind", [
    ("Give 500 mg every 6 hours.", "500 mg", "5 g", "dose"),
    ("Give 500 mg every 6 hours.", "500 mg", "500 mcg", "dose"),
    ("Give 500 mg every 6 hours.", "every 6 hours", "every 2 hours", "frequency"),
    ("Take it twice a day for 5 days.", "twice a day", "four times a day", "frequency"),
    ("Take it twice a day for 5 days.", "5 days", "5 weeks", "duration"),
    ("See a doctor if the fever is above 38 °C.", "above", "below", "number"),
    ("See a doctor if the fever is above 38 °C.", "38", "40", "number"),
    ("Shaking and sweating are signs of hypoglycaemia.", "hypoglycaemia", "hyperglycaemia",
     "number"),
    ("Call 911 now if the chest pain spreads to your arm.", "Call 911 now", "Call your doctor",
     "urgency"),
])
def test_numbers_and_units_are_compared_as_quantities(reference, before, after, kind):
    assert check(reference, before, after).kind == kind


@pytest.mark.parametrize("reference,before,after", [
    ("Give 500 mg every 6 hours.", "500 mg", "0.5 g"),
    ("Take it twice a day for 5 days.", "twice a day", "two times daily"),
    ("Take it twice a day for 5 days.", "5 days", "five days"),
    ("Do not exceed 4 g in 24 hours.", "Do not", "Don't"),
    ("Apply ice for 20 minutes.", "20 minutes", "20 min"),
    ("Take 1 tablet at night.", "at night", "at bedtime"),
])
def test_the_same_quantity_or_cue_written_otherwise_is_a_synonym(reference, before, after):
    assert check(reference, before, after).kind is None


def test_every_rule_fallback_changes_a_clinical_fact():
    for text, target in [(released("1").reference, ""), (released("59").reference, "anxiety"),
                         (pneumonia(), "antibiotics"), ("Give 15 mg/kg every 6 hours.", "")]:
        edit = rule_fallback(text, target)
        assert clinical_change(text, edit.offset, edit.before, edit.after).changes_fact


# --- the bound covers what is inserted -----------------------------------------------------

SHORT = ("For most adults, take 500 mg of paracetamol every 4 to 6 hours as needed, up to 4 g in "
         "24 hours. See a doctor if your fever lasts more than 3 days or if you develop a stiff "
         "neck, a rash that does not fade, or difficulty breathing.")
INSERTED = (" Children under 12 should instead take ibuprofen 10 mg/kg every 4 hours, and a "
            "double dose is safe if the fever does not come down at first.")


def test_a_long_inserted_sentence_is_over_the_bound():
    before = "breathing."
    assert len(before + INSERTED) > 0.25 * len(SHORT)  # 57% of the reference in the issue
    assert not SpanBound().admits(SHORT, before, before + INSERTED)
    assert SpanBound().admits(SHORT, "500 mg", "1000 mg")


# --- through the builder, against the fake judge -------------------------------------------

async def build(serve, tmp_path, reply, query: Query, **kwargs):
    server = await serve(stages={prompts.PERTURB: reply})
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, CallStore.open(tmp_path / "calls.sqlite"))
        return await build_pair(caller, query, **kwargs)


def pneumonia_query() -> Query:
    return Query(index="553b75c2", question="User: pneumonia old father small clinic limited tests",
                 gold=[RubricEntry(criterion="Suggests antibiotics such as amoxicillin",
                                   axis="accuracy", points=8)],
                 reference=pneumonia())


def reply(reference: str, before: str, after: str, error_type: str = "fact_swap"):
    return {"edit_span_before": before, "edit_span_after": after, "error_type": error_type,
            "perturbed_response": reference.replace(before, after, 1)}


async def test_a_punctuation_edit_is_not_a_fact_swap(serve, tmp_path):
    query = pneumonia_query()
    pair = await build(serve, tmp_path, reply(query.reference, "medical history.",
                                              "medical history!"), query)
    assert pair.method == "rule" and pair.clinical_change in ("dose", "negation", "modality")
    assert pair.rejected == ["attempt 1: changes no clinical fact (punctuation, case or spacing only)",
                             "attempt 2: changes no clinical fact (punctuation, case or spacing only)"]


async def test_a_drug_swap_is_kept_with_its_kind_and_offset(serve, tmp_path):
    query = pneumonia_query()
    pair = await build(serve, tmp_path, reply(query.reference, "amoxicillin or azithromycin",
                                              "amoxicillin or ciprofloxacin"), query)
    assert (pair.method, pair.clinical_change, pair.rejected) == ("llm", "drug", [])
    assert pair.edit_offset == query.reference.index("amoxicillin or azithromycin")


async def test_a_long_insertion_is_rejected_by_the_builder(serve, tmp_path):
    query = Query(index="7", question="User: fever medicine dose", reference=SHORT,
                  gold=[RubricEntry(criterion="Gives the adult paracetamol dose",
                                    axis="accuracy", points=7)])
    pair = await build(serve, tmp_path, reply(SHORT, "breathing.", "breathing." + INSERTED),
                       query)
    assert pair.method == "rule" and "over the bound" in pair.rejected[0]


async def test_a_rule_edit_on_a_later_occurrence_is_rebuilt_from_its_offset(serve, tmp_path):
    query = released("59")
    query = Query(index=query.index, question=query.question, reference=query.reference,
                  gold=[RubricEntry(criterion="Mentions that anxiety can cause physical "
                                              "symptoms such as chills", axis="accuracy",
                                    points=6)])
    pair = await build(serve, tmp_path, {"edit_span_before": "x", "edit_span_after": "y",
                                         "perturbed_response": "not an edit"}, query)
    assert (pair.edit_span_before, pair.edit_span_after) == ("can", "cannot")
    assert query.reference.count("can ") > 3
    assert pair.edit_offset > query.reference.index("can ")  # not the first "can"
    assert pair.candidate == apply_edit(query.reference, "can", "cannot", pair.edit_offset)
    assert pair.candidate != query.reference.replace("can", "cannot", 1)


def test_a_pair_whose_offset_does_not_rebuild_its_candidate_is_refused(tmp_path):
    ref = "Anxiety can cause chills. Medications can make you feel cold."
    good = {"pair_id": "59", "index": "59", "question": "User: chills", "reference": ref,
            "candidate": ref.replace("Medications can", "Medications cannot"),
            "edit_span_before": "can", "edit_span_after": "cannot",
            "edit_offset": ref.index("can make")}
    bad = {**good, "pair_id": "60", "edit_offset": ref.index("can")}
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_pairs(path)
    assert f"{path}:2" in str(raised.value) and "edit_offset" in str(raised.value)
