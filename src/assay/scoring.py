"""Every score formula of Assay, in one place: the one scoring core all callers use.

A score starts from per-criterion *values*. :func:`criterion_value` turns one criterion and its
verdict into a value in [0, 1] — MET is 1, UNMET is 0, a multi-choice option gives its own
value — or into ``None`` when the criterion is left out. Abstentions (CANNOT_ASSESS, an N/A
option, or no verdict at all because the judge call failed) follow one :class:`Abstention`
strategy for every criterion kind:

=========  ============================================  ==========================================
strategy   positive criterion (weight > 0)               penalty criterion (weight < 0)
=========  ============================================  ==========================================
skip       left out of numerator and denominator         left out
zero       value 0: in the denominator, no credit        value 0: no penalty
partial    value = partial_credit (default 0.5)          value 0: no penalty
fail       worst case: 0 (lowest option value)           worst case: 1 (highest option value)
=========  ============================================  ==========================================

The formulas (``formula=`` of :func:`score_rubric`), with values v and weights w:

``autorubric``  Autorubric's Eq. 1: ``clamp(Σ v·w / Σ_{w>0} w, 0, 1)``; penalties never enter the
                denominator, so a perfect answer scores 1. A rubric with only penalties starts
                at 1 and loses the met share: ``clamp(1 + Σ v·w / Σ|w|, 0, 1)``. (A rubric that
                has positive criteria, all of them skipped as abstentions, scores None — under every
                formula, since there is nothing left to measure the answer against.)
                An optional length penalty is subtracted last (floored at 0).
``raw``         the unnormalised ``Σ v·w`` (minus the length penalty): the RL reward of the
                "normalize=False" tradition.
``healthbench`` HealthBench's per-example score, as simple-evals computes it: met points over
                the total positive points, **not clipped** (it can be negative or, with
                abstentions under ``partial``, anything in between). Clipping happens to the
                mean, in :func:`healthbench_report`.
``pass-rate``   RubricsTree's Eq. 4, a weighted pass rate ``Σ |w|·f / Σ |w|`` where f is 1 when
                the criterion passes (a positive criterion is met, a penalty is not). With the
                tree's auto-weights (:meth:`assay.rubric.Taxonomy.to_rubric`) this is S_d.
``reward``      Health-SCORE's reward: each criterion gives +v if desirable and −v if
                undesirable (so +1 / −1 / 0 for binary verdicts). The sum is normalised by
                ``reward_normalization``: ``minmax`` (default) maps it to [0, 1] as
                ``(raw + N₋) / (N₊ + N₋)`` with N₊/N₋ the counted positive/penalty criteria;
                ``positive`` divides by N₊ (HealthBench-like, may be negative); ``count``
                divides by the number of counted criteria; ``none`` keeps the sum.

Example:
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> criteria = [Criterion(id="a", text="States the dose.", weight=6),
    ...             Criterion(id="b", text="Advises seeing a doctor.", weight=4),
    ...             Criterion(id="p", text="Recommends an unsafe dose.", weight=-5)]
    >>> verdicts = {"a": Verdict(item_id="q", criterion_id="a", verdict="MET"),
    ...             "b": Verdict(item_id="q", criterion_id="b", verdict="UNMET"),
    ...             "p": Verdict(item_id="q", criterion_id="p", verdict="MET")}
    >>> score_rubric(criteria, verdicts).score            # (6 - 5) / 10
    0.1
    >>> score_rubric(criteria, verdicts, formula="healthbench").score
    0.1
    >>> score_rubric(criteria, verdicts, formula="reward").score   # (1 - 1 + 1) / (2 + 1)
    0.3333333333333333
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion
from assay.verdict import Verdict, VerdictLabel

Formula = Literal["autorubric", "raw", "healthbench", "pass-rate", "reward"]
FORMULAS: tuple[str, ...] = ("autorubric", "raw", "healthbench", "pass-rate", "reward")
RewardNormalization = Literal["minmax", "positive", "count", "none"]


class AbstainStrategy(StrEnum):
    SKIP = "skip"
    ZERO = "zero"
    PARTIAL = "partial"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Abstention:
    """How abstentions (CANNOT_ASSESS, N/A options, missing verdicts) are scored.

    >>> Abstention.parse("partial:0.3")
    Abstention(strategy=<AbstainStrategy.PARTIAL: 'partial'>, partial_credit=0.3)
    """

    strategy: AbstainStrategy = AbstainStrategy.SKIP
    partial_credit: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "strategy", AbstainStrategy(self.strategy))
        if not 0.0 <= self.partial_credit <= 1.0:
            raise ValueError(f"partial credit {self.partial_credit} is outside [0, 1]")

    @classmethod
    def parse(cls, text: str) -> Abstention:
        """``skip``, ``zero``, ``fail``, ``partial`` or ``partial:FRACTION``."""
        name, _, fraction = text.strip().lower().partition(":")
        try:
            strategy = AbstainStrategy(name)
        except ValueError:
            known = ", ".join(s.value for s in AbstainStrategy)
            raise ValueError(f"unknown abstention strategy {text!r} (known: {known})") from None
        if fraction and strategy is not AbstainStrategy.PARTIAL:
            raise ValueError(f"only 'partial' takes a fraction, got {text!r}")
        return cls(strategy, float(fraction)) if fraction else cls(strategy)


def verdict_value(criterion: Criterion, verdict: Verdict | None) -> float | None:
    """The value a verdict gives a criterion, or None when it is an abstention.

    Raises :class:`InputError` when the verdict does not fit the criterion (an option on a
    binary criterion, MET on a multi-choice one, an unknown option label).
    """
    if verdict is None or verdict.verdict is VerdictLabel.CANNOT_ASSESS:
        return None
    if not criterion.is_multi_choice:
        if verdict.verdict is None:
            raise _mismatch(verdict, "a binary criterion needs verdict MET/UNMET/CANNOT_ASSESS")
        return 1.0 if verdict.verdict is VerdictLabel.MET else 0.0
    if verdict.option is None:
        raise _mismatch(verdict, f"a {criterion.kind.value} criterion needs an option label")
    try:
        option = criterion.option(verdict.option)
    except KeyError:
        labels = ", ".join(o.label for o in criterion.options)
        raise _mismatch(verdict, f"unknown option {verdict.option!r} (options: {labels})") from None
    return None if option.na else option.value


def criterion_value(
    criterion: Criterion, verdict: Verdict | None, abstention: Abstention = Abstention()
) -> float | None:
    """The value a criterion contributes, after the abstention strategy; None = left out."""
    value = verdict_value(criterion, verdict)
    if value is not None:
        return value
    strategy = abstention.strategy
    if strategy is AbstainStrategy.SKIP:
        return None
    if strategy is AbstainStrategy.ZERO:
        return 0.0
    if strategy is AbstainStrategy.PARTIAL:
        return abstention.partial_credit if criterion.weight > 0 else 0.0
    scored = [o.value for o in criterion.options if not o.na and o.value is not None] or [0.0, 1.0]
    return min(scored) if criterion.weight > 0 else max(scored)


@dataclass(frozen=True, slots=True)
class LengthPenalty:
    """A verbosity penalty: 0 up to ``free_budget`` words, ``penalty_at_cap`` from ``cap`` on,
    and ``penalty_at_cap · ((n − free_budget) / (cap − free_budget)) ** exponent`` between.

    Words are whitespace-separated tokens. With ``formula="raw"`` the penalty is in raw points,
    so choose ``penalty_at_cap`` on that scale.

    >>> LengthPenalty(free_budget=100, cap=200, penalty_at_cap=0.5, exponent=1.0)("w " * 150)
    0.25
    """

    free_budget: int = 6000
    cap: int = 8000
    penalty_at_cap: float = 0.5
    exponent: float = 1.6

    def __post_init__(self) -> None:
        if not 0 <= self.free_budget < self.cap:
            raise ValueError("length penalty needs 0 <= free_budget < cap")
        if self.penalty_at_cap < 0 or self.exponent <= 0:
            raise ValueError("length penalty needs penalty_at_cap >= 0 and exponent > 0")

    def __call__(self, response: str | int) -> float:
        count = response if isinstance(response, int) else len(response.split())
        if count <= self.free_budget:
            return 0.0
        if count >= self.cap:
            return self.penalty_at_cap
        fraction = (count - self.free_budget) / (self.cap - self.free_budget)
        return self.penalty_at_cap * fraction**self.exponent


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A score and the sums it came from. ``score`` is None when nothing could be counted."""

    score: float | None
    raw: float
    positive_total: float
    penalty_total: float
    n_scored: int
    n_abstained: int
    length_penalty: float = 0.0


def score_rubric(
    criteria: Sequence[Criterion],
    verdicts: Mapping[str, Verdict],
    *,
    formula: Formula = "autorubric",
    abstention: Abstention = Abstention(),
    length_penalty: LengthPenalty | None = None,
    response: str | None = None,
    reward_normalization: RewardNormalization = "minmax",
) -> ScoreResult:
    """Score one answer: its criteria and the verdicts keyed by criterion id.

    A criterion missing from ``verdicts`` is an abstention. See the module docstring for the
    formulas and the abstention strategies.
    """
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r} (known: {', '.join(FORMULAS)})")
    raw = positive = penalty = 0.0
    n_scored = n_abstained = n_positive = n_penalty = 0
    has_positive = any(c.weight > 0 for c in criteria)
    passed = 0.0
    for criterion in criteria:
        verdict = verdicts.get(criterion.id)
        if verdict_value(criterion, verdict) is None:
            n_abstained += 1
        value = criterion_value(criterion, verdict, abstention)
        if value is None:
            continue
        n_scored += 1
        weight = criterion.weight
        if formula == "reward":
            raw += value if weight > 0 else -value
        else:
            raw += value * weight
        if weight > 0:
            positive += weight
            n_positive += 1
            passed += weight * value
        else:
            penalty += -weight
            n_penalty += 1
            passed += -weight * (1.0 - value)

    cut = length_penalty(response or "") if length_penalty is not None else 0.0
    score: float | None
    if n_scored == 0 or (has_positive and n_positive == 0):
        # Nothing counted, or every positive criterion was skipped: nothing to measure against.
        score = None
    elif formula == "autorubric":
        if positive > 0:
            score = max(0.0, _clamp(raw / positive) - cut)
        else:  # a penalty-only rubric starts at 1 and loses each met penalty's share
            score = max(0.0, _clamp(1.0 + raw / penalty) - cut)
    elif formula == "raw":
        score = raw - cut
    elif formula == "healthbench":
        score = raw / positive if positive > 0 else None
    elif formula == "pass-rate":
        score = passed / (positive + penalty)
    else:
        score = _normalise_reward(raw, n_positive, n_penalty, reward_normalization)
    return ScoreResult(score, raw, positive, penalty, n_scored, n_abstained, cut)


def _normalise_reward(
    raw: float, n_positive: int, n_penalty: int, how: RewardNormalization
) -> float | None:
    if how == "minmax":
        return (raw + n_penalty) / (n_positive + n_penalty)
    if how == "positive":
        return raw / n_positive if n_positive else None
    if how == "count":
        return raw / (n_positive + n_penalty)
    if how == "none":
        return raw
    raise ValueError(f"unknown reward normalization {how!r}")


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def _mismatch(verdict: Verdict, message: str) -> InputError:
    return InputError(
        Issue(None, None, f"verdict[{verdict.item_id}/{verdict.criterion_id}]", message)
    )


# --- HealthBench: per-example scores, then the clipped mean with its bootstrap std ----------


@dataclass(frozen=True, slots=True)
class HealthBenchExampleScore:
    """One example's HealthBench metrics, named as simple-evals names them.

    ``metrics`` holds ``overall_score``, one entry per example tag (each equal to the overall
    score) and one per rubric tag present (that tag's criteria rescored alone; tags whose
    criteria have no positive points are left out).
    """

    example_id: str
    score: float
    metrics: dict[str, float] = field(default_factory=dict)


def healthbench_example(
    criteria: Sequence[Criterion],
    verdicts: Mapping[str, Verdict],
    example_tags: Iterable[str] = (),
    *,
    abstention: Abstention = Abstention(),
    example_id: str = "",
) -> HealthBenchExampleScore:
    """Score one HealthBench example exactly as simple-evals' ``grade_sample`` does."""

    def score_of(subset: Sequence[Criterion]) -> float | None:
        return score_rubric(subset, verdicts, formula="healthbench", abstention=abstention).score

    overall = score_of(criteria)
    if overall is None:
        raise InputError(
            Issue(None, None, f"example[{example_id}]", "no positive points to score against")
        )
    metrics: dict[str, float] = {"overall_score": overall}
    for tag in example_tags:
        metrics[tag] = overall
    by_tag: dict[str, list[Criterion]] = {}
    for criterion in criteria:
        for tag in dict.fromkeys(criterion.tags):
            by_tag.setdefault(tag, []).append(criterion)
    for tag, subset in by_tag.items():
        tag_score = score_of(subset)
        if tag_score is not None:
            metrics[tag] = tag_score
    return HealthBenchExampleScore(example_id, overall, metrics)


@dataclass(frozen=True, slots=True)
class ClippedMean:
    """A HealthBench aggregate: the mean clipped to [0, 1], its bootstrap std and n."""

    mean: float
    bootstrap_std: float
    n_samples: int


@dataclass(frozen=True, slots=True)
class HealthBenchReport:
    """The official HealthBench result.

    ``overall`` is the clipped mean of the example scores; ``metrics`` is the flat dict that
    simple-evals reports (``overall_score``, ``overall_score:n_samples``,
    ``overall_score:bootstrap_std``, and the same three for every tag); ``by_axis`` and
    ``by_theme`` pick out the ``axis:`` rubric tags and the ``theme:`` example tags.
    """

    overall: float
    bootstrap_std: float
    n: int
    metrics: dict[str, float]
    by_axis: dict[str, ClippedMean]
    by_theme: dict[str, ClippedMean]


class HealthBenchValues:
    """Example metrics gathered as they come, one compact column per metric name, for
    :func:`healthbench_report` (a run's scoring adds 100,000 examples without keeping them)."""

    def __init__(self) -> None:
        from array import array

        self._array = array
        self.columns: dict[str, Any] = {}

    def add(self, example: HealthBenchExampleScore) -> None:
        columns = self.columns
        for name, value in example.metrics.items():
            column = columns.get(name)
            if column is None:
                column = columns[name] = self._array("d")
            column.append(value)
        score = columns.get("score")
        if score is None:
            score = columns["score"] = self._array("d")
        score.append(example.score)

    def __bool__(self) -> bool:
        return bool(self.columns)

    def report(self, *, n_bootstrap: int = 1000, seed: int = 0) -> HealthBenchReport:
        return _clipped_report(self.columns, n_bootstrap=n_bootstrap, seed=seed)


def healthbench_report(
    examples: Iterable[HealthBenchExampleScore], *, n_bootstrap: int = 1000, seed: int = 0
) -> HealthBenchReport:
    """Aggregate example scores as simple-evals' ``_aggregate_get_clipped_mean`` does.

    The bootstrap draws ``n_bootstrap`` resamples of each metric's values and takes the
    (population) std of their clipped means. simple-evals draws from NumPy's unseeded global
    generator; here one ``numpy.random.RandomState(seed)`` is consumed in the same order, so
    the figures equal simple-evals' after ``numpy.random.seed(seed)`` and are reproducible.
    """
    values = HealthBenchValues()
    for example in examples:
        values.add(example)
    return values.report(n_bootstrap=n_bootstrap, seed=seed)


def _clipped_report(name2values: Mapping[str, Sequence[float]], *, n_bootstrap: int,
                    seed: int) -> HealthBenchReport:
    import numpy as np

    from assay.score_table import bootstrap_means

    if not name2values:
        raise InputError("no HealthBench examples to aggregate")
    rng = np.random.RandomState(seed)
    stats: dict[str, ClippedMean] = {}
    for name, values in name2values.items():
        array = np.asarray(values, dtype=float)
        n = len(array)
        means = np.clip(bootstrap_means(array, n_bootstrap,
                                        lambda rows, n=n: rng.randint(0, n, size=(rows, n))), 0, 1)
        stats[name] = ClippedMean(
            float(np.clip(array.mean(), 0, 1)), float(np.std(means)), len(array)
        )

    score = stats.pop("score")
    metrics: dict[str, float] = {}
    for name, stat in stats.items():
        metrics[name] = stat.mean
        metrics[f"{name}:n_samples"] = stat.n_samples
        metrics[f"{name}:bootstrap_std"] = stat.bootstrap_std
    return HealthBenchReport(
        overall=score.mean,
        bootstrap_std=score.bootstrap_std,
        n=score.n_samples,
        metrics=metrics,
        by_axis={k.removeprefix("axis:"): v for k, v in stats.items() if k.startswith("axis:")},
        by_theme={
            k.removeprefix("theme:"): v for k, v in stats.items() if k.startswith("theme:")
        },
    )
