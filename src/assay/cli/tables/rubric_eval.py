"""The tables of the rubric-evaluation commands (``assay nearmiss build|judge``,
``assay refine``, ``assay rubric stats``); ``assay cia`` reuses the coverage tables of
``assay coverage``."""

from __future__ import annotations

from typing import Any

from assay.cli.tables.cells import fmt, fmt_test, new_table


def discrimination_overview(result: Any) -> Any:
    """Seed 000's Table 2: one row per rubric set."""
    table = new_table("Near-miss discrimination (ΔV̄ = ref − cand, position-debiased)",
                      ["rubric", "pairs", "win", "tie", "loss", "μΔ [95% CI]", "AUROC (paper)",
                       "AUROC (judge vote)", "AUROC (symmetric)", "totals ≠ Σw·hit"])
    for name, s in result.summaries.items():
        r = s.report
        n = max(r.n_pairs, 1)
        table.add_row(name, str(r.n_pairs), f"{r.wins / n:.3f}", f"{r.ties / n:.3f}",
                      f"{r.losses / n:.3f}", fmt(r.mu_delta), fmt(r.auroc_paper),
                      fmt(r.auroc_judge_vote), fmt(r.auroc_true_labels),
                      str(result.mismatches.get(name, 0)))
    return table


def refine_tables(result: Any) -> list[Any]:
    """Seed 000's Table 3 (base vs refined per condition), then the conditions head to head."""
    main = new_table("Refinement (HealthBench score against the gold rubrics)",
                     ["condition", "queries", "rewritten", "base", "refined", "Δ [95% CI]",
                      "Wilcoxon", "permutation", "Cohen's d"])
    for name, c in result.versus_base.items():
        main.add_row(name, str(c.n_items), str(result.rewritten.get(name, 0)), fmt(c.mean_b),
                     fmt(c.mean_a), fmt(c.mean_difference), fmt_test(c.wilcoxon),
                     fmt_test(c.permutation), fmt(c.cohens_d))
    tables = [main]
    if result.between:
        pairs = new_table("Refined vs refined (paired, same queries)",
                          ["conditions", "queries", "Δ [95% CI]", "Wilcoxon", "permutation"])
        for name, c in result.between.items():
            pairs.add_row(name, str(c.n_items), fmt(c.mean_difference), fmt_test(c.wilcoxon),
                          fmt_test(c.permutation))
        tables.append(pairs)
    return tables


def stats_table(source: str, stats: Any) -> Any:
    """§5.2's statistics of one rubric set."""
    table = new_table(f"Rubric statistics: {source}", ["statistic", "value"])
    table.add_row("queries", str(stats.queries))
    table.add_row("items total", str(stats.items))
    table.add_row("items per query (min / mean / max)",
                  f"{stats.per_query_min} / {stats.per_query_mean:.2f} / {stats.per_query_max}")
    table.add_row("negative items", str(stats.negatives))
    table.add_row("zero-point items", str(stats.zero_points))
    table.add_row("mean Σ positive points per query", f"{stats.mean_positive_points:.1f}")
    table.add_row("mean Σ |points| per query", f"{stats.mean_abs_points:.1f}")
    for axis, count in stats.axis_counts.items():
        flag = " (off-schema)" if axis in stats.off_schema_axes else ""
        table.add_row(f"axis {axis}{flag}", str(count))
    return table


def pairs_table(result: Any) -> Any:
    """What ``assay nearmiss build`` made: its pairs by method and by error type."""
    from rich.table import Table

    table = Table(
        title=f"{len(result.pairs)} near-miss pairs → {result.pairs_path}", title_justify="left"
    )
    table.add_column("made by / error type")
    table.add_column("pairs", justify="right")
    for method, count in sorted(result.methods.items()):
        table.add_row(f"method {method}", str(count))
    for kind, count in sorted(result.error_types.items()):
        table.add_row(f"error {kind}", str(count))
    return table
