"""The tables of ``assay score``: the scores of many items (and HealthBench's own figures)."""

from __future__ import annotations

from typing import Any

from assay.scoring import ScoreTable


def score_tables(table: ScoreTable) -> list[Any]:
    """HealthBench's official figures (when the formula is healthbench), then the scores."""
    from rich.table import Table

    tables: list[Any] = []
    if table.healthbench is not None:
        report = table.healthbench
        hb = Table(title="HealthBench (official: clipped mean, bootstrap std)")
        for column in ("metric", "score", "bootstrap std", "n"):
            hb.add_column(column, justify="left" if column == "metric" else "right")
        hb.add_row("overall", f"{report.overall:.4f}", f"{report.bootstrap_std:.4f}",
                   str(report.n))
        for group, stats in (("axis", report.by_axis), ("theme", report.by_theme)):
            for name, stat in sorted(stats.items()):
                hb.add_row(f"{group}:{name}", f"{stat.mean:.4f}", f"{stat.bootstrap_std:.4f}",
                           str(stat.n_samples))
        tables.append(hb)
    summary = Table(title=f"Scores ({table.formula})")
    for column in ("items", "scored", "mean", "95% CI"):
        summary.add_column(column, justify="right")
    ci = ("-" if table.ci_low is None else f"[{table.ci_low:.4f}, {table.ci_high:.4f}]")
    summary.add_row(str(len(table.items)), str(len(table.items) - table.n_unscored),
                    "-" if table.mean is None else f"{table.mean:.4f}", ci)
    tables.append(summary)
    if table.n_ungraded:  # before the figures' readers take them for the whole input
        tables.insert(0, f"unscored, a criterion not graded (a failed or skipped judge call; "
                         f"no figure below includes them): {ungraded_line(table)}")
    return tables


def ungraded_line(table: ScoreTable, shown: int = 5) -> str:
    """``N items (id, id, … and K more)``: the items left unscored because a criterion has
    no verdict."""
    ids = table.ungraded_ids()
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)} item{'s' if len(ids) != 1 else ''} ({', '.join(ids[:shown])}{more})"
