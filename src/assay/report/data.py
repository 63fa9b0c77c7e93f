"""What a report shows of a run, gathered from its store with no model call.

:func:`load_run` reads one run directory in one pass over its store: its status (complete or
not, and why: the report shows it in its header), its manifest (cost, tokens, latency), its
scores (the scoring core, with CIs overall, per axis and per theme), every finished item with
its conversation, response, each criterion's final verdict, every judge's vote and explanation
and any human label (:class:`~assay.report.rows.ItemRow`); then the agreement of each judge with
the human labels (``--labels`` file, or the labels reviewers stored in the run with ``assay
review``), and the reliability between judges when there are several, computed from compact
records of the votes kept as the store streams past. :func:`compare_runs` pairs two runs on
their common items.

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
from assay.metrics.compare import ComparisonReport
from assay.metrics.item_changes import ItemChange, item_change
from assay.metrics.sources import open_run
from assay.metrics.summary import AgreementSummary
from assay.report.compact import CompactVerdicts, JudgeVotes, StoredRubrics
from assay.report.judge_agreement import MIN_UNITS, JudgeCriteria, judge_criteria
from assay.report.overview import RunOverview
from assay.report.rows import ItemRow, item_row
from assay.rubric import Rubric
from assay.runs.results import RunScores, RunTally, Scoring, iter_final_verdicts
from assay.runs.status import RunStatus, run_status
from assay.verdict import Verdict


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
    judge_criteria: JudgeCriteria | None = None
    """Per-criterion agreement between the judges, by units, small criteria pooled."""
    item_indexes: dict[str, int] = field(default_factory=dict)
    """Each finished item's number in the report (its place in the run's item list)."""
    previews: dict[str, str] = field(default_factory=dict)
    """Each finished item's prompt preview (:attr:`ItemRow.preview`)."""

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
    ``max_items``), its final verdicts and votes as small tuples and each item's rubric in
    brief (ids, weights, options: what the scores and the agreement need), so that a run of any
    size is read in little memory (``assay report`` streams the items into the page this way).
    """
    path = Path(path)
    if not (path / "run.sqlite").is_file():
        raise InputError(Issue(str(path), None, None, "not a run directory (no run.sqlite)"))
    store = open_run(path)
    try:
        status = run_status(path, store=store)
        scoring = Scoring.from_config(store.config())
        human = _human_labels(path, labels)
        human_by_key = _group(human)
        routing = _routing(store.meta("routing"))
        tally = RunTally(scoring)
        items: list[ItemRow] = []
        indexes: dict[str, int] = {}
        previews: dict[str, str] = {}
        finals, overview = CompactVerdicts(), RunOverview(max_items, leaves=routing is not None)
        # the judges' item scores serve only the reliability between judges without labels
        votes = JudgeVotes(formula=scoring.formula, abstention=scoring.abstention,
                           score_items=not human)
        for number, (item, rubric, aggregated) in enumerate(iter_final_verdicts(store, scoring)):
            scored = tally.score(item, rubric, aggregated)
            tally.keep(scored)
            row = item_row(number, item, rubric, aggregated, scored.scored.item.score,
                           abstention=scoring.abstention, human=human_by_key)
            votes.add(item.id, rubric.criteria,
                      [vote.verdict for outcome in aggregated.values() for vote in outcome.votes])
            finals.add_all(outcome.verdict for outcome in aggregated.values()
                           if outcome.verdict is not None)
            overview.add(row)
            indexes[item.id] = number
            previews[item.id] = row.preview
            if on_item is not None:
                on_item(row, rubric)
            else:
                items.append(row)
        scores = tally.scores(group_cis=True)
        hashes = store.rubric_hashes()
        rubrics = StoredRubrics(path, {item_id: hashes[item_id] for item_id in indexes})
        manifest = _manifest(path)
    finally:
        store.close()
    judges = votes.judges()
    agreement = ensemble = criteria = None
    if labels is not None:
        from assay.metrics.label_sources import check_labels_match

        check_labels_match(human, votes.votes, labels)
    if human:  # the labels and every vote, against the rubrics read back from the store
        from assay.metrics.sources import Rubrics
        from assay.metrics.summary import agreement_summary

        lookup = Rubrics(per_item=rubrics.as_dict())
        agreement = agreement_summary(list(votes.votes), human, lookup,
                                      formula=scoring.formula, abstention=scoring.abstention,
                                      min_units=MIN_UNITS)  # the report lists no smaller one
        if len(judges) > 1:
            name = f"ensemble ({scoring.aggregation})"
            ensemble = agreement_summary([f.model_copy(update={"judge": name}) for f in finals],
                                         human, lookup, formula=scoring.formula,
                                         abstention=scoring.abstention)
    elif len(judges) > 1:  # the judges alone: from the compact votes, as they streamed past
        agreement = AgreementSummary(formula=scoring.formula, reports=[],
                                     inter_judge=votes.reliability(min_units=MIN_UNITS))
    if agreement is not None and agreement.inter_judge is not None:
        criteria = judge_criteria(agreement.inter_judge, votes)
    return RunReport(path.name or str(path), path, manifest, scores, items, judges,
                     finals, rubrics, human, agreement, overview, status, ensemble,
                     routing, criteria, indexes, previews)


def compare_runs(a: RunReport, b: RunReport, *, seed: int = 0,
                 on_item: Callable[[ItemChange, Rubric], None] | None = None) -> ComparisonReport:
    """Paired tests of run ``a`` against run ``b`` on the items both graded in full (an item
    with a criterion left without a verdict on either side is left out): each item
    scored under run ``a``'s rubric and scoring, one item at a time (the rubrics are read back
    from ``a``'s store), as :func:`assay.metrics.summary.comparison` would score them.
    ``on_item``: each item's :class:`~assay.metrics.item_changes.ItemChange` (with its rubric),
    those left out too, is handed to it as it is compared, and not kept."""
    from assay.metrics.summary import paired_comparison

    ungraded = {*a.scores.table.ungraded_ids(), *b.scores.table.ungraded_ids()}
    scores_a: dict[str, float | None] = {}
    scores_b: dict[str, float | None] = {}
    for change, rubric in paired_items(a, b):
        if change.item_id not in ungraded:
            scores_a[change.item_id], scores_b[change.item_id] = change.score_a, change.score_b
        if on_item is not None:
            on_item(change, rubric)
    if not scores_a:
        raise InputError(Issue(str(b.path), None, None,
                               f"no item graded in full in both {a.path} and {b.path}: "
                               "nothing to compare"))
    common = scores_a.keys()
    scoring = a.scores.scoring
    return paired_comparison(scores_a, scores_b, a.final_verdicts.of_items(common),
                             b.final_verdicts.of_items(common), labels=a.labels or None,
                             formula=scoring.formula, seed=seed,
                             compared=f"aggregated verdicts ({scoring.aggregation})")


def paired_items(a: RunReport, b: RunReport) -> Iterator[tuple[ItemChange, Rubric]]:
    """Each item both runs finished, in run ``a``'s order, as an
    :class:`~assay.metrics.item_changes.ItemChange` (its score in each run under run ``a``'s
    rubric and scoring, and each criterion's verdict in A and in B), with that rubric."""
    common = a.stored_rubrics.item_ids() & b.stored_rubrics.item_ids()
    if not common:
        raise InputError(Issue(str(b.path), None, None,
                               f"no item in common with {a.path}: nothing to compare"))
    scoring = a.scores.scoring
    ordered = sorted(common, key=a.item_indexes.__getitem__)
    for item_id, rubric in a.stored_rubrics.each(ordered):
        yield item_change(item_id, rubric.criteria, a.final_verdicts.of_item(item_id),
                          b.final_verdicts.of_item(item_id), formula=scoring.formula,
                          abstention=scoring.abstention), rubric


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


def _group(labels: list[Verdict]) -> dict[tuple[str, str], list[Verdict]]:
    grouped: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for label in labels:
        grouped[(label.item_id, label.criterion_id)].append(label)
    return grouped


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

