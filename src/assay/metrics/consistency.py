"""How consistent a judge is with itself: the same items graded R times (``assay grade
--repeats R``), each run treated as a rater (RubricsTree §5; Autorubric's reliability section).

Per judge: Krippendorff's α, Gwet's AC1 and percent agreement of its verdicts across runs
(units: (item, criterion); values: MET / UNMET or the option label; α is what
``krippendorff.alpha`` gives on the runs × units table, at the ordinal level when every
criterion is ordinal on one scale, nominal otherwise), the six Shrout-Fleiss ICCs of its
per-item scores across runs (ICC(2,1), absolute agreement of one run, is the headline), and
each item's run-to-run variance of its score, with the mean over items. Every figure has a 95% bootstrap CI over items, from
:func:`assay.metrics.inter_judge.inter_judge` (the same sums as inter-judge reliability).

A judge whose α across its own runs is below ``min_alpha`` (default
:data:`DEFAULT_MIN_SELF_ALPHA`, Krippendorff's 0.667: the lowest α he accepts for tentative
conclusions), or whose α is undefined, is **flagged**: its scores should not be used until
this is understood. Undefined counts as flagged (fail closed): self-agreement that cannot be
measured is not shown to be high. The flag reads α, not AC1: a judge answering MET at random
90% of the time has α near 0 but AC1 near 0.78 (AC1 credits the prevalence it agrees on).

Example:
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> criteria = {i: [Criterion(id="c", text="t")] for i in "wxyz"}
    >>> def run(labels):
    ...     return [Verdict(item_id=i, criterion_id="c", decision="MET" if x == "M" else "UNMET",
    ...                     judge="j") for i, x in zip("wxyz", labels)]
    >>> report = consistency({"repeat-1": run("MMUU"), "repeat-2": run("MMUM")}, criteria)
    >>> j = report.judges["j"]
    >>> j.percent_agreement.value, j.flagged, j.items["z"].variance
    (0.75, True, 0.5)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.errors import InputError, Issue
from assay.metrics.inter_judge import inter_judge
from assay.metrics.results import Metric
from assay.metrics.scores import item_scores
from assay.metrics.uncertainty import bootstrap_ci
from assay.rubric import Criterion
from assay.verdict import Verdict

DEFAULT_MIN_SELF_ALPHA = 0.667
HEADLINE_ICC = "ICC(2,1)"


class ItemSpread(BaseModel):
    """One item's score in each run, their mean and sample variance (None: < 2 runs scored)."""

    model_config = ConfigDict(frozen=True)

    scores: dict[str, float | None]
    mean: float | None
    variance: float | None


class JudgeConsistency(BaseModel):
    """One judge's agreement with itself across runs."""

    model_config = ConfigDict(frozen=True)

    judge: str
    runs: list[str]
    n_items: int
    n_units: int
    alpha: Metric
    alpha_level: str
    ac1: Metric
    percent_agreement: Metric
    icc: dict[str, Metric]
    mean_score: Metric          # over items, of each item's mean score across runs
    mean_item_variance: Metric  # over items, of each item's run-to-run variance
    items: dict[str, ItemSpread]
    min_alpha: float
    flagged: bool
    flag_reason: str | None = None

    @property
    def headline_icc(self) -> Metric:
        return self.icc.get(HEADLINE_ICC) or Metric.undefined("no scores")


class ConsistencyReport(BaseModel):
    """Every judge's consistency over the same runs."""

    model_config = ConfigDict(frozen=True)

    runs: list[str]
    judges: dict[str, JudgeConsistency]

    @property
    def flagged(self) -> list[str]:
        return [j for j, c in self.judges.items() if c.flagged]


def consistency(
    runs: Mapping[str, Sequence[Verdict]],
    criteria_by_item: Mapping[str, Sequence[Criterion]],
    *,
    formula: str = "autorubric",
    abstention: Any = None,
    min_alpha: float = DEFAULT_MIN_SELF_ALPHA,
    seed: int = 0,
    n_resamples: int = 1000,
) -> ConsistencyReport:
    """Each judge's consistency across ``runs`` (run label → that run's verdicts); items are
    scored with ``formula`` on their rubric's criteria (``criteria_by_item``)."""
    labels = list(runs)
    judges = sorted({v.judge for verdicts in runs.values() for v in verdicts})
    report = {}
    for judge in judges:
        mine = {label: [v for v in runs[label] if v.judge == judge] for label in labels}
        report[judge] = judge_consistency(judge, mine, criteria_by_item, formula=formula,
                                          abstention=abstention, min_alpha=min_alpha, seed=seed,
                                          n_resamples=n_resamples)
    return ConsistencyReport(runs=labels, judges=report)


def judge_consistency(
    judge: str,
    runs: Mapping[str, Sequence[Verdict]],
    criteria_by_item: Mapping[str, Sequence[Criterion]],
    *,
    formula: str = "autorubric",
    abstention: Any = None,
    min_alpha: float = DEFAULT_MIN_SELF_ALPHA,
    seed: int = 0,
    n_resamples: int = 1000,
) -> JudgeConsistency:
    """One judge's consistency: ``runs`` maps a run label to the judge's verdicts in it."""
    as_raters = [v.model_copy(update={"judge": label})
                 for label, verdicts in runs.items() for v in verdicts]
    scores = {label: item_scores(criteria_by_item, verdicts, formula=formula,
                                 abstention=abstention)
              for label, verdicts in runs.items()}
    reliability = inter_judge(as_raters, item_scores=scores, seed=seed, n_resamples=n_resamples)
    items = _spreads(scores)
    means = [s.mean for s in items.values() if s.mean is not None]
    mean_score = (bootstrap_ci(means, n_resamples=n_resamples, seed=seed) if means
                  else Metric.undefined("no item was scored"))
    variances = [s.variance for s in items.values() if s.variance is not None]
    mean_variance = (bootstrap_ci(variances, n_resamples=n_resamples, seed=seed) if variances
                     else Metric.undefined("no item was scored in two runs"))
    alpha, level = ((reliability.alpha_ordinal, "ordinal") if reliability.alpha_ordinal
                    is not None else (reliability.alpha_nominal, "nominal"))
    flag_reason = _flag_reason(alpha, min_alpha, len(runs))
    return JudgeConsistency(
        judge=judge, runs=list(runs), n_items=len(items), n_units=reliability.n_units,
        alpha=alpha, alpha_level=level, ac1=reliability.ac1, percent_agreement=reliability.percent_agreement,
        icc=reliability.score_icc or {}, mean_score=mean_score,
        mean_item_variance=mean_variance, items=items,
        min_alpha=min_alpha, flagged=flag_reason is not None, flag_reason=flag_reason)


def _spreads(scores: Mapping[str, Mapping[str, float | None]]) -> dict[str, ItemSpread]:
    item_ids = sorted({i for per_run in scores.values() for i in per_run})
    spreads = {}
    for item_id in item_ids:
        per_run = {label: per_item.get(item_id) for label, per_item in scores.items()}
        values = [x for x in per_run.values() if x is not None]
        spreads[item_id] = ItemSpread(
            scores=per_run,
            mean=float(np.mean(values)) if values else None,
            variance=float(np.var(values, ddof=1)) if len(values) >= 2 else None)
    return spreads


def _flag_reason(alpha: Metric, min_alpha: float, n_runs: int) -> str | None:
    if n_runs < 2:
        return f"self-agreement needs at least two runs (got {n_runs})"
    if alpha.value is None:
        return f"α across runs is undefined ({alpha.reason}): self-agreement not shown"
    if alpha.value < min_alpha:
        return f"α across runs {alpha.value:.3f} < {min_alpha:g}"
    return None


def runs_consistency(
    run_dirs: Sequence[str | Path],
    *,
    min_alpha: float = DEFAULT_MIN_SELF_ALPHA,
    seed: int = 0,
    n_resamples: int = 1000,
    items: Collection[str] | None = None,
) -> ConsistencyReport:
    """:func:`consistency` of stored runs (``assay grade --run-dir``; two or more, each
    labelled by its directory's name), scored as the first run was configured (formula,
    abstention), on the rubrics stored with each run; ``items``: only these item ids (a
    scenario)."""
    from assay.metrics.sources import open_run, run_rubrics, run_verdicts
    from assay.runs.results import Scoring

    if len(run_dirs) < 2:
        raise InputError(Issue(None, None, "RUNS", "consistency needs two or more runs of the "
                               f"same items (got {len(run_dirs)})"))
    labels = _labels([Path(p) for p in run_dirs])
    store = open_run(run_dirs[0])
    try:
        scoring = Scoring.from_config(store.config())
    finally:
        store.close()
    criteria: dict[str, Sequence[Criterion]] = {}
    runs: dict[str, list[Verdict]] = {}
    for label, path in zip(labels, run_dirs, strict=True):
        runs[label] = [v for v in run_verdicts(Path(path)) if items is None or v.item_id in items]
        for item_id, rubric in run_rubrics(Path(path)).per_item.items():
            criteria.setdefault(item_id, rubric.criteria)
    return consistency(runs, criteria, formula=scoring.formula, abstention=scoring.abstention,
                       min_alpha=min_alpha, seed=seed, n_resamples=n_resamples)


def _labels(paths: Sequence[Path]) -> list[str]:
    """Each run's directory name, or its path where two names clash."""
    names = [p.name for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def scenarios(run_dir: str | Path, tag: str) -> dict[str, set[str]]:
    """The items of a run grouped by the value of their ``TAG:VALUE`` tags (e.g. ``theme`` for
    HealthBench's ``theme:emergency_referrals``); items without one are under ``(none)``.

    An item with two values of the tag is in both groups."""
    from assay.metrics.sources import open_run

    groups: dict[str, set[str]] = {}
    store = open_run(run_dir)
    try:
        for _, item, _ in store.iter_items():
            values = [t.split(":", 1)[1] for t in item.tags if t.startswith(f"{tag}:")]
            for value in values or ["(none)"]:
                groups.setdefault(value, set()).add(item.id)
    finally:
        store.close()
    return dict(sorted(groups.items()))
