"""The table of ``assay sample``: items done, samples and why they stopped, calls and cost."""

from __future__ import annotations

from typing import Any


def sample_table(result: Any) -> Any:
    """Items done, failed and resumed; samples by finish reason; calls, tokens, dollars."""
    from rich.table import Table

    table = Table(title=f"assay sample: {result.status}")
    for col in ("items done", "failed", "resumed", "samples", "stopped", "calls",
                "prompt tokens", "completion tokens", "USD", "wall s"):
        table.add_column(col, justify="right")
    reasons = result.finish_reasons
    stopped = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items())) or "-"
    t = result.totals
    table.add_row(str(len(result.samples)), str(len(result.failed)), str(result.resumed),
                  str(sum(reasons.values())), stopped, str(t.calls if t else 0),
                  str(t.prompt_tokens if t else 0), str(t.completion_tokens if t else 0),
                  f"{t.cost_usd if t else 0:.4f}", f"{result.wall_s:.1f}")
    return table
