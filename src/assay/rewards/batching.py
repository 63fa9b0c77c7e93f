"""Micro-batching: reward items from concurrent HTTP requests scored in one scorer call.

The first item to arrive opens a window of ``window_s``; everything submitted before it closes
(or until ``max_batch`` items) is scored together, so selections of the same prompt and the
judge's connection pool are shared across requests. Each request gets its own results back,
in order. A batch whose scoring raises is scored again one submission at a time, so an
error fails only the submission that caused it, never the others batched with it.

Example:
    >>> import asyncio
    >>> class Double:
    ...     async def score(self, items):
    ...         return [2 * i for i in items]
    >>> async def main():
    ...     batcher = MicroBatcher(Double(), window_s=0.01, max_batch=10)
    ...     return await asyncio.gather(batcher.submit([1, 2]), batcher.submit([3])), batcher.batches
    >>> asyncio.run(main())
    ([[2, 4], [6]], 1)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any


class MicroBatcher:
    def __init__(self, scorer: Any, *, window_s: float = 0.005, max_batch: int = 256):
        self.scorer = scorer
        self.window_s = window_s
        self.max_batch = max_batch
        self._queue: list[tuple[list[Any], asyncio.Future]] = []  # one entry per submission
        self._queued_items = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task] = set()
        self.batches = 0
        self.items = 0

    async def submit(self, items: Sequence[Any]) -> list[Any]:
        """The results of ``items``, scored with whatever else arrives in the window."""
        if not items:
            return []
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((list(items), future))
        self._queued_items += len(items)
        if self._queued_items >= self.max_batch or self.window_s <= 0:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.window_s, self._flush)
        return await future

    def _flush(self) -> None:
        """Start a batch per ``max_batch`` items; a submission is never split between batches
        (one larger than ``max_batch`` is a batch of its own)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            size, taken = 0, 0
            while taken < len(self._queue) and (
                    not taken or size + len(self._queue[taken][0]) <= self.max_batch):
                size += len(self._queue[taken][0])
                taken += 1
            batch, self._queue = self._queue[:taken], self._queue[taken:]
            self._queued_items -= size
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[tuple[list[Any], asyncio.Future]]) -> None:
        self.batches += 1
        self.items += sum(len(items) for items, _ in batch)
        try:
            results = await self.scorer.score([item for items, _ in batch for item in items])
        except Exception as exc:  # noqa: BLE001  (handed to the submission that caused it)
            if len(batch) == 1:
                if not batch[0][1].done():
                    batch[0][1].set_exception(exc)
                return
            # One submission's bad item must not fail the others scored with it: each is
            # scored again on its own, so only the culprit gets the error.
            await asyncio.gather(*(self._run([entry]) for entry in batch))
            return
        start = 0
        for items, future in batch:
            if not future.done():
                future.set_result(list(results[start:start + len(items)]))
            start += len(items)

    async def drain(self) -> None:
        """Score whatever is queued and wait for every batch in flight."""
        self._flush()
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
