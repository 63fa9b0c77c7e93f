"""What a long job reports while it runs, and who shows it: library code never draws.

A grading run reports items and calls (:class:`RunProgress`); a job batch reports items
(:class:`BatchProgress`). Both are context managers: entered when the work starts, left when it
ends. The library asks :func:`run_progress` / :func:`batch_progress` for one; ``quiet`` (or no
display installed) gives a silent one. A front end installs a :class:`Display` that makes the
visible ones: the ``assay`` command line installs rich progress bars
(:mod:`assay.cli.progress`), and so does ``assay.grade(progress=True)``.

Example:
    >>> with run_progress(10, quiet=False) as progress:  # nothing installed: silent
    ...     progress.item_started(3)
    >>> class Count:
    ...     def __init__(self): self.n = 0
    ...     def __enter__(self): return self
    ...     def __exit__(self, *exc): pass
    ...     def advance(self): self.n += 1
    >>> class CountingDisplay:
    ...     def run(self, total_items): return QuietProgress()
    ...     def batch(self, label, total): return Count()
    >>> previous = set_display(CountingDisplay())
    >>> with batch_progress("items", 2, quiet=False) as bar:
    ...     bar.advance()
    >>> bar.n, type(batch_progress("items", 2, quiet=True)).__name__
    (1, 'QuietProgress')
    >>> _ = set_display(previous)
"""

from __future__ import annotations

from typing import Protocol, Self


class RunProgress(Protocol):
    """A grading run's progress: what :class:`assay.runs.engine.Engine` reports, in a ``with``."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def item_started(self, n_calls: int) -> None: ...
    def item_skipped(self) -> None: ...
    def call_done(self, *, cached: bool, errors: int, cost_usd: float) -> None: ...
    def item_done(self) -> None: ...


class BatchProgress(Protocol):
    """A job batch's progress (:func:`assay.jobs.run_batch`): one ``advance`` per item."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def advance(self) -> None: ...


class Display(Protocol):
    """Makes the visible progress of a front end."""

    def run(self, total_items: int | None) -> RunProgress: ...
    def batch(self, label: str, total: int) -> BatchProgress: ...


class QuietProgress:
    """Reports to no one (both protocols)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def item_started(self, n_calls: int) -> None: ...
    def item_skipped(self) -> None: ...
    def call_done(self, *, cached: bool, errors: int, cost_usd: float) -> None: ...
    def item_done(self) -> None: ...
    def advance(self) -> None: ...


_display: Display | None = None


def set_display(display: Display | None) -> Display | None:
    """Install ``display`` for every later job of this process (None: silent); returns the one
    it replaces."""
    global _display
    previous, _display = _display, display
    return previous


def run_progress(total_items: int | None, *, quiet: bool) -> RunProgress:
    """The progress of a grading run of ``total_items`` items (None: unknown)."""
    if quiet or _display is None:
        return QuietProgress()
    return _display.run(total_items)


def batch_progress(label: str, total: int, *, quiet: bool) -> BatchProgress:
    """The progress of a job batch of ``total`` items, shown as ``label``."""
    if quiet or _display is None:
        return QuietProgress()
    return _display.batch(label, total)
