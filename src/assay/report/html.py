"""``assay report``: one self-contained HTML file for one or several runs.

Everything is inline (CSS, SVG figures, the script that lists, filters and draws the items from
their compressed data: :mod:`assay.report.payload`), so the file opens offline and can be mailed
or archived. Every text that comes from a model or an input file goes through Jinja2's
autoescaping or, in the item lists, in as a text node: a response containing ``<script>`` shows
as text and never runs.

The page's building blocks are Jinja2 macros (``templates/blocks.html.j2``: a shortened,
expandable text; a judge's short name with its whole id on hover; a figure with its CI) and
filters (:func:`template_environment`), for any page that shows runs.

Example (see tests/report)::

    write_report(["runs/a", "runs/b"], "report.html")
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.metrics.compare import ComparisonReport
from assay.metrics.item_changes import ItemChange
from assay.report import payload, plots
from assay.report.data import RunReport, compare_runs, load_run
from assay.report.judge_names import short_judge_names
from assay.report.meaning import option_meaning, shown_label
from assay.report.rows import ItemRow
from assay.rubric import Rubric

_TEMPLATES = Path(__file__).parent / "templates"
MOST_FAILED = 25


@dataclass
class Comparison:
    a: str
    b: str
    report: ComparisonReport
    number: int
    """Its place among the report's comparisons (its item-by-item data's)."""


def template_environment() -> Any:
    """The Jinja2 environment of the report's templates, autoescaping, with its filters:
    ``num`` (3 decimals), ``pct`` and ``thousands`` (``12,345``)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(_TEMPLATES),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["thousands"] = thousands
    return env


def _render(runs: Sequence[RunReport], data: Sequence[payload.Payload],
            judges: Sequence[payload.Payload | None],
            compared: Sequence[tuple[ComparisonReport, payload.Payload]], *,
            title: str | None = None, preface: str | None = None) -> Iterator[str]:
    """The HTML text of a report on ``runs`` (the first run is the baseline of comparisons), in
    pieces, with ``data``: each run's items as :class:`~assay.report.payload.PayloadWriter`
    wrote them, ``judges``: each run's per-criterion agreement between judges (None: one
    judge), and ``compared``: each other run's paired tests against the first with its
    item-by-item data, streamed into the page where the template marks their places; ``title``
    and ``preface`` (HTML, already escaped) head the page (the eval's report)."""
    comparisons = [Comparison(runs[0].name, other.name, report, n)
                   for n, (other, (report, _)) in enumerate(zip(runs[1:], compared))]
    views, blobs = [], []
    for n, run in enumerate(runs):
        view = _run_view(run, _marker(f"run-{n}"),
                         _marker(f"judges-{n}") if judges[n] is not None else None)
        views.append(view)
        blobs += [(view["data"], data[n]), (view["judges_data"], judges[n])]
    compare_markers = [_marker(f"compare-{n}") for n in range(len(compared))]
    blobs += [(marker, blob) for marker, (_, blob) in zip(compare_markers, compared)]
    template = template_environment().get_template("report.html.j2")
    pieces = template.generate(
        runs=views,
        comparisons=comparisons,
        compare_data=compare_markers,
        groups=_groups_side_by_side(runs) if len(runs) > 1 else [],
        forest=_forest(comparisons),
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        title=title, preface=preface,
    )
    places = {marker: blob for marker, blob in blobs if marker is not None and blob is not None}
    pattern = re.compile("|".join(map(re.escape, places)))
    for piece in pieces:
        start = 0
        for found in pattern.finditer(piece):
            yield piece[start:found.start()]
            yield from places[found.group()].base64_pieces()
            start = found.end()
        yield piece[start:]


def _adding_to(writer: payload.PayloadWriter) -> Callable[[ItemRow, Rubric], None]:
    """``load_run``'s ``on_item``: each item into ``writer`` (its rubric is not needed)."""
    def add(row: ItemRow, _rubric: Rubric) -> None:
        writer.add(row)
    return add


def _marker(name: str) -> str:
    """A text no input can contain by chance, standing for a document in the template."""
    return f"assay-data-{secrets.token_hex(16)}-{name}"


def write_report(runs: Sequence[str | Path], out: str | Path, *, labels: str | Path | None = None,
                 max_items: int = 5000, seed: int = 0, title: str | None = None,
                 preface: str | None = None) -> Path:
    """Load ``runs`` (run directories), build the report and write it to ``out``; ``title``
    and ``preface`` (escaped HTML) head it instead of the plain report's title."""
    loaded: list[RunReport] = []
    blobs: list[payload.Payload] = []
    try:
        data: list[payload.Payload] = []
        for run in runs:  # each run's items compressed as they are read: bounded memory
            writer = payload.PayloadWriter(Path(run).name or str(run), max_items=max_items)
            loaded.append(load_run(run, labels=labels, max_items=max_items,
                                   on_item=_adding_to(writer)))
            data.append(writer.finish())
            blobs.append(data[-1])
        judges = [_judges_payload(run) for run in loaded]
        blobs += [blob for blob in judges if blob is not None]
        compared = []
        for other in loaded[1:]:
            items = ComparedItems(loaded[0], other)
            report = compare_runs(loaded[0], other, seed=seed, on_item=items.add)
            compared.append((report, items.finish()))
            blobs.append(compared[-1][1])
        out = Path(out)
        partial = out.with_name(out.name + ".partial")  # a failed build leaves no half a report
        try:
            with partial.open("w", encoding="utf-8") as file:  # in pieces: never held whole
                file.writelines(_render(loaded, data, judges, compared, title=title,
                                        preface=preface))
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    finally:
        for blob in blobs:
            blob.close()
    return out


class ComparedItems:
    """The item-by-item view of run ``b`` against run ``a``, compressed as the items are
    compared: ``{"a", "b", "items": [...]}``, each item with its number in each run's list, its
    preview, its two scores, B − A, and each criterion's verdict in A and B (criterion text,
    points, shown label and meaning on each side)."""

    def __init__(self, a: RunReport, b: RunReport):
        self.a, self.b = a, b
        self._out = payload.CompressedText()
        self._count = 0
        self._out.write('{"a":' + json.dumps(a.name, ensure_ascii=False) + ',"b":'
                        + json.dumps(b.name, ensure_ascii=False) + ',"items":[')

    def add(self, change: ItemChange, rubric: Rubric) -> None:
        values = {c.id: {o.label: o.value for o in c.options if not o.na and o.value is not None}
                  for c in rubric.criteria if c.options}
        criteria = []
        for c in change.criteria:
            sides = [(shown_label(x, c.weight), option_meaning(x, c.weight, values.get(c.criterion_id, {})))
                     for x in (c.a, c.b)]
            criteria.append([c.text, c.weight, *sides[0], *sides[1], c.flipped])
        record = {"id": change.item_id, "i": self.a.item_indexes[change.item_id],
                  "j": self.b.item_indexes.get(change.item_id),
                  "preview": self.a.previews.get(change.item_id, ""),
                  "a": change.score_a, "b": change.score_b, "d": change.difference,
                  "flipped": change.flipped, "criteria": criteria}
        self._out.write(("," if self._count else "")
                        + json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self._count += 1

    def finish(self) -> payload.Payload:
        self._out.write("]}")
        return self._out.finish()


def _run_view(run: RunReport, data: str, judges_data: str | None) -> dict[str, Any]:
    """What the template shows of ``run``; ``data``, ``judges_data``: the texts standing for
    its item data and its per-criterion judge agreement (None: it has none)."""
    scores = run.scores
    overview = run.overview
    values = [score for score in scores.scores.values() if score is not None]
    axes = {name: (s.mean, s.ci_low, s.ci_high) for name, s in scores.by_axis.items()}
    themes = {name: (s.mean, s.ci_low, s.ci_high) for name, s in scores.by_theme.items()}
    names = short_judge_names([*run.judges, *_agreement_judges(run)])
    return {
        "run": run,
        "names": names,
        "totals": run.manifest.get("totals", {}),
        "timing": run.manifest.get("timing", {}),
        "histogram": plots.score_histogram(values) if values else None,
        "axes_plot": plots.interval_bars(axes, "By axis") if axes else None,
        "themes_plot": plots.interval_bars(themes, "By theme") if themes else None,
        "confusions": _confusions(run, names),
        "data": data,
        "judges_data": judges_data,
        "item_count": overview.listed,
        "truncated": overview.items - overview.listed,
        "n_disagreements": overview.disagreements,
        "criteria": overview.most_failed()[:MOST_FAILED],
        "criterion_texts": overview.criterion_texts,
        "leaves": overview.active_leaves() if run.routing is not None else [],
        "config": _config(run.manifest),
    }


def _agreement_judges(run: RunReport) -> list[str]:
    reports = [*(run.agreement.reports if run.agreement else []),
               *(run.ensemble.reports if run.ensemble else [])]
    return [r.judge for r in reports]


def _judges_payload(run: RunReport) -> payload.Payload | None:
    """The per-criterion agreement between the run's judges as the page draws it: each
    listed criterion's text, units and figures (value, CI, reason), then the pool."""
    table = run.judge_criteria
    if table is None:
        return None
    texts = run.overview.criterion_texts

    def figures(f: Any) -> list[Any]:
        return [f.n_units, _metric(f.alpha), f.alpha_level, _metric(f.fleiss_kappa),
                _metric(f.percent_agreement), _metric(f.ac1)]

    pooled = table.pooled
    return payload.payload_of({
        "min_units": table.min_units,
        "rows": [[texts.get(r.criterion_id, r.criterion_id), *figures(r.figures)]
                 for r in table.rows],
        "pooled": None if pooled is None else [table.pooled_criteria, *figures(pooled)],
    })


def _metric(metric: Any) -> list[Any]:
    ci = metric.ci
    return [metric.value, None if ci is None else ci.low, None if ci is None else ci.high,
            metric.reason or ""]


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


def _confusions(run: RunReport, names: dict[str, str]) -> list[tuple[str, str]]:
    if run.agreement is None:
        return []
    out = []
    for report in run.agreement.reports:
        c = report.pooled.binary.confusion
        matrix = [[c.get("tn", 0), c.get("fp", 0)], [c.get("fn", 0), c.get("tp", 0)]]
        name = names.get(report.judge, report.judge)
        out.append((report.judge, plots.confusion_matrix(matrix, ["UNMET", "MET"],
                                                         f"{name} vs humans")))
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


def thousands(value: Any) -> str:
    """A count with thousands separators.

    >>> thousands(1234567), thousands(None), thousands(12.0)
    ('1,234,567', '–', '12')
    """
    if value is None:
        return "–"
    return f"{round(value):,}"


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
