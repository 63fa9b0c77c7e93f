"""Every score formula of Assay: per-criterion values, abstentions, the item formulas.

HealthBench's per-example breakdown and its clipped aggregate live in
:mod:`assay.scoring.healthbench`; the one item scorer every caller uses is
:class:`assay.scoring.ItemScorer`.

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
    >>> verdicts = {"a": Verdict(item_id="q", criterion_id="a", decision="MET"),
    ...             "b": Verdict(item_id="q", criterion_id="b", decision="UNMET"),
    ...             "p": Verdict(item_id="q", criterion_id="p", decision="MET")}
    >>> score_rubric(criteria, verdicts).score            # (6 - 5) / 10
    0.1
    >>> score_rubric(criteria, verdicts, formula="healthbench").score
    0.1
    >>> score_rubric(criteria, verdicts, formula="reward").score   # (1 - 1 + 1) / (2 + 1)
    0.3333333333333333
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion
from assay.verdict import Decision, Verdict

Formula = Literal["autorubric", "raw", "healthbench", "pass-rate", "reward"]
FORMULAS: tuple[Formula, ...] = ("autorubric", "raw", "healthbench", "pass-rate", "reward")


def checked_formula(value: str) -> Formula:
    """``value`` as a formula name; the ValueError :func:`score_rubric` gives when unknown.

    >>> checked_formula("raw")
    'raw'
    """
    if value not in FORMULAS:
        raise ValueError(f"unknown formula {value!r} (known: {', '.join(FORMULAS)})")
    return value
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
    if verdict is None or verdict.decision is Decision.CANNOT_ASSESS:
        return None
    if not criterion.is_multi_choice:
        if verdict.decision is None:
            raise _mismatch(verdict, "a binary criterion needs verdict MET/UNMET/CANNOT_ASSESS")
        return 1.0 if verdict.decision is Decision.MET else 0.0
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
    n_ungraded: int = 0  # criteria without a verdict: any leaves the score None (fail closed)


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

    A criterion missing from ``verdicts`` counts as an abstention here (an axis scored on a
    subset of criteria); :meth:`~assay.scoring.ItemScorer.score`, which every caller uses,
    leaves such an item unscored instead. See the module docstring for the formulas and the
    abstention strategies.
    """
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r} (known: {', '.join(FORMULAS)})")
    points = []
    n_abstained = 0
    for criterion in criteria:
        verdict = verdicts.get(criterion.id)
        if verdict_value(criterion, verdict) is None:
            n_abstained += 1
        points.append((criterion_value(criterion, verdict, abstention), criterion.weight))
    cut = length_penalty(response or "") if length_penalty is not None else 0.0
    return score_points(points, formula=formula, n_abstained=n_abstained, cut=cut,
                        reward_normalization=reward_normalization)


def score_points(
    points: Sequence[tuple[float | None, float]],
    *,
    formula: Formula,
    n_abstained: int = 0,
    cut: float = 0.0,
    reward_normalization: RewardNormalization = "minmax",
) -> ScoreResult:
    """:func:`score_rubric` from each criterion's (value after the abstention strategy, or None
    if left out; weight), in the rubric's order, with ``cut`` the length penalty: for a caller
    that scores several subsets of one rubric from values worked out once.

    >>> score_points([(1.0, 5), (0.0, 3), (None, -2)], formula="healthbench").score
    0.625
    """
    raw = positive = penalty = 0.0
    n_scored = n_positive = n_penalty = 0
    has_positive = any(weight > 0 for _, weight in points)
    passed = 0.0
    for value, weight in points:
        if value is None:
            continue
        n_scored += 1
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
