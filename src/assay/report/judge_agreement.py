"""Per-criterion agreement between a run's judges, as a reader can take it in.

A HealthBench run has thousands of distinct criteria, most of them rated on two or three
units (item × criterion): a table of each, drawn up front, was a page of 229,506 px of figures
that mean little. The report lists the criteria with at least :data:`MIN_UNITS` units, the
most units first (their figures are :func:`assay.metrics.inter_judge.inter_judge`'s own, which
computes no figure of the small criteria but their share of the pooled ones), and pools the
others into one row, whose figures are the same function's pooled ones over those criteria's
units alone; the page draws the table when it is opened.

Example:
    >>> from assay.report.compact import JudgeVotes
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> votes = JudgeVotes()
    >>> for i in range(12):
    ...     criteria = [Criterion(id=c, text=c) for c in ["big", *([f"small{i}"] if i < 2 else [])]]
    ...     votes.add(f"q{i}", criteria, [
    ...         Verdict(item_id=f"q{i}", criterion_id=c.id, judge=j, verdict=v)
    ...         for c in criteria for j, v in (("a", "MET"), ("b", "MET" if i % 4 or c.id != "big" else "UNMET"))])
    >>> table = judge_criteria(votes.reliability(min_units=5), votes, min_units=5)
    >>> [(r.criterion_id, r.figures.n_units) for r in table.rows], table.pooled_criteria
    ([('big', 12)], 2)
    >>> table.pooled.n_units, table.pooled.percent_agreement.value
    (2, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.metrics.inter_judge import CriterionReliability, InterJudgeReliability, inter_judge
from assay.report.compact import JudgeVotes

MIN_UNITS = 10
"""Criteria rated on fewer units are pooled: an α on a handful of units is mostly noise."""


@dataclass(frozen=True)
class JudgeCriterion:
    criterion_id: str
    figures: CriterionReliability


@dataclass
class JudgeCriteria:
    """The criteria listed (most units first) and the pool of the others."""

    min_units: int
    rows: list[JudgeCriterion] = field(default_factory=list)
    pooled: CriterionReliability | None = None
    """The pooled figures of the criteria under ``min_units`` units (None: there are none)."""
    pooled_criteria: int = 0


def judge_criteria(reliability: InterJudgeReliability, votes: JudgeVotes, *,
                   min_units: int = MIN_UNITS, seed: int = 0,
                   n_resamples: int = 1000) -> JudgeCriteria:
    """``reliability``'s per-criterion figures as the report lists them; ``votes``: the votes
    it was computed from, whose criteria under ``min_units`` units are pooled (the pooled
    figures over those criteria's units alone, computed over the verdict values)."""
    listed = sorted(((cid, r) for cid, r in reliability.per_criterion.items()
                     if r.n_units >= min_units), key=lambda pair: (-pair[1].n_units, pair[0]))
    small = {cid for cid, units in votes.votes.units().items() if units < min_units}
    table = JudgeCriteria(min_units, [JudgeCriterion(cid, r) for cid, r in listed],
                          pooled_criteria=len(small))
    if small:
        pool = (v for v in votes.votes if v.criterion_id in small)  # streamed, not kept
        pooled = inter_judge(pool, votes.infos, seed=seed, n_resamples=n_resamples,
                             min_units=min_units)  # none of them: no per-criterion figure
        table.pooled = CriterionReliability(
            n_units=pooled.n_units, alpha=pooled.alpha_nominal, alpha_level="nominal",
            fleiss_kappa=pooled.fleiss_kappa, ac1=pooled.ac1,
            percent_agreement=pooled.percent_agreement)
    return table
