"""What a report shows of a run, gathered from its store with no model call.

:func:`load_run` reads one run directory: its status (complete or not, and why: the report
shows it in its header), its manifest (cost, tokens, latency), its scores (the
scoring core, with CIs overall, per axis and per theme), every finished item with its
conversation, response, each criterion's final verdict, every judge's vote and explanation and
any human label; then the agreement of each judge with the human labels (``--labels`` file, or
the labels reviewers stored in the run with ``assay review``), and the reliability between
judges when there are several. :func:`compare_runs` pairs two runs on their common items.

Example (see tests/report)::

    run = load_run("runs/quickstart")
    run.scores.overall, run.scores.ci, len(run.items), run.agreement
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.item import Item
from assay.metrics.compare import ComparisonReport
from assay.metrics.sources import open_run
from assay.metrics.summary import AgreementSummary
from assay.report.compact import CompactVerdicts, StoredRubrics
from assay.report.overview import RunOverview
from assay.rubric import Rubric
from assay.runs.results import RunScores, Scoring, iter_final_verdicts, score_run
from assay.runs.status import RunStatus, run_status
from assay.verdict import Verdict


@dataclass(frozen=True)
class Vote:
    """One judge's (or one human's) answer on one criterion."""

    source: str
    label: str
    explanation: str


@dataclass
class CriterionRow:
    id: str
    text: str
    weight: float
    axis: str | None
    final: str | None
    votes: list[Vote] = field(default_factory=list)
    human: list[Vote] = field(default_factory=list)

    @property
    def judges_disagree(self) -> bool:
        return len({v.label for v in self.votes}) > 1

    @property
    def human_disagrees(self) -> bool:
        return bool(self.human) and self.final is not None and any(
            h.label != self.final for h in self.human)


@dataclass
class ItemRow:
    index: int
    id: str
    conversation: list[tuple[str, str]]
    response: str
    score: float | None
    tags: list[str]
    criteria: list[CriterionRow]
    context: list[tuple[str, str]] = field(default_factory=list)
    """Retrieved passages shown to the judge, as (label, text)."""

    @property
    def disagreements(self) -> int:
        return sum(c.judges_disagree or c.human_disagrees for c in self.criteria)


@dataclass
class RunReport:
    name: str
    path: Path
    manifest: dict[str, Any]
    scores: RunScores
    items: list[ItemRow]
    """Every item whole; empty when :func:`load_run` handed them to ``on_item`` instead."""
    judges: list[str]
    final_verdicts: CompactVerdicts
    """The aggregated verdict of each item × criterion (scores and comparisons use these)."""
    stored_rubrics: StoredRubrics
    labels: list[Verdict]
    agreement: AgreementSummary | None
    overview: RunOverview
    """Counts and per-criterion tables of the items, summed as they were read."""
    status: RunStatus | None = None
    """Whether the run is complete, and why not (:func:`assay.runs.status.run_status`)."""
    ensemble: AgreementSummary | None = None
    """The aggregated verdicts' agreement with the human labels (several judges and labels)."""
    routing: dict[str, Any] | None = None
    """A taxonomy run's routing (RubricsTree): taxonomy, router and summary; None otherwise."""

    @property
    def verdicts(self) -> list[Verdict]:
        """Every judge's vote on the report's items, read back from the run's store."""
        return list(stored_votes(self.path, self.scores.scoring, self.stored_rubrics))

    @property
    def finals(self) -> list[Verdict]:
        return list(self.final_verdicts)

    @cached_property
    def rubrics(self) -> dict[str, Rubric]:
        """Each item's rubric, read back from the run's store once (then kept)."""
        return self.stored_rubrics.as_dict()


def load_run(path: str | Path, *, labels: str | Path | None = None,
             on_item: Callable[[ItemRow, Rubric], None] | None = None,
             max_items: int | None = None) -> RunReport:
    """Everything a report shows of the run at ``path`` (see the module docstring).

    ``on_item``: each item is handed to it whole as it is read (with its rubric) and not kept:
    the report keeps its counts (:class:`RunOverview`, whose disagreements count the first
    ``max_items``), its final verdicts as small tuples and its rubric's hash (the votes and
    rubrics are read back from the store when a figure needs them), so that a run of any size
    is read in little memory (``assay report`` streams the items into the page this way).
    """
    path = Path(path)
    if not (path / "run.sqlite").is_file():
        raise InputError(Issue(str(path), None, None, "not a run directory (no run.sqlite)"))
    store = open_run(path)
    try:
        status = run_status(path, store=store)
        scoring = Scoring.from_config(store.config())
        scores = score_run(store, scoring, group_cis=True)
        human = _human_labels(path, labels)
        human_by_key = _group(human)
        item_scores = scores.scores
        items: list[ItemRow] = []
        read: list[str] = []
        finals, overview = CompactVerdicts(), RunOverview(max_items)
        judges: set[str] = set()
        for number, (item, rubric, aggregated_by_id) in enumerate(iter_final_verdicts(store, scoring)):
            rows = []
            for criterion in rubric.criteria:
                aggregated = aggregated_by_id[criterion.id]
                shown = []
                for vote in aggregated.votes:
                    judges.add(vote.verdict.judge)
                    shown.append(Vote(vote.verdict.judge, _label(vote.verdict),
                                      vote.verdict.explanation))
                final = aggregated.verdict
                if final is not None:
                    finals.add(final)
                rows.append(CriterionRow(
                    criterion.id, criterion.text, criterion.weight, criterion.axis,
                    _label(final) if final is not None else None, shown,
                    [Vote(h.judge, _label(h), h.explanation)
                     for h in human_by_key.get((item.id, criterion.id), [])]))
            row = ItemRow(number, item.id, _conversation(item), item.response or "",
                          item_scores.get(item.id), list(item.tags), rows, _context(item))
            overview.add(row)
            read.append(item.id)
            if on_item is not None:
                on_item(row, rubric)
            else:
                items.append(row)
        hashes = store.rubric_hashes()
        rubrics = StoredRubrics(path, {item_id: hashes[item_id] for item_id in read})
        manifest = _manifest(path)
        routing = _routing(store.meta("routing"))
    finally:
        store.close()
    agreement = ensemble = None
    compared = bool(human) or len(judges) > 1
    # the votes are read again only for the figures that compare them
    every_vote = (list(stored_votes(path, scoring, rubrics)) if compared or labels is not None
                  else [])
    if labels is not None:
        from assay.metrics.label_sources import check_labels_match

        check_labels_match(human, every_vote, labels)
    if compared:
        by_item = rubrics.as_dict()
        agreement = _agreement(every_vote, human, by_item, scoring)
        if human and len(judges) > 1:
            name = f"ensemble ({scoring.aggregation})"
            ensemble = _agreement([f.model_copy(update={"judge": name}) for f in finals],
                                  human, by_item, scoring)
    return RunReport(path.name or str(path), path, manifest, scores, items, sorted(judges),
                     finals, rubrics, human, agreement, overview, status, ensemble,
                     routing)


def compare_runs(a: RunReport, b: RunReport, *, seed: int = 0) -> ComparisonReport:
    """Paired tests of run ``a`` against run ``b`` on the items both graded in full (an item
    with a criterion left without a verdict on either side is left out): each item
    scored under run ``a``'s rubric and scoring, one item at a time (the rubrics are read back
    from ``a``'s store), as :func:`assay.metrics.summary.comparison` would score them."""
    from assay.metrics.scores import item_scores
    from assay.metrics.summary import paired_comparison

    ungraded = {*a.scores.table.ungraded_ids(), *b.scores.table.ungraded_ids()}
    common = (a.stored_rubrics.item_ids() & b.stored_rubrics.item_ids()) - ungraded
    if not common:
        raise InputError(Issue(str(b.path), None, None,
                               f"no item in common with {a.path}: nothing to compare"))
    scoring = a.scores.scoring
    scores_a: dict[str, float | None] = {}
    scores_b: dict[str, float | None] = {}
    for item_id, rubric in a.stored_rubrics.each(sorted(common)):
        criteria = {item_id: rubric.criteria}
        for side, run in ((scores_a, a), (scores_b, b)):
            side.update(item_scores(criteria, run.final_verdicts.of_item(item_id),
                                    formula=scoring.formula, abstention=scoring.abstention))
    return paired_comparison(scores_a, scores_b, a.final_verdicts.of_items(common),
                             b.final_verdicts.of_items(common), labels=a.labels or None,
                             formula=scoring.formula, seed=seed,
                             compared=f"aggregated verdicts ({scoring.aggregation})")


def stored_votes(path: Path, scoring: Scoring, items: StoredRubrics) -> Iterator[Verdict]:
    """Every judge's vote on ``items`` (a report's items) as the scoring sees them, streamed
    from the run's store."""
    store = open_run(path)
    try:
        for item, rubric, finals in iter_final_verdicts(store, scoring):
            if item.id in items:
                for criterion in rubric.criteria:
                    yield from (vote.verdict for vote in finals[criterion.id].votes)
    finally:
        store.close()


def _label(verdict: Verdict) -> str:
    return verdict.option if verdict.option is not None else str(verdict.decision)  # a StrEnum


def _group(labels: list[Verdict]) -> dict[tuple[str, str], list[Verdict]]:
    grouped: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for label in labels:
        grouped[(label.item_id, label.criterion_id)].append(label)
    return grouped


def _conversation(item: Item) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in item.messages]  # role: a Literal of strings


def _context(item: Item) -> list[tuple[str, str]]:
    return [(p.id or p.source or f"passage {n}", p.text) for n, p in enumerate(item.context, 1)]


def _human_labels(run: Path, labels: str | Path | None) -> list[Verdict]:
    from assay.metrics.label_sources import labels_for, stored_labels

    return labels_for(run, labels)[0] if labels is not None else stored_labels(run)


def _routing(stored: str | None) -> dict[str, Any] | None:
    """What the report shows of a taxonomy run's routing (the per-item routings stay out: the
    items' rubrics are their active leaves)."""
    if not stored:
        return None
    routing = json.loads(stored)
    return {"taxonomy": routing.get("taxonomy") or {}, "router": routing.get("router") or {},
            "summary": routing.get("summary") or {}, "failed": routing.get("failed") or {}}


def _manifest(run: Path) -> dict[str, Any]:
    path = run / "manifest.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}


def _agreement(verdicts, human, rubrics, scoring) -> AgreementSummary | None:
    from assay.metrics.sources import Rubrics
    from assay.metrics.summary import agreement_summary

    if not human:  # several judges and no labels: reliability between judges only
        from assay.metrics.summary import reliability_summary

        return reliability_summary(verdicts, Rubrics(per_item=rubrics), formula=scoring.formula,
                                   abstention=scoring.abstention)
    return agreement_summary(verdicts, human, Rubrics(per_item=rubrics), formula=scoring.formula,
                             abstention=scoring.abstention)
