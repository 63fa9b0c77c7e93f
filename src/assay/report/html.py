"""``assay report``: one self-contained HTML file for one or several runs.

Everything is inline (CSS, SVG figures, the script that lists, filters and draws the items from
their compressed data: :mod:`assay.report.payload`), so the file opens offline and can be mailed
or archived. Every text that comes from a model or an input file goes through Jinja2's
autoescaping or, in the item lists, in as a text node: a response containing ``<script>`` shows
as text and never runs.

Example (see tests/report)::

    write_report(["runs/a", "runs/b"], "report.html")
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.metrics.compare import ComparisonReport
from assay.report import payload, plots
from assay.report.data import ItemRow, RunReport, compare_runs, load_run

_TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class Comparison:
    a: str
    b: str
    report: ComparisonReport


def _render(runs: Sequence[RunReport], data: Sequence[str], *, max_items: int = 5000,
                 seed: int = 0) -> str:
    """The HTML text of a report on ``runs`` (the first run is the baseline of comparisons),
    with ``data``: each run's items as :class:`~assay.report.payload.PayloadWriter` wrote them."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(_TEMPLATES),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["heat"] = _heat
    comparisons = [Comparison(runs[0].name, other.name, compare_runs(runs[0], other, seed=seed))
                   for other in runs[1:]]
    template = env.get_template("report.html.j2")
    return template.render(
        runs=[_run_view(run, blob, max_items) for run, blob in zip(runs, data)],
        comparisons=comparisons,
        groups=_groups_side_by_side(runs) if len(runs) > 1 else [],
        forest=_forest(comparisons),
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )


def write_report(runs: Sequence[str | Path], out: str | Path, *, labels: str | Path | None = None,
                 max_items: int = 5000, seed: int = 0) -> Path:
    """Load ``runs`` (run directories), build the report and write it to ``out``."""
    loaded, data = [], []
    for run in runs:  # each run's items compressed as they are read: bounded memory
        writer = payload.PayloadWriter(Path(run).name or str(run), max_items=max_items)
        loaded.append(load_run(run, labels=labels, on_item=writer.add))
        data.append(writer.finish())
    out = Path(out)
    out.write_text(_render(loaded, data, max_items=max_items, seed=seed), encoding="utf-8")
    return out


def _run_view(run: RunReport, data: str, max_items: int) -> dict[str, Any]:
    scores = run.scores
    shown = run.items[:max_items]
    values = [i.score for i in run.items if i.score is not None]
    axes = {name: (s.mean, s.ci_low, s.ci_high) for name, s in scores.by_axis.items()}
    themes = {name: (s.mean, s.ci_low, s.ci_high) for name, s in scores.by_theme.items()}
    return {
        "run": run,
        "totals": run.manifest.get("totals", {}),
        "timing": run.manifest.get("timing", {}),
        "histogram": plots.score_histogram(values) if values else None,
        "axes_plot": plots.interval_bars(axes, "By axis") if axes else None,
        "themes_plot": plots.interval_bars(themes, "By theme") if themes else None,
        "confusions": _confusions(run),
        "data": data,
        "item_count": len(shown),
        "truncated": len(run.items) - len(shown),
        "n_disagreements": sum(c.judges_disagree or c.human_disagrees
                               for item in shown for c in item.criteria),
        "criteria": criterion_outcomes(run.items)[:MOST_FAILED],
        "criterion_texts": {c.id: c.text for item in run.items for c in item.criteria},
        "leaves": active_leaves(run.items) if run.routing is not None else [],
        "config": _config(run.manifest),
    }


MOST_FAILED = 25


@dataclass
class CriterionOutcomes:
    """How one criterion fared across a run's items (grouped by id and text)."""

    id: str
    text: str
    points: float
    graded: int = 0
    failed: int = 0
    """Missed (a positive criterion unmet) or harmful (a penalty met)."""
    abstained: int = 0
    errors: int = 0
    """No verdict: every call for it failed."""

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.graded if self.graded else None


def criterion_outcomes(items: Sequence[ItemRow]) -> list[CriterionOutcomes]:
    """Every criterion's failures, abstentions and errors, the most often failed first.

    >>> from assay.report.data import CriterionRow, ItemRow
    >>> rows = lambda final: [CriterionRow("c", "Says C.", 2.0, None, final)]
    >>> items = [ItemRow(i, f"q{i}", [], "", None, [], rows(f)) for i, f in
    ...          enumerate(["UNMET", "MET", "CANNOT_ASSESS", None])]
    >>> (o := criterion_outcomes(items)[0]).failed, o.graded, o.abstained, o.errors
    (1, 2, 1, 1)
    """
    from assay.report.payload import meaning

    by_key: dict[tuple[str, str], CriterionOutcomes] = {}
    for item in items:
        for row in item.criteria:
            outcome = by_key.setdefault((row.id, row.text),
                                        CriterionOutcomes(row.id, row.text, row.weight))
            what = meaning(row.final, row.weight)
            if what == "failed":
                outcome.errors += 1
            elif what == "abstained":
                outcome.abstained += 1
            else:
                outcome.graded += 1
                outcome.failed += what in ("missed", "harmful")
    return sorted(by_key.values(), key=lambda o: (-o.failed, -(o.failure_rate or 0.0), o.id))


@dataclass
class ActiveLeaf:
    """How often a taxonomy leaf was routed to, and how the answers fared on it."""

    id: str
    text: str
    axis: str | None
    active: int = 0
    met: int = 0


def active_leaves(items: Sequence[ItemRow]) -> list[ActiveLeaf]:
    """A taxonomy run's leaves by how many items the router activated them for (an item's
    rubric is its active leaves), with how many of those answers met them."""
    leaves: dict[str, ActiveLeaf] = {}
    for item in items:
        for row in item.criteria:
            leaf = leaves.setdefault(row.id, ActiveLeaf(row.id, row.text, row.axis))
            leaf.active += 1
            leaf.met += row.final == "MET"
    return sorted(leaves.values(), key=lambda leaf: (-leaf.active, leaf.id))


def _config(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The settings a reader needs to trust the figures, from the run's manifest: the judges,
    the scoring settings and the grading mode and templates."""
    config = manifest.get("config") or {}
    shown = []
    judges = [j.get("spec", j.get("id")) for j in config.get("judges") or [] if isinstance(j, dict)]
    if judges:
        shown.append(("judges", ", ".join(str(j) for j in judges)))
    for section, keys in (("scoring", None), ("grading", ("mode", "templates", "shuffle"))):
        values = config.get(section) or {}
        for key, value in values.items() if isinstance(values, dict) else ():
            if (keys is None or key in keys) and value not in (None, "", [], {}):
                shown.append((key, value if isinstance(value, str) else json.dumps(value)))
    return shown


def _groups_side_by_side(runs: Sequence[RunReport]) -> list[dict[str, Any]]:
    """Each axis and theme with every run's mean and CI, for reading runs across."""
    rows = []
    for kind in ("axis", "theme"):
        names: list[str] = []
        for run in runs:
            groups = run.scores.by_axis if kind == "axis" else run.scores.by_theme
            names += [n for n in groups if n not in names]
        for name in names:
            cells = []
            for run in runs:
                groups = run.scores.by_axis if kind == "axis" else run.scores.by_theme
                cells.append(groups.get(name))
            rows.append({"kind": kind, "name": name, "cells": cells})
    return rows


def _confusions(run: RunReport) -> list[tuple[str, str]]:
    if run.agreement is None:
        return []
    out = []
    for report in run.agreement.reports:
        c = report.pooled.binary.confusion
        matrix = [[c.get("tn", 0), c.get("fp", 0)], [c.get("fn", 0), c.get("tp", 0)]]
        out.append((report.judge, plots.confusion_matrix(matrix, ["UNMET", "MET"],
                                                         f"{report.judge} vs humans")))
    return out


def _forest(comparisons: Sequence[Comparison]) -> str | None:
    rows = []
    for c in comparisons:
        diff = c.report.scores.mean_difference
        if diff.value is None:
            continue
        low, high = (diff.ci.low, diff.ci.high) if diff.ci is not None else (None, None)
        rows.append((f"{c.a} − {c.b}", diff.value, low, high))
    return plots.forest_plot(rows) if rows else None


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _heat(metric: Any) -> str:
    """A cell's background for an agreement in [0, 1]: red (none) through green (full).

    >>> _heat(None), _heat(type("M", (), {"value": 1.0})())
    ('#eef1f4', 'hsl(120, 55%, 85%)')
    """
    value = getattr(metric, "value", None)
    if value is None:
        return "#eef1f4"
    return f"hsl({round(120 * max(0.0, min(1.0, value)))}, 55%, 85%)"


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
