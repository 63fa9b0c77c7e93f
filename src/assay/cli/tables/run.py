"""The summary tables of ``assay grade`` at the end of a run.

The overall score with its confidence interval, the breakdown by axis and by theme, then calls,
tokens, cost and errors.
"""

from __future__ import annotations

from typing import Any

from assay.cli.tables.score import ungraded_line
from assay.runs.results import RunScores
from assay.runs.store import Totals


def summary_tables(scores: RunScores, totals: Totals, *, status: str = "complete",
                   run_dir: str | None = None, items_in_input: int | None = None) -> list[Any]:
    """Rich renderables: the score table, the breakdowns, and the cost/tokens/errors table."""
    from rich.table import Table

    s = scores.scoring.describe()
    title = f"Assay run{f' {run_dir}' if run_dir else ''} · {status}"
    main = Table(title=title, show_header=True, header_style="bold")
    main.add_column("score")
    main.add_column("value", justify="right")
    overall = "—" if scores.overall is None else f"{scores.overall:.4f}"
    main.add_row(f"overall ({s['formula']})", overall)
    if scores.ci is not None:
        label = "95% CI (±1.96 bootstrap std)" if s["formula"] == "healthbench" else "95% CI (bootstrap)"
        main.add_row(label, f"[{scores.ci[0]:.4f}, {scores.ci[1]:.4f}]")
    if scores.bootstrap_std is not None:
        main.add_row("bootstrap std", f"{scores.bootstrap_std:.4f}")
    main.add_row("items scored", f"{scores.n_scored} / {items_in_input or totals.items}")
    if scores.n_ungraded:
        main.add_row("unscored: a criterion not graded", ungraded_line(scores.table))
    if scores.mean_agreement is not None:
        main.add_row("mean judge agreement", f"{scores.mean_agreement:.3f}")
    main.add_row("aggregation · abstention", f"{s['aggregation']} · {s['abstention']}")
    out: list[Any] = [main]
    for name, stats in (("axis", scores.by_axis), ("theme", scores.by_theme)):
        if stats:
            table = Table(title=f"by {name}", header_style="bold")
            table.add_column(name)
            table.add_column("score", justify="right")
            table.add_column("n", justify="right")
            for key, stat in sorted(stats.items()):
                table.add_row(key, f"{stat.mean:.4f}", str(stat.n))
            out.append(table)
    cost = Table(title="calls, tokens, cost", header_style="bold")
    for col in ("calls", "cache hits", "errors", "prompt tokens", "of them cached",
                "completion tokens", "cost (USD)"):
        cost.add_column(col, justify="right")
    # cache hits: calls the response cache answered; cached: prompt tokens the provider read
    # from its prompt cache (billed at its cached-input price)
    cost.add_row(str(totals.calls), str(totals.cache_hits), str(totals.errors),
                 f"{totals.prompt_tokens:,}", f"{totals.cached_tokens:,}",
                 f"{totals.completion_tokens:,}", f"{totals.cost_usd:.4f}")
    if totals.abandoned:
        cost.caption = abandoned_note(totals.abandoned, totals.estimated_usd)
    out.append(cost)
    return out


def abandoned_note(attempts: int, estimated_usd: float) -> str:
    """What the cost holds for attempts abandoned on their timeout.

    >>> abandoned_note(3, 0.0123)
    'cost includes $0.0123 estimated for 3 attempts abandoned on their timeout (billed by the provider, no usage reported)'
    """
    return (f"cost includes ${estimated_usd:.4f} estimated for {attempts} attempt"
            f"{'s' if attempts != 1 else ''} abandoned on their timeout (billed by the provider, "
            "no usage reported)")
