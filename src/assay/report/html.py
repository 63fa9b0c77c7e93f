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
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.metrics.compare import ComparisonReport
from assay.report import payload, plots
from assay.report.data import RunReport, compare_runs, load_run

_TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class Comparison:
    a: str
    b: str
    report: ComparisonReport


def _render(runs: Sequence[RunReport], data: Sequence[payload.Payload], *,
            seed: int = 0, title: str | None = None, preface: str | None = None) -> Iterator[str]:
    """The HTML text of a report on ``runs`` (the first run is the baseline of comparisons), in
    pieces, with ``data``: each run's items as :class:`~assay.report.payload.PayloadWriter`
    wrote them, streamed into the page where the template marks each run's place; ``title``
    and ``preface`` (HTML, already escaped) head the page (the eval's report)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(_TEMPLATES),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["heat"] = _heat
    comparisons = [Comparison(runs[0].name, other.name, compare_runs(runs[0], other, seed=seed))
                   for other in runs[1:]]
    template = env.get_template("report.html.j2")
    # A marker no input text can contain by chance stands for each run's data in the template.
    markers = [f"assay-run-data-{secrets.token_hex(16)}-{n}" for n in range(len(runs))]
    pieces = template.generate(
        runs=[_run_view(run, marker) for run, marker in zip(runs, markers)],
        comparisons=comparisons,
        groups=_groups_side_by_side(runs) if len(runs) > 1 else [],
        forest=_forest(comparisons),
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        title=title, preface=preface,
    )
    places = dict(zip(markers, data))
    pattern = re.compile("|".join(map(re.escape, markers)))
    for piece in pieces:
        start = 0
        for found in pattern.finditer(piece):
            yield piece[start:found.start()]
            yield from places[found.group()].base64_pieces()
            start = found.end()
        yield piece[start:]


def write_report(runs: Sequence[str | Path], out: str | Path, *, labels: str | Path | None = None,
                 max_items: int = 5000, seed: int = 0, title: str | None = None,
                 preface: str | None = None) -> Path:
    """Load ``runs`` (run directories), build the report and write it to ``out``; ``title``
    and ``preface`` (escaped HTML) head it instead of the plain report's title."""
    loaded, data = [], []
    for run in runs:  # each run's items compressed as they are read: bounded memory
        writer = payload.PayloadWriter(Path(run).name or str(run), max_items=max_items)
        loaded.append(load_run(run, labels=labels, on_item=writer.add, max_items=max_items))
        data.append(writer.finish())
    out = Path(out)
    partial = out.with_name(out.name + ".partial")  # a failed build leaves no half a report
    try:
        with partial.open("w", encoding="utf-8") as file:  # in pieces: never held whole
            file.writelines(_render(loaded, data, seed=seed, title=title, preface=preface))
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
        for blob in data:
            blob.close()
    return out


def _run_view(run: RunReport, data: str) -> dict[str, Any]:
    """What the template shows of ``run``; ``data``: the text standing for its item data."""
    scores = run.scores
    overview = run.overview
    values = [score for score in scores.scores.values() if score is not None]
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
        "item_count": overview.listed,
        "truncated": overview.items - overview.listed,
        "n_disagreements": overview.disagreements,
        "criteria": overview.most_failed()[:MOST_FAILED],
        "criterion_texts": overview.criterion_texts,
        "leaves": overview.active_leaves() if run.routing is not None else [],
        "config": _config(run.manifest),
    }


MOST_FAILED = 25


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
