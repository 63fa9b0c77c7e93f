"""Scores of a run, computed from its stored votes with no model call.

Votes are aggregated per criterion (:mod:`assay.grading.aggregate`) and scored by the one scoring
core (:mod:`assay.scoring`): any formula, any abstention strategy, any aggregation, so a run can be
rescored as often as wanted (``assay score RUN --aggregate ... --abstain ...``). Only items whose
calls have all ended are read, and an item whose calls ended with a criterion not graded by every
judge the scoring counts (a call that failed or was skipped: :func:`ungraded_criteria`) is
unscored, counted in ``n_ungraded`` and left out of every figure (fail closed), never scored as
if the criterion abstained. With ``formula="healthbench"`` the result carries the official
HealthBench report (clipped mean, bootstrap std, axes and themes).

Example (see tests/runs for complete runs)::

    scores = rescore("runs/2025-06-01-abc", aggregation="any", abstention="zero")
    scores.overall, scores.ci, scores.by_axis
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.grading.aggregate import Aggregated, Aggregation, Vote, aggregate
from assay.item import Item
from assay.rubric import Rubric
from assay.runs.aliases import renamed
from assay.runs.store import RunStore
from assay.scoring import (
    Abstention,
    HealthBenchReport,
    LengthPenalty,
    RewardNormalization,
    ScoreTable,
    ScoreTableBuilder,
    checked_formula,
    mean_with_ci,
)
from assay.scoring.table import ScoredItem
from assay.verdict import Verdict


@dataclass(frozen=True)
class Scoring:
    """How stored votes become scores (none of this changes a judge call)."""

    aggregation: Aggregation = field(default_factory=Aggregation)
    abstention: Abstention = field(default_factory=Abstention)
    formula: str = "autorubric"
    judge_weights: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    reward_normalization: RewardNormalization = "minmax"
    length_penalty: LengthPenalty | None = None
    judges: tuple[str, ...] | None = None  # only these judges' votes (None: every judge)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Scoring:
        """The scoring a run was configured with, with any of aggregation/abstention/formula changed."""
        stored = config.get("scoring", {})
        aggregation_text = overrides.get("aggregation") or stored.get("aggregation")
        abstention_text = overrides.get("abstention") or stored.get("abstention") or "skip"
        return cls(
            aggregation=Aggregation.parse(aggregation_text),
            abstention=_abstention(abstention_text),
            formula=overrides.get("formula") or stored.get("formula") or "autorubric",
            judge_weights={j["id"]: j.get("weight", 1.0) for j in config.get("judges", [])},
            seed=int(config.get("grading", {}).get("seed", 0)),
        )

    def describe(self) -> dict[str, str]:
        a = self.abstention
        described = {"aggregation": str(self.aggregation), "formula": self.formula,
                     "abstention": a.strategy.value + (f":{a.partial_credit:g}" if a.strategy.value == "partial" else "")}
        if self.formula == "reward":
            described["reward_normalization"] = self.reward_normalization
        if self.length_penalty is not None:
            described["length_penalty"] = str(self.length_penalty)
        if self.judges is not None:
            described["judges"] = ",".join(self.judges)
        return described


def _abstention(value: Abstention | str) -> Abstention:
    return value if isinstance(value, Abstention) else Abstention.parse(value)


@dataclass(frozen=True)
class Stat:
    """A group's mean score over ``n`` items, with a 95% CI where one is defined."""

    mean: float
    n: int
    ci_low: float | None = None
    ci_high: float | None = None


def _stat(values: list[float], seed: int, with_ci: bool) -> Stat:
    wanted = with_ci and len(values) > 1
    _, low, high = mean_with_ci(values, seed=seed) if wanted else (None, None, None)
    return Stat(sum(values) / len(values), len(values), low, high)


def _clipped_stat(mean: float, n: int, std: float) -> Stat:
    """HealthBench reports a bootstrap std: the CI is ±1.96 std, clipped to [0, 1]."""
    return Stat(mean, n, max(0.0, mean - 1.96 * std), min(1.0, mean + 1.96 * std))


@dataclass
class RunScores:
    """What a run scored: the scoring core's :class:`~assay.scoring.ScoreTable` (per-item
    scores, mean with a bootstrap CI, the official HealthBench report for that formula) plus the
    breakdowns by axis and theme and the judges' mean agreement."""

    scoring: Scoring
    table: ScoreTable
    by_axis: dict[str, Stat]
    by_theme: dict[str, Stat]
    mean_agreement: float | None

    @property
    def healthbench(self) -> HealthBenchReport | None:
        return self.table.healthbench

    @property
    def scores(self) -> dict[str, float | None]:
        return {s.item_id: s.score for s in self.table.items}

    @property
    def overall(self) -> float | None:
        """The official HealthBench score (clipped mean) for that formula, else the mean."""
        return self.healthbench.overall if self.healthbench is not None else self.table.mean

    @property
    def bootstrap_std(self) -> float | None:
        return self.healthbench.bootstrap_std if self.healthbench is not None else None

    @property
    def ci(self) -> tuple[float, float] | None:
        if self.healthbench is not None:  # HealthBench reports a bootstrap std: ±1.96 std
            o, sd = self.healthbench.overall, self.healthbench.bootstrap_std
            return max(0.0, o - 1.96 * sd), min(1.0, o + 1.96 * sd)
        if self.table.ci_low is None or self.table.ci_high is None:  # both or neither
            return None
        return self.table.ci_low, self.table.ci_high

    @property
    def n_scored(self) -> int:
        return sum(1 for s in self.table.items if s.score is not None)

    @property
    def n_ungraded(self) -> int:
        """Items left unscored because a criterion has no verdict (a failed or skipped call):
        no figure here includes them."""
        return self.table.n_ungraded


def iter_final_verdicts(
    store: RunStore, scoring: Scoring, *, up_to: int | None = None
) -> Iterator[tuple[Item, Rubric, dict[str, Aggregated]]]:
    """Each finished item (its calls all ended, well or not) with its rubric and per-criterion
    aggregated verdicts, streamed (with ``up_to``, only the items at that position of the store
    or before). A criterion whose call failed has fewer votes, or none: a caller that scores
    or compares items asks :func:`ungraded_criteria` (:class:`RunTally` does)."""
    last: tuple[str, Rubric] | None = None  # items often share one rubric; never hold them all
    votes = store.iter_votes(up_to=up_to)
    pending = next(votes, None)
    for idx, item, digest in store.iter_items(done_only=True, up_to=up_to):
        if last is None or last[0] != digest:
            last = (digest, store.rubric(digest))
        rubric = last[1]
        while pending is not None and pending[0] < idx:  # votes of an unfinished item
            pending = next(votes, None)
        item_votes: list[Verdict] = []
        if pending is not None and pending[0] == idx:
            item_votes, pending = pending[1], next(votes, None)
        yield item, rubric, final_verdicts(rubric, item_votes, scoring)


def final_verdicts(rubric: Rubric, votes: Iterable[Verdict],
                   scoring: Scoring) -> dict[str, Aggregated]:
    """Each criterion's aggregated verdict from an item's stored votes, given in the store's
    order (by criterion id, then judge: the order the aggregation sees them in)."""
    by_criterion: dict[str, list[Vote]] = defaultdict(list)
    for v in votes:
        if scoring.judges is not None and v.judge not in scoring.judges:
            continue
        by_criterion[v.criterion_id].append(Vote(v.judge, v, scoring.judge_weights.get(v.judge, 1.0)))
    return {c.id: aggregate(c, by_criterion.get(c.id, []), scoring.aggregation)
            for c in rubric.criteria}


def ungraded_criteria(rubric: Rubric, finals: Mapping[str, Aggregated],
                      scoring: Scoring) -> list[str]:
    """The criteria of an item not graded by every judge the scoring counts (``scoring.judges``,
    else the run's judges; with neither known, by at least one): a call that failed or was
    skipped, a reply that did not parse, a row lost. Such an item is unscored (fail closed),
    never scored as if the criterion abstained; a judge's own CANNOT_ASSESS is a vote.

    >>> from assay.rubric import Rubric
    >>> rubric = Rubric(criteria=[{"id": "a", "text": "States the dose."},
    ...                           {"id": "b", "text": "Suggests aspirin.", "weight": -5}])
    >>> vote = Verdict(item_id="q", criterion_id="a", judge="j1", decision="MET")
    >>> scoring = Scoring(judge_weights={"j1": 1.0, "j2": 1.0})
    >>> ungraded_criteria(rubric, final_verdicts(rubric, [vote], scoring), scoring)
    ['a', 'b']
    >>> ungraded_criteria(rubric, final_verdicts(rubric, [vote], Scoring()), Scoring())
    ['b']
    """
    judges = set(scoring.judges if scoring.judges is not None else scoring.judge_weights)
    missing = []
    for criterion in rubric.criteria:
        final = finals.get(criterion.id)
        voters = {vote.judge for vote in final.votes} if final is not None else set()
        if not voters or not judges <= voters:
            missing.append(criterion.id)
    return missing


@dataclass(frozen=True, slots=True)
class ItemTally:
    """One item's part of a run's scores (:meth:`RunTally.score`), small enough to hold
    while the items before it finish."""

    scored: ScoredItem
    agreements: tuple[float, ...]  # per criterion that two judges or more voted on
    themes: tuple[str, ...]  # theme tags, where the item's score counts
    axes: dict[str, float]


class RunTally:
    """A run's scores summed item by item in the store's order: the score table, the axis
    and theme values and the judges' agreement, never the items themselves.

    Items are scored (:meth:`score`) in any order and kept (:meth:`keep`) in the store's;
    :meth:`extend` puts another tally's items after these, with the same figures as keeping
    them one by one (``keep_agreements`` on that tally keeps what the agreement sum needs).
    """

    def __init__(self, scoring: Scoring, *, keep_agreements: bool = False) -> None:
        self.scoring = scoring
        self.builder = ScoreTableBuilder(checked_formula(scoring.formula), scoring.abstention,
                                         seed=scoring.seed,
                                         length_penalty=scoring.length_penalty,
                                         reward_normalization=scoring.reward_normalization)
        self.axis_values: dict[str, list[float]] = defaultdict(list)
        self.theme_values: dict[str, list[float]] = defaultdict(list)
        self.agreement_sum, self.agreement_n = 0.0, 0
        self.agreements = array("d") if keep_agreements else None

    def score(self, item: Item, rubric: Rubric, finals: Mapping[str, Aggregated]) -> ItemTally:
        verdicts = {cid: a.verdict for cid, a in finals.items() if a.verdict is not None}
        agreements = tuple(a.agreement for a in finals.values()  # agreement needs two judges
                           if a.agreement is not None and len(a.votes) > 1)
        scored = self.builder.score(item.id, rubric.criteria, verdicts, response=item.response,
                                    example_tags=item.tags,
                                    ungraded=ungraded_criteria(rubric, finals, self.scoring))
        if scored.result.score is None or self.scoring.formula == "healthbench":
            return ItemTally(scored, agreements, (), {})  # HealthBench reports its own groups
        themes = tuple(t.removeprefix("theme:") for t in item.tags if t.startswith("theme:"))
        return ItemTally(scored, agreements, themes,
                         self.builder.scorer.axis_scores(rubric.criteria, verdicts))

    def keep(self, item: ItemTally) -> None:
        self._add_agreements(item.agreements)
        if self.agreements is not None:
            self.agreements.extend(item.agreements)
        self.builder.keep(item.scored)
        for theme in item.themes:
            self.theme_values[theme].append(item.scored.result.score)  # type: ignore[arg-type]
        for axis, value in item.axes.items():
            self.axis_values[axis].append(value)

    def extend(self, later: RunTally) -> None:
        if later.agreement_n and later.agreements is None:
            raise ValueError("extend: the later tally did not keep its agreements")
        self._add_agreements(later.agreements or ())
        self.builder.extend(later.builder)
        for theme, values in later.theme_values.items():
            self.theme_values[theme].extend(values)
        for axis, values in later.axis_values.items():
            self.axis_values[axis].extend(values)

    def _add_agreements(self, values: Iterable[float]) -> None:
        for value in values:  # one by one, in the store's order: the same float sum each way
            self.agreement_sum += value
            self.agreement_n += 1

    def scores(self, *, group_cis: bool = False) -> RunScores:
        scoring, table = self.scoring, self.builder.build()
        report = table.healthbench
        if report is not None:
            by_axis = {k: _clipped_stat(v.mean, v.n_samples, v.bootstrap_std)
                       for k, v in report.by_axis.items()}
            by_theme = {k: _clipped_stat(v.mean, v.n_samples, v.bootstrap_std)
                        for k, v in report.by_theme.items()}
        else:
            by_axis = {k: _stat(v, scoring.seed, group_cis)
                       for k, v in sorted(self.axis_values.items())}
            by_theme = {k: _stat(v, scoring.seed, group_cis)
                        for k, v in sorted(self.theme_values.items())}
        agreement = self.agreement_sum / self.agreement_n if self.agreement_n else None
        return RunScores(scoring, table, by_axis, by_theme, agreement)


def score_run(store: RunStore, scoring: Scoring, *, group_cis: bool = False) -> RunScores:
    """Score every finished item of a run with the scoring core, one item at a time.

    ``group_cis`` adds a bootstrap CI to each axis and theme mean (the report shows them; a
    run's own summary does not pay for them). HealthBench's report always carries its own.
    """
    tally = RunTally(scoring)
    for item, rubric, finals in iter_final_verdicts(store, scoring):
        tally.keep(tally.score(item, rubric, finals))
    return tally.scores(group_cis=group_cis)


def rescore(run: str | Path, **settings: Any) -> ScoreTable:
    """Rescore a stored run with other settings; makes no model call. Takes the settings of
    :func:`rescore_run` and returns the scoring core's :class:`~assay.scoring.ScoreTable`
    (:func:`rescore_run` gives the full :class:`RunScores` with breakdowns)."""
    return rescore_run(run, **settings).table


def rescore_run(
    run: str | Path,
    *,
    aggregation: str | None = None,
    abstention: str | Abstention | None = None,
    formula: str | None = None,
    seed: int | None = None,
    reward_normalization: RewardNormalization | None = None,
    length_penalty: LengthPenalty | None = None,
    judge: str | None = None,
    aggregate: str | None = None,
) -> RunScores:
    """Rescore a stored run with other settings; makes no model call.

    ``aggregation`` like ``"majority"`` or ``"any,ordinal=median"`` (``aggregate`` is its
    former name); ``abstention`` like ``"skip"`` or ``"partial:0.3"``; ``formula`` one of the
    scoring core's formulas; ``reward_normalization`` for ``formula="reward"``;
    ``length_penalty`` applied to the run's stored responses; ``judge`` keeps only that judge's
    votes (an id the run does not have is an error). Omitted settings keep the run's own;
    ``seed`` seeds the bootstrap (default: the run's master seed). The names are those of
    :class:`~assay.runs.options.RunOptions`.
    """
    aggregation = renamed("aggregation", aggregation, "aggregate", aggregate)
    store = RunStore.open(run)
    try:
        return score_run(store, run_scoring(
            store.config(), source=str(run), aggregation=aggregation, abstention=abstention,
            formula=formula, seed=seed, reward_normalization=reward_normalization,
            length_penalty=length_penalty, judge=judge))
    finally:
        store.close()


def run_scoring(
    config: Mapping[str, Any],
    *,
    source: str | None = None,
    aggregation: str | None = None,
    abstention: str | Abstention | None = None,
    formula: str | None = None,
    seed: int | None = None,
    reward_normalization: RewardNormalization | None = None,
    length_penalty: LengthPenalty | None = None,
    judge: str | None = None,
) -> Scoring:
    """The :class:`Scoring` of a run's ``config`` with the given settings changed; a setting
    that cannot apply (an unknown judge, a normalisation without the reward formula) is an
    :class:`~assay.errors.InputError` rather than being ignored."""
    scoring = Scoring.from_config(config, aggregation=aggregation, formula=formula)
    changes: dict[str, Any] = {}
    if abstention is not None:
        changes["abstention"] = _abstention(abstention)
    if seed is not None:
        changes["seed"] = seed
    if reward_normalization is not None:
        if scoring.formula != "reward":
            raise InputError(Issue(None, None, "--reward-normalization",
                                   f"applies to the reward formula only; this run scores with "
                                   f"{scoring.formula!r} (add --formula reward)"))
        if reward_normalization not in ("minmax", "positive", "count", "none"):
            raise InputError(Issue(None, None, "--reward-normalization",
                                   f"unknown normalization {reward_normalization!r} "
                                   "(known: minmax, positive, count, none)"))
        changes["reward_normalization"] = reward_normalization
    if length_penalty is not None:
        changes["length_penalty"] = length_penalty
    if judge is not None:
        known = [j["id"] for j in config.get("judges", [])]
        if judge not in known:
            raise InputError(Issue(source, None, "--judge",
                                   f"the run has no judge {judge!r} (its judges: "
                                   f"{', '.join(known) or 'none'})"))
        changes["judges"] = (judge,)
    return replace(scoring, **changes) if changes else scoring
