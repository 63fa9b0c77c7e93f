"""The tables of ``assay eval``: simple-evals' metrics, and the worst-at-k curve."""

from __future__ import annotations

from typing import Any


def eval_tables(result: Any) -> list[Any]:
    """The metrics table (overall, axes, themes, bootstrap std) and, with n > 1, the curve;
    with two conditions, each one's tables and their comparison."""
    from rich.table import Table

    if result.conditions:
        tables = []
        for name, run in result.conditions.items():
            for table in eval_tables(run):
                table.title = f"{table.title} [{name}]"
                tables.append(table)
        if result.comparison is not None:
            tables.append(_comparison_table(list(result.conditions), result.comparison))
        return tables
    tables = [_summary_table(result)]
    metrics = {k: v for k, v in result.metrics.items() if k != "worst_at_k"}
    title = f"assay eval: {result.status}" + ("" if result.stage == "done"
                                               else f" (stopped at {result.stage})")
    table = Table(title=title)
    for col in ("metric", "score", "bootstrap std", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    names = sorted(k for k in metrics if ":" not in k or k.count(":") == 1
                   and not k.endswith((":n_samples", ":bootstrap_std")))
    for name in sorted(names, key=lambda k: (k != "overall_score", k)):
        value = metrics[name]
        std = metrics.get(f"{name}:bootstrap_std")
        count = metrics.get(f"{name}:n_samples", metrics.get("n_items"))
        table.add_row(name, _number(value), _number(std), "" if count is None else str(count))
    tables.append(table)
    if result.worst_at_k:
        curve = Table(title="worst-at-k")
        curve.add_column("k", justify="right")
        curve.add_column("score", justify="right")
        for k, value in result.worst_at_k.items():
            curve.add_row(str(k), f"{value:.4f}")
        tables.append(curve)
    return tables


def _summary_table(result: Any) -> Any:
    """The model under test, how it was sampled, prompts and samples, and each stage's calls
    and cost (at the batch price with --executor batch)."""
    from rich.table import Table

    from assay.evaluation.report import sampling_settings

    settings = result.settings
    table = Table(title="assay eval: the model under test", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("model under test", str(settings.get("model")))
    table.add_row("sampled with", sampling_settings(settings, result.run_dir))
    table.add_row("graded by", ", ".join(settings.get("judges") or []))
    n = settings.get("n", 1)
    table.add_row("prompts × samples", f"{result.prompts} × {n} = {result.prompts * n} answers")
    price = " (batch price)" if result.executor == "batch" else ""
    for stage, cost in result.cost.items():
        table.add_row(f"{stage} calls", f"{cost.get('calls', 0)} · ${cost.get('cost_usd', 0.0):.4f}"
                      f"{price}")
    return table


def _comparison_table(names: list[str], comparison: Any) -> Any:
    """Paired tests between the two conditions, on per-prompt scores."""
    from rich.table import Table

    table = Table(title=f"{names[0]} vs {names[1]} (paired, {comparison.n_items} prompts)")
    for col in ("statistic", "value", "95% CI / p"):
        table.add_column(col, justify="left" if col == "statistic" else "right")
    diff = comparison.mean_difference
    table.add_row(f"mean {names[0]}", _number(comparison.mean_a.value), "")
    table.add_row(f"mean {names[1]}", _number(comparison.mean_b.value), "")
    table.add_row("difference", _number(diff.value),
                  "" if diff.ci is None else f"[{diff.ci.low:.4f}, {diff.ci.high:.4f}]")
    table.add_row("Wilcoxon signed-rank", "", _number(comparison.wilcoxon.p_value))
    table.add_row("paired permutation", "", _number(comparison.permutation.p_value))
    table.add_row("Cohen's d_z", _number(comparison.cohens_d.value), "")
    return table


def _number(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else ("" if value is None else str(value))
