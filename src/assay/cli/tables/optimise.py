"""The tables of ``assay refine --method rubricstree``: base vs revised overall and per axis,
then each leaf's pass rate before and after."""

from __future__ import annotations

from typing import Any

from assay.cli.tables.cells import fmt, fmt_test, new_table


def optimise_tables(result: Any) -> list[Any]:
    """Eq. 4 of the revision against the base response, overall and per axis; per-leaf gains."""
    main = new_table(f"RubricsTree response optimisation ({result.status}; revised "
                     f"{result.revised}, left alone {len(result.left_alone)} with no failed leaf, "
                     f"of {len(result.base_scores) or result.revised} items)",
                     ["scope", "items", "base", "revised", "Δ [95% CI]", "Wilcoxon",
                      "permutation", "Cohen's d"])
    rows = ([("overall", result.versus_base)] if result.versus_base is not None else [])
    rows += [(f"axis: {name}", c) for name, c in result.per_axis.items()]
    for scope, c in rows:
        main.add_row(scope, str(c.n_items), fmt(c.mean_b), fmt(c.mean_a), fmt(c.mean_difference),
                     fmt_test(c.wilcoxon), fmt_test(c.permutation), fmt(c.cohens_d))
    leaves = new_table("Per-leaf pass rate (items graded on the leaf both times)",
                       ["leaf", "items", "base", "revised", "gain", "fixed", "broken"])
    for g in result.per_leaf:
        leaves.add_row(g.leaf_id, str(g.n_items), f"{g.base_passed / g.n_items:.3f}",
                       f"{g.revised_passed / g.n_items:.3f}", f"{g.gain:+.3f}", str(g.fixed),
                       str(g.broken))
    return [main, leaves]
