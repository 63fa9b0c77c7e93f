"""Ensembles: combining several judges' votes on one criterion into one verdict.

Strategies per criterion kind:

* binary: ``majority`` (head count), ``weighted`` (judge weights), ``unanimous`` (MET only if
  every judge says MET), ``any`` (MET if one judge says MET);
* ordinal: ``mean`` (judge-weighted mean of option values) or ``median``, snapped to the
  nearest option, or ``mode``;
* nominal: ``mode``.

Abstentions (CANNOT_ASSESS, or an N/A option) are ruled by ``abstain=``:

* ``abstain=drop`` (the default): an abstaining judge's vote is dropped and the others decide;
  only when every judge abstains is the result an abstention. So with a single abstaining judge
  among answering ones, the scoring's ``--abstain`` strategy never sees it;
* ``abstain=count``: an abstention is a vote for the abstention. The strategy first picks its
  answer from the answering votes as usual; the abstention then wins when at least as many
  judges abstained as voted for that answer (weights for ``weighted`` and ``mean``; for
  ``mean`` and ``median`` every answering vote counts for the answer). The result is then
  CANNOT_ASSESS (or the N/A option every abstaining judge chose), scored by ``--abstain``.

Failed calls are not votes at all. Ties go deterministically to the outcome
that gives the lower score for the criterion's polarity: UNMET (or the lower-valued option) for
a desirable criterion, MET (or the higher-valued option) for a penalty; then to the option
listed first. ``agreement`` is the share of voting judges whose answer equals the final one.

Example:
    >>> from assay.rubric import Criterion
    >>> c = Criterion(id="dose", text="States the dose.")
    >>> votes = [Vote("a", Verdict(item_id="q", criterion_id="dose", decision="MET")),
    ...          Vote("b", Verdict(item_id="q", criterion_id="dose", decision="UNMET"))]
    >>> result = aggregate(c, votes)
    >>> str(result.verdict.decision), result.agreement   # a tie: the lower score wins
    ('UNMET', 0.5)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from assay.errors import ConfigError
from assay.rubric import Criterion, CriterionKind, Option
from assay.verdict import Decision, Verdict

ABSTAIN_RULES = ("drop", "count")
STRATEGIES = {
    CriterionKind.BINARY: ("majority", "weighted", "unanimous", "any"),
    CriterionKind.ORDINAL: ("mean", "median", "mode"),
    CriterionKind.NOMINAL: ("mode",),
}


@dataclass(frozen=True)
class Vote:
    judge: str
    verdict: Verdict
    weight: float = 1.0


@dataclass(frozen=True)
class Aggregation:
    """The strategy for each criterion kind.

    >>> Aggregation.parse("any,ordinal=median")
    Aggregation(binary='any', ordinal='median', nominal='mode', abstain='drop')
    >>> Aggregation.parse("mode")        # every kind that has a "mode" strategy
    Aggregation(binary='majority', ordinal='mode', nominal='mode', abstain='drop')
    >>> str(Aggregation.parse("majority,abstain=count"))
    'binary=majority,ordinal=mean,nominal=mode,abstain=count'
    """

    binary: str = "majority"
    ordinal: str = "mean"
    nominal: str = "mode"
    abstain: str = "drop"  # what an abstaining judge's vote does: see the module docstring

    def __post_init__(self) -> None:
        if self.abstain not in ABSTAIN_RULES:
            raise ConfigError(f"aggregation: abstain={self.abstain!r}; choose one of "
                              f"{', '.join(ABSTAIN_RULES)}")
        for kind in CriterionKind:
            name = getattr(self, kind.value)
            if name not in STRATEGIES[kind]:
                raise ConfigError(
                    f"aggregation {name!r} does not apply to {kind.value} criteria; "
                    f"choose one of {', '.join(STRATEGIES[kind])}"
                )

    @classmethod
    def parse(cls, text: str | None) -> Aggregation:
        chosen: dict[str, str] = {}
        for token in filter(None, (t.strip() for t in (text or "").split(","))):
            if "=" in token:
                kind, name = (s.strip() for s in token.split("=", 1))
                if kind == "abstain":
                    chosen["abstain"] = name
                    continue
                if kind not in {k.value for k in CriterionKind}:
                    raise ConfigError(f"aggregation: unknown criterion kind {kind!r}")
                chosen[kind] = name
                continue
            kinds = [k.value for k in CriterionKind if token in STRATEGIES[k]]
            if not kinds:
                known = sorted({s for names in STRATEGIES.values() for s in names})
                raise ConfigError(f"aggregation: unknown strategy {token!r}; known: {', '.join(known)}")
            for kind in kinds:
                chosen[kind] = token
        return cls(**chosen)

    def __str__(self) -> str:
        text = f"binary={self.binary},ordinal={self.ordinal},nominal={self.nominal}"
        return text if self.abstain == "drop" else f"{text},abstain={self.abstain}"


@dataclass(frozen=True)
class Aggregated:
    """The final verdict for one criterion (None when no judge answered) and the agreement."""

    verdict: Verdict | None
    agreement: float | None
    votes: tuple[Vote, ...] = ()


class _Answer(TypedDict, total=False):
    """The answer part of a final verdict: one of the two keys."""

    decision: Decision
    option: str


def aggregate(
    criterion: Criterion, votes: Sequence[Vote], aggregation: Aggregation = Aggregation()
) -> Aggregated:
    if not votes:
        return Aggregated(None, None, ())
    if len(votes) == 1:
        return Aggregated(votes[0].verdict, 1.0, tuple(votes))
    first = votes[0].verdict
    answering = [v for v in votes if not _abstains(criterion, v.verdict)]
    abstaining = [v for v in votes if _abstains(criterion, v.verdict)]
    strategy: str = getattr(aggregation, criterion.kind.value)
    answer: _Answer
    if not answering:
        answer = _abstention(abstaining)
    elif criterion.kind is CriterionKind.BINARY:
        answer = {"decision": _binary(criterion, answering, strategy)}
    else:
        answer = {"option": _multi_choice(criterion, answering, strategy)}
    if answering and abstaining and aggregation.abstain == "count":
        weighted = strategy in ("weighted", "mean")
        for_answer = [v for v in answering if strategy in ("mean", "median")
                      or _answer(v.verdict) == str(answer.get("option") or answer.get("decision"))]
        if _weight(abstaining, weighted) >= _weight(for_answer, weighted):
            answer = _abstention(abstaining)
    explanation = " | ".join(f"{v.judge}: {v.verdict.explanation}" for v in votes if v.verdict.explanation)
    final = Verdict(item_id=first.item_id, criterion_id=criterion.id, judge="ensemble",
                    explanation=explanation, **answer)
    agreeing = sum(1 for v in votes if _answer(v.verdict) == _answer(final))
    return Aggregated(final, agreeing / len(votes), tuple(votes))


def mean_agreement(results: Sequence[Aggregated]) -> float | None:
    values = [r.agreement for r in results if r.agreement is not None]
    return sum(values) / len(values) if values else None


def _abstention(abstaining: Sequence[Vote]) -> _Answer:
    """The N/A option every abstaining judge chose, else CANNOT_ASSESS."""
    labels = {v.verdict.option for v in abstaining}
    if len(labels) == 1 and (label := labels.pop()) is not None:
        return {"option": label}
    return {"decision": Decision.CANNOT_ASSESS}


def _weight(votes: Sequence[Vote], weighted: bool) -> float:
    return sum(v.weight if weighted else 1.0 for v in votes)


def _answer(verdict: Verdict) -> str:
    return verdict.option if verdict.option is not None else str(verdict.decision)


def _abstains(criterion: Criterion, verdict: Verdict) -> bool:
    if verdict.decision is Decision.CANNOT_ASSESS:
        return True
    return verdict.option is not None and criterion.option(verdict.option).na


def _binary(criterion: Criterion, votes: Sequence[Vote], strategy: str) -> Decision:
    met = [v.verdict.decision is Decision.MET for v in votes]
    if strategy == "unanimous":
        return Decision.MET if all(met) else Decision.UNMET
    if strategy == "any":
        return Decision.MET if any(met) else Decision.UNMET
    weights = [v.weight if strategy == "weighted" else 1.0 for v in votes]
    for_met = sum(w for w, m in zip(weights, met) if m)
    against = sum(w for w, m in zip(weights, met) if not m)
    if for_met == against:  # score-minimizing tie-break
        return Decision.MET if criterion.is_penalty else Decision.UNMET
    return Decision.MET if for_met > against else Decision.UNMET


def _multi_choice(criterion: Criterion, votes: Sequence[Vote], strategy: str) -> str:
    scored = [(i, o, _value(o)) for i, o in enumerate(criterion.options) if not o.na]
    # Rank options from the worst outcome for this criterion's polarity to the best.
    def badness(entry: tuple[int, Option, float]) -> tuple[float, int]:
        index, _, value = entry
        return (-value if criterion.is_penalty else value, index)

    if strategy == "mode":
        counts = Counter(_chosen(criterion, v).label for v in votes)
        top = max(counts.values())
        return min((e for e in scored if counts.get(e[1].label) == top), key=badness)[1].label
    values = [_value(_chosen(criterion, v)) for v in votes]
    if strategy == "median":
        target = statistics.median(values)
    else:
        weights = [v.weight for v in votes]
        target = sum(w * x for w, x in zip(weights, values)) / sum(weights)
    # Snap to the nearest option value; equal distances go to the worse option.
    return min(scored, key=lambda e: (round(abs(e[2] - target), 12), *badness(e)))[1].label


def _chosen(criterion: Criterion, vote: Vote) -> Option:
    """The option an answering multi-choice vote chose (it always names one)."""
    assert vote.verdict.option is not None
    return criterion.option(vote.verdict.option)


def _value(option: Option) -> float:
    """A scored option's value (the rubric validator guarantees one on every non-N/A option)."""
    assert option.value is not None
    return option.value
