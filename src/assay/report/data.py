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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.item import Item
from assay.metrics.compare import ComparisonReport
from assay.metrics.sources import open_run
from assay.metrics.summary import AgreementSummary
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
    judges: list[str]
    verdicts: list[Verdict]
    """Every judge's vote (per-judge agreement uses these)."""
    finals: list[Verdict]
    """The aggregated verdict of each item × criterion (scores and comparisons use these)."""
    rubrics: dict[str, Rubric]
    labels: list[Verdict]
    agreement: AgreementSummary | None
    status: RunStatus | None = None
    """Whether the run is complete, and why not (:func:`assay.runs.status.run_status`)."""
    ensemble: AgreementSummary | None = None
    """The aggregated verdicts' agreement with the human labels (several judges and labels)."""
    routing: dict[str, Any] | None = None
    """A taxonomy run's routing (RubricsTree): taxonomy, router and summary; None otherwise."""


def load_run(path: str | Path, *, labels: str | Path | None = None,
             on_item: Callable[[ItemRow, Rubric], None] | None = None) -> RunReport:
    """Everything a report shows of the run at ``path`` (see the module docstring).

    ``on_item``: each item is handed to it whole as it is read (with its rubric), and the
    report keeps only what its figures need (no conversation, response, passages or
    explanation), so that a run of any size is read in bounded memory (``assay report``
    streams the items into the page this way)."""
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
        items, verdicts, final_verdicts, rubrics = [], [], [], {}
        judges: set[str] = set()
        for number, (item, rubric, finals) in enumerate(iter_final_verdicts(store, scoring)):
            rubrics[item.id] = rubric
            rows = []
            for criterion in rubric.criteria:
                aggregated = finals[criterion.id]
                votes = []
                for vote in aggregated.votes:
                    verdict = vote.verdict
                    verdicts.append(verdict if on_item is None
                                    else verdict.model_copy(update={"explanation": ""}))
                    judges.add(verdict.judge)
                    votes.append(Vote(verdict.judge, _label(verdict), verdict.explanation))
                final = aggregated.verdict
                if final is not None:
                    final_verdicts.append(final)
                rows.append(CriterionRow(
                    criterion.id, criterion.text, criterion.weight, criterion.axis,
                    _label(final) if final is not None else None, votes,
                    [Vote(h.judge, _label(h), h.explanation)
                     for h in human_by_key.get((item.id, criterion.id), [])]))
            row = ItemRow(number, item.id, _conversation(item), item.response or "",
                          item_scores.get(item.id), list(item.tags), rows, _context(item))
            if on_item is not None:
                on_item(row, rubric)
                row = _light(row)
            items.append(row)
        manifest = _manifest(path)
        routing = _routing(store.meta("routing"))
    finally:
        store.close()
    if labels is not None:
        from assay.metrics.label_sources import check_labels_match

        check_labels_match(human, verdicts, labels)
    agreement = _agreement(verdicts, human, rubrics, scoring) if (human or len(judges) > 1) else None
    ensemble = None
    if human and len(judges) > 1:
        name = f"ensemble ({scoring.aggregation})"
        ensemble = _agreement([f.model_copy(update={"judge": name}) for f in final_verdicts],
                              human, rubrics, scoring)
    return RunReport(path.name or str(path), path, manifest, scores, items, sorted(judges),
                     verdicts, final_verdicts, rubrics, human, agreement, status, ensemble,
                     routing)


def compare_runs(a: RunReport, b: RunReport, *, seed: int = 0) -> ComparisonReport:
    """Paired tests of run ``a`` against run ``b`` on the items both finished."""
    from assay.metrics.sources import Rubrics
    from assay.metrics.summary import comparison

    common = set(a.rubrics) & set(b.rubrics)
    if not common:
        raise InputError(Issue(str(b.path), None, None,
                               f"no item in common with {a.path}: nothing to compare"))
    rubrics = Rubrics(per_item={i: a.rubrics[i] for i in common})
    return comparison([v for v in a.finals if v.item_id in common],
                      [v for v in b.finals if v.item_id in common], rubrics,
                      labels=a.labels or None, formula=a.scores.scoring.formula,
                      abstention=a.scores.scoring.abstention, seed=seed,
                      compared=f"aggregated verdicts ({a.scores.scoring.aggregation})")


def _light(row: ItemRow) -> ItemRow:
    """``row`` without its texts: what the report's figures and tables need of it."""
    return ItemRow(row.index, row.id, [], "", row.score, row.tags, [
        CriterionRow(c.id, c.text, c.weight, c.axis, c.final,
                     [Vote(v.source, v.label, "") for v in c.votes],
                     [Vote(h.source, h.label, "") for h in c.human])
        for c in row.criteria])


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
