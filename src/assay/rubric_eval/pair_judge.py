"""The pairwise rubric judge (seed 000 §4.1–4.2, Table 16) on near-miss pairs.

Each pair is judged ``trials`` times in both orders (reference first, then candidate first):
2N calls of the ``pair_judge`` stage, each trial a separate call (its own cache entry). Every
call is mapped back to the reference/candidate view by :func:`call_view`:

* scores: with a rubric, V(X) = Σ w_j · hit_j recomputed from the judge's hit flags and the
  rubric's own weights (``totals="hits"``; each item id 1..N counted once, unknown ids ignored),
  or the totals the judge reported (``totals="judge"``, what the authors' code uses); without a
  rubric, always the judge's totals;
* decision: A/B/SAME turned into REF/CAND/SAME by the order.

The position-debiased ΔV̄ of §4.2 is then the mean of (ref − cand) over the 2N calls, which
:func:`assay.metrics.discrimination.discrimination` computes, with win/tie/loss, μΔ and the
AUROCs; nothing is re-implemented here.

Example:
    >>> from assay.rubric_eval.released import RubricEntry
    >>> rubric = [RubricEntry(criterion="a", points=5), RubricEntry(criterion="b", points=-3)]
    >>> reply = {"decision": "B", "total": {"A": 2, "B": 5},
    ...          "items": [{"id": 1, "hit_A": False, "hit_B": True},
    ...                    {"id": 2, "hit_A": True, "hit_B": False}]}
    >>> call_view(reply, "cand_first", rubric)
    CallView(ref=5.0, cand=-3.0, decision='REF', judge_ref=5.0, judge_cand=2.0)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from assay.jobs import StageCaller, messages_of
from assay.rubric_eval import prompts
from assay.rubric_eval.nearmiss import NearMissPair
from assay.rubric_eval.released import RubricEntry

Order = Literal["ref_first", "cand_first"]
Totals = Literal["hits", "judge"]
_BY_POSITION = {"ref_first": {"A": "REF", "B": "CAND", "SAME": "SAME"},
                "cand_first": {"A": "CAND", "B": "REF", "SAME": "SAME"}}


class CallView(NamedTuple):
    ref: float
    cand: float
    decision: str
    judge_ref: float  # the totals the judge reported, for the mismatch check
    judge_cand: float


def hit_totals(items: Sequence[dict[str, Any]], rubric: Sequence[RubricEntry]) -> tuple[float, float]:
    """(V_A, V_B) = Σ w_j over the rubric items the judge marked hit, for A and for B."""
    seen: set[int] = set()
    total_a = total_b = 0.0
    for item in items:
        number = item.get("id")
        if isinstance(number, bool) or not isinstance(number, int) or number in seen \
                or not 1 <= number <= len(rubric):
            continue
        seen.add(number)
        weight = rubric[number - 1].points
        total_a += weight if item.get("hit_A") is True else 0.0
        total_b += weight if item.get("hit_B") is True else 0.0
    return total_a, total_b


def call_view(reply: dict[str, Any], order: Order, rubric: Sequence[RubricEntry] | None,
              totals: Totals = "hits") -> CallView:
    """One judge reply in the reference/candidate view (see the module docstring)."""
    reported_a, reported_b = float(reply["total"]["A"]), float(reply["total"]["B"])
    if rubric and totals == "hits":
        score_a, score_b = hit_totals(reply.get("items") or [], rubric)
    else:
        score_a, score_b = reported_a, reported_b
    decision = _BY_POSITION[order][str(reply["decision"]).upper()]
    if order == "ref_first":
        return CallView(score_a, score_b, decision, reported_a, reported_b)
    return CallView(score_b, score_a, decision, reported_b, reported_a)


async def judge_pair(
    caller: StageCaller, pair: NearMissPair, rubric: Sequence[RubricEntry] | None, *,
    label: str, trials: int = 3, swap: bool = True, totals: Totals = "hits",
) -> list[dict[str, Any]]:
    """The 2N (or N without ``swap``) judged calls of one pair, as JSON-able records."""
    orders: list[Order] = ["ref_first", "cand_first"] if swap else ["ref_first"]

    async def one(order: Order, trial: int) -> dict[str, Any]:
        a, b = ((pair.reference, pair.candidate) if order == "ref_first"
                else (pair.candidate, pair.reference))
        prompt = prompts.pair_judge_prompt(pair.question, a, b, rubric)
        reply = await caller.ask(prompts.PAIR_JUDGE, messages_of(None, prompt),
                                 prompts.PAIR_JUDGE_SCHEMA, item_id=f"{label}:{pair.pair_id}",
                                 template_version=f"{prompts.VERSION}/trial{trial}")
        view = call_view(reply, order, rubric, totals)
        return {"pair_id": pair.pair_id, "order": order, "trial": trial, "ref": view.ref,
                "cand": view.cand, "decision": view.decision, "judge_ref": view.judge_ref,
                "judge_cand": view.judge_cand,
                "totals_mismatch": (view.ref, view.cand) != (view.judge_ref, view.judge_cand)}

    return list(await asyncio.gather(*(one(order, trial) for order in orders
                                       for trial in range(1, trials + 1))))
