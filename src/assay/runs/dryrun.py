"""``--dry-run``: how many calls, tokens and dollars a run would take, without calling anyone.

Prompt tokens are counted from the real prompts (about 4 characters per token); completion
tokens are estimated at ``reply_tokens`` per criterion judged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from assay.grading.grader import Grader
from assay.judges.pricing import CostEstimate, estimate_cost, estimate_tokens
from assay.rubric import Rubric

REPLY_TOKENS = 80


@dataclass(frozen=True)
class JudgeEstimate:
    """One judge's share of a dry run: its id and the calls, tokens and dollars it would take."""

    judge: str
    cost: CostEstimate


def estimate_run(source: Any, options: Any) -> tuple[int, list[JudgeEstimate]]:
    """A dry run of ``options`` (a :class:`~assay.runs.options.RunOptions`) over ``source``:
    the same prompts a run of the same :func:`~assay.runs.plan.plan_run` would send, counted,
    with no call."""
    from assay.runs.plan import plan_run

    plan = plan_run(source, options)
    grader = Grader(plan.grading, example_pools=plan.pools)
    return estimate(iter(source), grader, plan.judge_configs, options.rubric)


def estimate(items: Any, grader: Grader, judge_configs: list[Any], rubric: Rubric | None,
             reply_tokens: int = REPLY_TOKENS) -> tuple[int, list[JudgeEstimate]]:
    """(items planned, one estimate per judge)."""
    n_items = 0
    per_judge = {c.judge_id: [0, 0, 0] for c in judge_configs}
    for item in items:
        n_items += 1
        item_rubric = item.rubric or rubric
        if item_rubric is None:
            continue
        for config in judge_configs:
            for call in grader.plan(item, item_rubric, config.judge_id):
                counts = per_judge[config.judge_id]
                counts[0] += 1
                counts[1] += sum(estimate_tokens(m["content"]) for m in call.messages)
                counts[2] += reply_tokens * len(call.criteria)
    out = []
    for config in judge_configs:
        calls, prompt, completion = per_judge[config.judge_id]
        total = estimate_cost(config.model, prompt, completion, 1)
        out.append(JudgeEstimate(config.judge_id, replace(total, n_calls=calls)))
    return n_items, out
