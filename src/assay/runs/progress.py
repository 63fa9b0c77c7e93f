"""Progress while grading (a rich bar) and the summary table at the end.

The bar shows items and calls done, cache hits, errors, dollars so far and the ETA; ``quiet``
turns it off for CI logs. The summary shows the overall score with its confidence interval, the
breakdown by axis and by theme, cost, tokens and errors.
"""

from __future__ import annotations

from typing import Any, Self

from assay.runs.results import RunScores
from assay.runs.store import Totals


class RichProgress:
    """Implements the engine's progress protocol with a :class:`rich.progress.Progress`."""

    def __init__(self, total_items: int | None, *, console: Any = None):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.calls = self.cache_hits = self.errors = 0
        self.cost = 0.0
        self._progress = Progress(
            TextColumn("[bold]grading"), BarColumn(), MofNCompleteColumn(),
            TextColumn("items · {task.fields[calls]} calls · {task.fields[hits]} cached · "
                       "{task.fields[errors]} errors · ${task.fields[cost]:.4f}"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            console=console, transient=False, refresh_per_second=4)
        self._task = self._progress.add_task("grading", total=total_items, calls=0, hits=0,
                                             errors=0, cost=0.0)

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def item_started(self, n_calls: int) -> None:
        pass

    def item_skipped(self) -> None:
        self._progress.advance(self._task)

    def call_done(self, *, cached: bool, errors: int, cost_usd: float) -> None:
        self.calls += 1
        self.cache_hits += cached
        self.errors += errors
        self.cost += cost_usd
        # Fields are read at refresh time (4 Hz), so this stays cheap per call.
        self._progress.update(self._task, calls=self.calls, hits=self.cache_hits,
                              errors=self.errors, cost=self.cost)

    def item_done(self) -> None:
        self._progress.advance(self._task)


class QuietProgress:
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def item_started(self, n_calls: int) -> None: ...
    def item_skipped(self) -> None: ...
    def call_done(self, *, cached: bool, errors: int, cost_usd: float) -> None: ...
    def item_done(self) -> None: ...


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
    for col in ("calls", "cache hits", "errors", "prompt tokens", "completion tokens", "cost (USD)"):
        cost.add_column(col, justify="right")
    cost.add_row(str(totals.calls), str(totals.cache_hits), str(totals.errors),
                 f"{totals.prompt_tokens:,}", f"{totals.completion_tokens:,}", f"{totals.cost_usd:.4f}")
    out.append(cost)
    return out
