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


def stress_table(figures: dict[str, Any], *, errors: dict[str, dict[str, Any]] | None = None,
                 scores: dict[str, dict[str, Any]] | None = None, runs: int = 1) -> Any:
    """Per perturbation: Detection Rate with its CI, Mean Penalty and the penalty of the means;
    with ``errors``, the mean standard error of an item's score over the ``runs``, clean and
    perturbed, over the items compared (n/a for one run)."""
    from rich.table import Table

    from assay.metrics.repeated import mean_error

    title = "oracle stress test (graded against the clean context"
    table = Table(title=f"{title}; mean of {runs} runs per item)" if runs > 1 else f"{title})")
    cols = ["perturbation", "items", "DR %", "95% CI", "ΔMP %", "ΔMP of means %"]
    if errors is not None:
        cols += ["item SE clean", "item SE perturbed"]
    for col in cols:
        table.add_column(col, justify="left" if col == "perturbation" else "right")
    for kind, report in figures.items():
        dr, mp, mpm = report.detection_rate, report.mean_penalty, report.mean_penalty_of_means
        ci = f"[{dr.ci.low:.1f}, {dr.ci.high:.1f}]" if dr.ci is not None else ""
        row = [kind, str(report.n), _num(dr.value), ci, _num(mp.value), _num(mpm.value)]
        if errors is not None and scores is not None:
            both = sorted(k for k, v in scores[kind].items()
                          if v is not None and scores["clean"].get(k) is not None)
            row += [_se(mean_error(errors["clean"], both)), _se(mean_error(errors[kind], both))]
        table.add_row(*row)
    return table


def _se(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
