"""The tables of ``assay route eval`` and ``assay stress run``."""

from __future__ import annotations

from typing import Any


def route_eval_table(evaluation: Any, n_leaves: int) -> Any:
    """Precision, recall, F1, exact match and accuracy (%), pooled, per query, per branch and
    per scenario."""
    from rich.table import Table

    table = Table(title=f"routing vs experts: {evaluation.pooled.queries} queries, "
                        f"{n_leaves} leaves each")
    for col in ("slice", "queries", "precision", "recall", "F1", "exact match", "accuracy"):
        table.add_column(col, justify="left" if col == "slice" else "right")
    rows = [("pooled (micro)", evaluation.pooled.as_dict())]
    macro = evaluation.macro()
    rows.append(("per-query mean", {**macro, "queries": evaluation.pooled.queries}))
    rows += [(f"branch: {k}", v.as_dict()) for k, v in evaluation.by_branch.items()]
    rows += [(f"scenario: {k}", v.as_dict()) for k, v in sorted(evaluation.by_scenario.items())]
    for name, row in rows:
        table.add_row(name, str(row["queries"]), *(_pct(row[k]) for k in (
            "precision", "recall", "f1", "exact_match", "accuracy")))
    return table


def stress_table(figures: dict[str, Any]) -> Any:
    """Per perturbation: Detection Rate with its CI, Mean Penalty and the penalty of the means."""
    from rich.table import Table

    table = Table(title="oracle stress test (graded against the clean context)")
    for col in ("perturbation", "items", "DR %", "95% CI", "ΔMP %", "ΔMP of means %"):
        table.add_column(col, justify="left" if col == "perturbation" else "right")
    for kind, report in figures.items():
        dr, mp, mpm = report.detection_rate, report.mean_penalty, report.mean_penalty_of_means
        ci = f"[{dr.ci.low:.1f}, {dr.ci.high:.1f}]" if dr.ci is not None else ""
        table.add_row(kind, str(report.n), _num(dr.value), ci, _num(mp.value), _num(mpm.value))
    return table


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
