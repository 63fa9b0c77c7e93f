"""The rich progress bars of the command line (the library's :mod:`assay.progress` display).

A grading run's bar (on stderr) shows items and calls done, cache hits, errors, dollars so far
and the ETA; a job batch's bar (on stderr too) shows its items. ``--quiet`` turns them off for CI logs.
"""

from __future__ import annotations

from typing import Any, Self


class RichRunProgress:
    """A grading run's :class:`~assay.progress.RunProgress` as a :class:`rich.progress.Progress`."""

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


class RichBatchProgress:
    """A job batch's :class:`~assay.progress.BatchProgress`: ``label``, a bar, items done."""

    def __init__(self, label: str, total: int, *, console: Any = None):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console, transient=False)
        self._task = self._progress.add_task(label, total=total)

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self) -> None:
        self._progress.advance(self._task)


class RichDisplay:
    """The :class:`~assay.progress.Display` of the command line."""

    def run(self, total_items: int | None) -> RichRunProgress:
        from assay.cli.output import stderr

        return RichRunProgress(total_items, console=stderr())

    def batch(self, label: str, total: int) -> RichBatchProgress:
        from assay.cli.output import stderr

        return RichBatchProgress(label, total, console=stderr())


def install() -> None:
    """Show the progress of every later job of this process as rich bars (unless quiet).

    >>> from assay.progress import set_display
    >>> previous = set_display(None); install()
    >>> type(set_display(previous)).__name__
    'RichDisplay'
    """
    from assay.progress import set_display

    set_display(RichDisplay())
