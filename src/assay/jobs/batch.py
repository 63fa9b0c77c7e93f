"""Running one pipeline over many items: concurrently, resumably, with progress and a summary.

Each item is handled by an async ``worker(item) -> JSON-able result`` that makes its stage
calls through a :class:`~assay.jobs.caller.StageCaller`; concurrency is bounded by the judges'
own in-flight limits, plus ``max_items`` items in progress at once. A finished item's result
goes to the :class:`~assay.jobs.store.CallStore` at once, so after a crash (even ``kill -9``) a
resumed batch skips it; an item whose worker raises is reported with its error and the batch
goes on. A worker whose item is usable but not whole (an optional stage failed) raises
:class:`PartialResult` with what it has: the result is kept in :attr:`BatchResult.results` and
named in :attr:`BatchResult.partial`, but not stored as finished, so a resumed batch runs the
item again (its successful stage calls come back from the store: only the failed one is sent).

Example:
    >>> import asyncio, tempfile, pathlib
    >>> store = CallStore.open(pathlib.Path(tempfile.mkdtemp()) / "calls.sqlite")
    >>> async def double(x):
    ...     return {"value": 2 * x}
    >>> result = asyncio.run(run_batch([1, 2], double, store=store, item_id=str, quiet=True))
    >>> result.results, result.failed
    ({'1': {'value': 2}, '2': {'value': 4}}, {})
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from assay.errors import AssayError
from assay.jobs.store import CallStore, CallTotals
from assay.progress import batch_progress

T = TypeVar("T")


class PartialResult(AssayError):
    """An item's result without an optional part (whose failure is ``reason``): kept, named,
    and run again on resume.

    >>> str(PartialResult({"cf": 1.0}, "item 'a': stage 'ragas_statements': HTTP 500"))
    "item 'a': stage 'ragas_statements': HTTP 500"
    """

    def __init__(self, result: Any, reason: str):
        self.result, self.reason = result, reason
        super().__init__(reason)


@dataclass
class BatchResult(Generic[T]):
    """Per-item results (JSON-able, in input order; partial ones included), failures and
    partial results' missing parts by item id, and call totals."""

    results: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    partial: dict[str, str] = field(default_factory=dict)
    resumed: int = 0
    totals: CallTotals | None = None

    @property
    def complete(self) -> bool:
        return not self.failed and not self.partial


async def run_batch(
    items: Sequence[T],
    worker: Callable[[T], Awaitable[Any]],
    *,
    store: CallStore,
    item_id: Callable[[T], str],
    label: str = "items",
    max_items: int = 64,
    quiet: bool = False,
) -> BatchResult[T]:
    """Run ``worker`` on every item not already finished in ``store``; see the module docstring.

    ``AssayError`` (a stage failure, bad input) fails only its item; any other exception is a
    bug and propagates after the items already finished are stored.
    """
    ids = [item_id(item) for item in items]
    duplicates = {i for i in ids if ids.count(i) > 1} if len(set(ids)) != len(ids) else set()
    if duplicates:
        raise AssayError(f"duplicate item ids: {', '.join(sorted(duplicates)[:5])}")
    done = store.results()
    partial: dict[str, Any] = {}  # results kept but not stored as finished
    outcome: BatchResult[T] = BatchResult(resumed=sum(i in done for i in ids))
    gate = asyncio.Semaphore(max_items)
    progress = batch_progress(label, len(items), quiet=quiet)

    async def one(item: T, key: str) -> None:
        async with gate:
            try:
                result = await worker(item)
            except PartialResult as exc:
                outcome.partial[key] = exc.reason
                partial[key] = exc.result
            except AssayError as exc:
                outcome.failed[key] = str(exc)
            else:
                store.put_result(key, result)
                done[key] = result
            finally:
                progress.advance()

    with progress:
        for key in ids:
            if key in done:
                progress.advance()
        await asyncio.gather(*(one(item, key) for item, key in zip(items, ids) if key not in done))
    outcome.results = {key: done.get(key, partial.get(key)) for key in ids
                       if key in done or key in partial}
    outcome.totals = store.totals()
    return outcome
