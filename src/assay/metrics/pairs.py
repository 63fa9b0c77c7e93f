"""Near-miss pairs for discrimination: from a pair-call file, or from two verdict sets.

Two ways to get the pairs that :func:`~assay.metrics.discrimination.discrimination` takes:

* **Two verdict sets over the same items** (:func:`pairs_from_verdicts`): the good responses
  graded in one run, the degraded ones in another, with the same item ids. Each item is a
  pair; each judge that scored the item in both sets is one call (ref = its score of the good
  response, cand = its score of the degraded one, both from the scoring core), so an ensemble
  or repeated trials under different judge names vote on win/tie/loss.
* **A pair-call JSONL file** (:func:`read_pair_calls`), e.g. from a pairwise judge that scores
  both responses in one call (seed 000): one line per call, several lines per pair::

      {"pair_id": "q1", "ref": 8, "cand": 5, "decision": "REF", "label": true}

  ``decision`` (REF / CAND / SAME) and ``label`` (is the reference truly the better response?)
  are optional; ``label`` is given for every pair or for none.

:func:`discrimination_summary` then reports the discrimination figures and the stress test
(Detection Rate, Mean Penalty) on each pair's mean ref and cand scores.

Example:
    >>> from assay.verdict import Verdict
    >>> good = [Verdict(item_id=i, criterion_id="c", decision="MET") for i in "ab"]
    >>> bad = [Verdict(item_id="a", criterion_id="c", decision="UNMET"),
    ...        Verdict(item_id="b", criterion_id="c", decision="MET")]
    >>> s = discrimination_summary(pairs_from_verdicts(good, bad), n_bootstrap=50)
    >>> s.pair_ids, s.report.deltas, s.stress.detection_rate.value
    (['a', 'b'], [1.0, 0.0], 50.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InputError, Issue
from assay.metrics.discrimination import (
    DiscriminationReport,
    PairCall,
    PairDecision,
    StressTestReport,
    discrimination,
    stress_test,
)
from assay.metrics.scores import item_scores
from assay.metrics.sources import Rubrics, by_judge, inferred_rubrics
from assay.verdict import Verdict


class NearMissPairs(BaseModel):
    """Pairs ready for :func:`discrimination`: ids, each pair's calls, optional true labels."""

    model_config = ConfigDict(frozen=True)

    pair_ids: list[str]
    calls: list[list[PairCall]]
    true_labels: list[bool] | None = None
    unpaired: list[str] = Field(default_factory=list)  # items scored on one side only
    judges: list[str] = Field(default_factory=list)


class DiscriminationSummary(BaseModel):
    """Everything ``assay discrimination`` reports."""

    model_config = ConfigDict(frozen=True)

    pair_ids: list[str]
    n_calls: list[int]  # per pair
    mean_ref: list[float]  # per pair, over its calls
    mean_cand: list[float]
    true_labels: list[bool] | None
    unpaired: list[str]
    judges: list[str]
    report: DiscriminationReport
    stress: StressTestReport


class _CallLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pair_id: str = Field(min_length=1)
    ref: float
    cand: float
    decision: PairDecision | None = None
    label: bool | None = None


def read_pair_calls(path: str | Path) -> NearMissPairs:
    """Pairs from a pair-call JSONL file; every bad line is reported as ``file:line: field``."""
    from assay.io.jsonl import iter_models

    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such pair-call file"))
    name = str(path)
    calls: dict[str, list[PairCall]] = {}
    labels: dict[str, tuple[bool | None, int]] = {}  # pair → (label, first line)
    issues: list[Issue] = []
    for line, row in iter_models(path, _CallLine, issues):
        calls.setdefault(row.pair_id, []).append(
            PairCall(ref=row.ref, cand=row.cand, decision=row.decision))
        label, first = labels.setdefault(row.pair_id, (row.label, line))
        if label != row.label:
            issues.append(Issue(name, line, "label", f"pair {row.pair_id!r} has label {label} "
                                f"on line {first} but {row.label} here"))
    given = {pid for pid, (label, _) in labels.items() if label is not None}
    if given and len(given) < len(labels):
        missing = sorted(set(labels) - given)
        issues.extend(Issue(name, labels[pid][1], "label",
                            "give label on every pair or on none") for pid in missing)
    if not calls and not issues:
        issues.append(Issue(name, None, None, "no pair calls in the file"))
    if issues:
        raise InputError(issues)
    ids = list(calls)
    return NearMissPairs(
        pair_ids=ids, calls=[calls[i] for i in ids],
        true_labels=[bool(labels[i][0]) for i in ids] if given else None)


def pairs_from_verdicts(
    good: Sequence[Verdict],
    degraded: Sequence[Verdict],
    rubrics: Rubrics | None = None,
    *,
    formula: str = "autorubric",
    abstention: Any = None,
) -> NearMissPairs:
    """One pair per item scored in both sets; one call per judge that scored it in both.

    Scores come from the scoring core with ``rubrics`` (default: criteria inferred from the
    verdicts, so scores are pass rates). Items scored on one side only are listed in
    ``unpaired``. Raises :class:`InputError` when the two sets share no judge or no item.
    """
    known = rubrics if rubrics is not None else inferred_rubrics([*good, *degraded])
    good_by, bad_by = by_judge(good), by_judge(degraded)
    judges = sorted(good_by.keys() & bad_by.keys())
    if not judges:
        raise InputError(Issue(None, None, "judge", "the good and degraded verdicts share no judge "
                               f"(good: {', '.join(sorted(good_by))}; degraded: "
                               f"{', '.join(sorted(bad_by))})"))
    criteria = known.criteria_by_item({v.item_id for v in [*good, *degraded]})
    scored = {
        judge: (item_scores(criteria, good_by[judge], formula=formula, abstention=abstention),
                item_scores(criteria, bad_by[judge], formula=formula, abstention=abstention))
        for judge in judges
    }
    items = sorted({i for g, b in scored.values() for i in (*g, *b)})
    pair_ids, calls, unpaired = [], [], []
    for item in items:
        mine = [PairCall(ref=g[item], cand=b[item]) for g, b in scored.values()
                if g.get(item) is not None and b.get(item) is not None]
        if mine:
            pair_ids.append(item)
            calls.append(mine)
        else:
            unpaired.append(item)
    if not pair_ids:
        raise InputError(Issue(None, None, "item_id", "no item is scored in both the good and "
                               "the degraded verdicts: are the item ids the same?"))
    return NearMissPairs(pair_ids=pair_ids, calls=calls, unpaired=unpaired, judges=judges)


def discrimination_summary(
    pairs: NearMissPairs, *, n_bootstrap: int = 1000, seed: int = 0
) -> DiscriminationSummary:
    """Discrimination (μΔ, win/tie/loss, AUROCs) and the stress test (DR, ΔMP) of ``pairs``."""
    mean_ref = [float(np.mean([c.ref for c in calls])) for calls in pairs.calls]
    mean_cand = [float(np.mean([c.cand for c in calls])) for calls in pairs.calls]
    report = discrimination(pairs.calls, true_labels=pairs.true_labels,
                            n_bootstrap=n_bootstrap, seed=seed)
    stress = stress_test(dict(zip(pairs.pair_ids, mean_ref, strict=True)),
                         dict(zip(pairs.pair_ids, mean_cand, strict=True)))
    return DiscriminationSummary(pair_ids=pairs.pair_ids, n_calls=[len(c) for c in pairs.calls],
                                 mean_ref=mean_ref, mean_cand=mean_cand,
                                 true_labels=pairs.true_labels, unpaired=pairs.unpaired, judges=pairs.judges, report=report,
                                 stress=stress)
