"""The tables of ``assay generate``: the dry run's estimate, and what a generation did."""

from __future__ import annotations

from typing import Any


def estimate_table(estimate: Any, model: str, *, n_queries: int, method: str) -> Any:
    """Calls per stage, tokens and dollars a generation would cost (no call made)."""
    from rich.table import Table

    table = Table(title=f"dry run: {n_queries} queries, method {method} (no call made)")
    for col in ("model", "calls", "prompt tokens (est.)", "completion tokens (est.)", "USD (est.)"):
        table.add_column(col, justify="left" if col == "model" else "right")
    usd = f"{estimate.usd:.4f}" if estimate.priced else "unpriced"
    table.add_row(model, f"{estimate.n_calls:,}", f"{estimate.prompt_tokens:,}",
                  f"{estimate.completion_tokens:,}", usd)
    stages = ", ".join(f"{stage} {n}" for stage, n in estimate.stages.items())
    table.caption = (f"calls per stage: {stages or 'none'} (the audit at most 1 + "
                     f"--refine-rounds times a query); and {estimate.preflight_requests} "
                     "preflight request(s) before the first call, in the USD")
    return table


def generation_table(result: Any) -> Any:
    """Queries done, failed and resumed; calls, tokens, dollars and wall time."""
    from rich.table import Table

    table = Table(title=f"assay generate: {result.status}")
    for col in ("queries done", "failed", "resumed", "calls", "prompt tokens", "completion tokens",
                "USD", "wall s"):
        table.add_column(col, justify="right")
    t = result.totals
    table.add_row(str(len(result.rubrics)), str(len(result.failed)), str(result.resumed),
                  str(t.calls if t else 0), str(t.prompt_tokens if t else 0),
                  str(t.completion_tokens if t else 0), f"{t.cost_usd if t else 0:.4f}",
                  f"{result.wall_s:.1f}")
    return table
