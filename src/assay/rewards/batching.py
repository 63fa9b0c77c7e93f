"""Micro-batching: reward items from concurrent HTTP requests scored in one scorer call.

The first item to arrive opens a window of ``window_s``; everything submitted before it closes
(or until ``max_batch`` items) is scored together, so selections of the same prompt and the
judge's connection pool are shared across requests. Each request gets its own results back,
in order.

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
        self._queue: list[tuple[Any, asyncio.Future]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task] = set()
        self.batches = 0
        self.items = 0

    async def submit(self, items: Sequence[Any]) -> list[Any]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in items]
        self._queue.extend(zip(items, futures))
        if len(self._queue) >= self.max_batch or self.window_s <= 0:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self.window_s, self._flush)
        return list(await asyncio.gather(*futures))

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch:]
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[tuple[Any, asyncio.Future]]) -> None:
        self.batches += 1
        self.items += len(batch)
        try:
            results = await self.scorer.score([item for item, _ in batch])
        except Exception as exc:  # noqa: BLE001  (every waiting request gets the error)
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)

    async def drain(self) -> None:
        """Score whatever is queued and wait for every batch in flight."""
        self._flush()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
