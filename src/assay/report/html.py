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

import time
from collections.abc import Sequence
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


def build_report(runs: Sequence[RunReport], *, max_items: int = 5000, seed: int = 0) -> str:
    """The HTML text of a report on ``runs`` (the first run is the baseline of comparisons)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(_TEMPLATES),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    comparisons = [Comparison(runs[0].name, other.name, compare_runs(runs[0], other, seed=seed))
                   for other in runs[1:]]
    template = env.get_template("report.html.j2")
    return template.render(
        runs=[_run_view(run, max_items) for run in runs],
        comparisons=comparisons,
        forest=_forest(comparisons),
        generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )


def write_report(runs: Sequence[str | Path], out: str | Path, *, labels: str | Path | None = None,
                 max_items: int = 5000, seed: int = 0) -> Path:
    """Load ``runs`` (run directories), build the report and write it to ``out``."""
    loaded = [load_run(run, labels=labels) for run in runs]
    out = Path(out)
    out.write_text(build_report(loaded, max_items=max_items, seed=seed), encoding="utf-8")
    return out


def _run_view(run: RunReport, max_items: int) -> dict[str, Any]:
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
        "data": payload.encode(payload.run_payload(run, shown)),
        "item_count": len(shown),
        "truncated": len(run.items) - len(shown),
        "n_disagreements": sum(c.judges_disagree or c.human_disagrees
                               for item in shown for c in item.criteria),
    }


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


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
