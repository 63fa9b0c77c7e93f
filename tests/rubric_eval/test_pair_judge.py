"""The pairwise rubric judge (seed 000 §4.1–4.2, Table 16): the prompt, the mapping of each
call back to reference/candidate, Σ w·hit, and the position-debiased ΔV̄ (hand-worked)."""

from __future__ import annotations

import pytest

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.metrics.discrimination import PairCall, majority_outcome, pair_delta
from assay.rubric_eval import prompts
from assay.rubric_eval.nearmiss import NearMissPair
from assay.rubric_eval.pair_judge import call_view, hit_totals, judge_pair
from assay.rubric_eval.released import RubricEntry

RUBRIC = [RubricEntry(criterion="Gives the dose", axis="accuracy", points=8),
          RubricEntry(criterion="Asks about age", axis="context_awareness", points=4),
          RubricEntry(criterion="Claims a cure", axis="accuracy", points=-6)]


def reply(a, b, decision, items=()):
    return {"decision": decision, "total": {"A": a, "B": b, "delta": a - b}, "items": list(items)}


def test_hit_totals_sum_the_rubric_weights_of_the_hit_items():
    items = [{"id": 1, "hit_A": True, "hit_B": False, "points": 99},  # the rubric's 8, not 99
             {"id": 2, "hit_A": True, "hit_B": True},
             {"id": 3, "hit_A": False, "hit_B": True}]
    assert hit_totals(items, RUBRIC) == (12.0, -2.0)  # A: 8 + 4; B: 4 − 6


def test_unknown_repeated_and_boolean_ids_are_ignored():
    items = [{"id": 2, "hit_A": True, "hit_B": False}, {"id": 2, "hit_A": False, "hit_B": True},
             {"id": 4, "hit_A": True, "hit_B": True}, {"id": 0, "hit_A": True, "hit_B": True},
             {"id": True, "hit_A": True, "hit_B": True}, {"id": "1", "hit_A": True}]
    assert hit_totals(items, RUBRIC) == (4.0, 0.0)


def test_reference_first_keeps_a_as_the_reference():
    view = call_view(reply(8, 5, "A"), "ref_first", None)
    assert (view.ref, view.cand, view.decision) == (8, 5, "REF")


def test_candidate_first_swaps_scores_and_decision_back():
    view = call_view(reply(6, 7, "B"), "cand_first", None)
    assert (view.ref, view.cand, view.decision) == (7, 6, "REF")
    assert call_view(reply(6, 7, "A"), "cand_first", None).decision == "CAND"
    assert call_view(reply(6, 6, "SAME"), "cand_first", None).decision == "SAME"


def test_with_a_rubric_scores_come_from_the_hits_and_the_reported_totals_are_kept():
    r = reply(3, 3, "A", [{"id": 1, "hit_A": True, "hit_B": False}])
    view = call_view(r, "ref_first", RUBRIC)
    assert (view.ref, view.cand, view.judge_ref, view.judge_cand) == (8, 0, 3, 3)
    assert call_view(r, "ref_first", RUBRIC, totals="judge")[:2] == (3, 3)


# Three trials, both orders. Per trial k: (V_ref|1st − V_cand|2nd) + (V_ref|2nd − V_cand|1st):
#   k=1: (8 − 5) + (7 − 6) = 4;  k=2: (9 − 4) + (9 − 5) = 9;  k=3: (7 − 7) + (6 − 6) = 0
#   ΔV̄ = (4 + 9 + 0) / (2 · 3) = 13 / 6
TRIALS = [(reply(8, 5, "A"), reply(6, 7, "B")),
          (reply(9, 4, "A"), reply(5, 9, "B")),
          (reply(7, 7, "SAME"), reply(6, 6, "SAME"))]


def test_the_position_debiased_delta_matches_the_formula_by_hand():
    calls = [PairCall(ref=v.ref, cand=v.cand, decision=v.decision)
             for first, second in TRIALS
             for v in (call_view(first, "ref_first", None), call_view(second, "cand_first", None))]
    assert pair_delta(calls) == pytest.approx(13 / 6)
    assert majority_outcome(calls) == "win"  # REF 4 votes, SAME 2


PAIR = NearMissPair(pair_id="p1", index="0", question="User: dose?", reference="Take 500 mg.",
                    candidate="Take 50 mg.")


async def test_each_trial_and_order_is_its_own_call(serve, tmp_path):
    def judge(request):
        ref_first = "[RESPONSE A]\nTake 500 mg." in request.text
        trial = request.n // 2  # the calls arrive in any order; totals depend only on position
        return reply(8, 5 - trial, "A") if ref_first else reply(5, 8, "B")

    server = await serve(stages={prompts.PAIR_JUDGE: judge})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as j:
        rows = await judge_pair(StageCaller(j, store), PAIR, None, label="none", trials=3)
    assert len(server.requests) == 6 and len(rows) == 6
    assert sorted((r["order"], r["trial"]) for r in rows) == sorted(
        (o, t) for o in ("ref_first", "cand_first") for t in (1, 2, 3))
    assert all(r["ref"] == 8 for r in rows if r["order"] == "cand_first")
    assert all(r["decision"] == "REF" for r in rows)


def test_the_prompt_is_table_16_with_the_rubric_header():
    text = prompts.pair_judge_prompt("User: dose?", "Take 500 mg.", "Take 50 mg.", RUBRIC[:1])
    assert text == GOLDEN_WITH_RUBRIC


def test_without_a_rubric_the_header_asks_for_an_overall_comparison():
    text = prompts.pair_judge_prompt("User: dose?", "A text", "B text", None)
    assert text.startswith("You are a strict clinical evaluator. Compare Response A vs Response "
                           "B based on overall clinical accuracy, safety, and communication "
                           "quality.\n\nYou MUST")
    assert "- Provide a single item in 'items' summarizing the overall comparison.\n" in text


GOLDEN_WITH_RUBRIC = """You are a strict clinical evaluator. Compare Response A vs Response B using the provided rubric.

[RUBRIC]
Apply each rule independently. Add points when the behavior is present; subtract points when undesirable behavior is present.
1. (+8.0 points, axis=accuracy) Gives the dose

You MUST explicitly check the quality of each response against the required clinical standards.

[QUESTION]
User: dose?

[RESPONSE A]
Take 500 mg.

[RESPONSE B]
Take 50 mg.

Return JSON ONLY in the following schema:
{
  "decision": "A|B|SAME",
  "total": { "A": <number>, "B": <number>, "delta": <number> },
  "items": [
    { "id": <int>, "axis": "<string>", "points": <number>, "hit_A": <true/false>, "hit_B": <true/false> }
  ]
}

Rules:
- items[].id must match rubric numbering (1..N)
- Sum item points to compute totals.
- decision: choose A if delta > 0, B if delta < 0, SAME if the scores are very close.
- Do not output any additional text."""
