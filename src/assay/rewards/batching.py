"""Micro-batching: reward items from concurrent HTTP requests scored in one scorer call.

Items submitted together are scored together, so selections of the same prompt and the
judge's connection pool are shared across requests. Each request gets its own results back,
in order, as soon as they are ready: a scorer whose ``score`` takes ``on_result`` (as
:class:`~assay.rewards.RewardScorer` does) reports each item when its own judge calls end, and
a request does not wait for the slowest call of its batch. A scorer whose ``score`` takes
``lanes`` gets one lane per submission for its judge calls (:data:`~assay.judges.limits.
JUDGE_LANE`): a free judge slot goes to the submission with the fewest calls in flight, so a
one-item request is not queued behind the calls of a thousand-item one, in its batch or in
another. A batch whose
scoring raises is
scored again one submission at a time, so an error fails only the submission that caused it,
never the others batched with it.

The batching adapts to the load. A submission waits (at most ``window_s``) for others only
while that can pay: while a batch is being scored and another request is still being read
(announced with :meth:`MicroBatcher.incoming`). Otherwise what is queued is scored one event
loop turn later, with whatever else was submitted in that turn: a lone request at light load
waits for nothing, and the last request of a burst closes the batch at once instead of at the
end of the window. Under heavy load requests keep arriving while batches run, and the window
gathers them as before.

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
import inspect
import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_Submission = tuple[list[Any], asyncio.Future, int]  # its items, its answer, its judge lane


class MicroBatcher:
    def __init__(self, scorer: Any, *, window_s: float = 0.005, max_batch: int = 256):
        self.scorer = scorer
        parameters = inspect.signature(scorer.score).parameters
        self._streams = "on_result" in parameters
        self._laned = "lanes" in parameters
        self._lane_numbers = itertools.count()
        self.window_s = window_s
        self.max_batch = max_batch
        self._queue: list[_Submission] = []
        self._queued_items = 0
        self._timer: asyncio.TimerHandle | None = None
        self._settling = False  # a look at the queue is scheduled for the next loop turn
        self._incoming = 0  # requests being read, whose items may join the queue
        self._tasks: set[asyncio.Task] = set()
        self.batches = 0
        self.items = 0

    @contextmanager
    def incoming(self) -> Iterator[None]:
        """Around reading a request that may :meth:`submit`: while it is open, what is queued
        may wait for it. Submit after leaving it::

            with batcher.incoming():
                items = parse(await request.read())
            results = await batcher.submit(items)
        """
        self._incoming += 1
        try:
            yield
        finally:
            self._incoming -= 1
            if not self._incoming and self._queue:
                self._settle_soon()

    async def submit(self, items: Sequence[Any]) -> list[Any]:
        """The results of ``items``, scored with whatever else is submitted with them."""
        if not items:
            return []
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((list(items), future, next(self._lane_numbers)))
        self._queued_items += len(items)
        if self._queued_items >= self.max_batch or self.window_s <= 0:
            self._flush()
        else:
            self._settle_soon()
        return await future

    def _settle_soon(self) -> None:
        """Decide on the queue one loop turn from now, when the requests that are ready in
        this turn have submitted too."""
        if not self._settling:
            self._settling = True
            asyncio.get_running_loop().call_soon(self._settle)

    def _settle(self) -> None:
        """Score the queue now, or wait the window for it to grow: only while a batch is being
        scored (a new one would run beside it) and another request is on its way."""
        self._settling = False
        if not self._queue:
            return
        if not self._tasks or not self._incoming:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.window_s, self._flush)

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
            task.add_done_callback(self._ran)

    def _ran(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not self._tasks and self._queue:  # what waited for this batch need wait no more
            self._settle_soon()

    async def _run(self, batch: list[_Submission]) -> None:
        self.batches += 1
        self.items += sum(len(items) for items, _, _ in batch)
        flat = [item for items, _, _ in batch for item in items]
        answers = _Answers(batch)
        options: dict[str, Any] = {}
        if self._streams:
            options["on_result"] = answers.put
        if self._laned:
            options["lanes"] = [lane for items, _, lane in batch for _ in items]
        try:
            results = await self.scorer.score(flat, **options)
        except Exception as exc:  # noqa: BLE001  (handed to the submission that caused it)
            waiting = [entry for entry in batch if not entry[1].done()]
            if len(batch) == 1:
                if waiting:
                    waiting[0][1].set_exception(exc)
                return
            # One submission's bad item must not fail the others scored with it: each is
            # scored again on its own, so only the culprit gets the error.
            await asyncio.gather(*(self._run([entry]) for entry in waiting))
            return
        for i, result in enumerate(results):
            answers.put(i, result)

    async def drain(self) -> None:
        """Score whatever is queued and wait for every batch in flight."""
        self._flush()
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


_PENDING = object()  # a result not reported yet


class _Answers:
    """A batch's results handed to each submission as soon as all of its own are in."""

    def __init__(self, batch: list[_Submission]):
        self._owner: list[tuple[int, int]] = []  # flat index → (submission, index in it)
        self._results: list[list[Any]] = []
        self._missing: list[int] = []
        self._futures = [future for _, future, _ in batch]
        for n, (items, _, _) in enumerate(batch):
            self._owner += [(n, k) for k in range(len(items))]
            self._results.append([_PENDING] * len(items))
            self._missing.append(len(items))

    def put(self, i: int, result: Any) -> None:
        n, k = self._owner[i]
        if self._results[n][k] is not _PENDING:
            return  # already answered (a result is reported once, then again at the end)
        self._results[n][k] = result
        self._missing[n] -= 1
        if self._missing[n] == 0 and not self._futures[n].done():
            self._futures[n].set_result(self._results[n])
