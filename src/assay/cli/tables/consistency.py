"""The tables of ``assay consistency`` and ``assay grade --repeats``: a judge's agreement with
itself across runs, and one table per sweep factor. Undefined figures print as "—" (reasons in
the JSON output)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.cli.tables.cells import fmt, new_table
from assay.metrics.consistency import HEADLINE_ICC, ConsistencyReport, JudgeConsistency

COLUMNS = ["items", "mean score", "α (runs)", "AC1 (runs)", HEADLINE_ICC, "mean item variance",
           "self-agreement"]


def _cells(c: JudgeConsistency) -> list[str]:
    flag = f"LOW: {c.flag_reason}" if c.flagged else f"ok (α ≥ {c.min_alpha:g})"
    return [str(c.n_items), fmt(c.mean_score), fmt(c.alpha), fmt(c.ac1), fmt(c.headline_icc),
            fmt(c.mean_item_variance, ".4f"), flag]


def consistency_table(report: ConsistencyReport, title: str | None = None) -> Any:
    table = new_table(title or f"Consistency across {len(report.runs)} runs "
                      f"({', '.join(report.runs)})", ["judge", *COLUMNS])
    for judge, c in report.judges.items():
        table.add_row(judge, *_cells(c))
    return table


def item_variance_table(report: ConsistencyReport, max_rows: int) -> Any | None:
    """The items whose score varies most between runs (per judge)."""
    rows = sorted(((judge, item_id, s) for judge, c in report.judges.items()
                   for item_id, s in c.items.items() if s.variance is not None),
                  key=lambda r: -(r[2].variance or 0.0))[:max_rows]
    if not rows:
        return None
    table = new_table("Run-to-run variance per item (largest first)",
                      ["item", "judge", "variance", "mean", *report.runs])
    for judge, item_id, s in rows:
        table.add_row(item_id, judge, f"{s.variance:.4f}", f"{s.mean:.3f}",
                      *["—" if s.scores.get(r) is None else f"{s.scores[r]:.3f}"
                        for r in report.runs])
    return table


def sweep_tables(sweep: Mapping[str, Mapping[str, ConsistencyReport]]) -> list[Any]:
    """One table per factor: a row per (level, judge)."""
    tables = []
    for factor, levels in sweep.items():
        table = new_table(f"Sweep: {factor}", [factor, "judge", "runs", *COLUMNS])
        for level, report in levels.items():
            for judge, c in report.judges.items():
                table.add_row(level, judge, str(len(c.runs)), *_cells(c))
        tables.append(table)
    return tables
