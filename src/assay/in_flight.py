"""Single flight: concurrent asks for the same key share one computation.

A GRPO group sends the same prompt several times at once; the first ask computes (one set of
model calls), the others wait for its result, or its exception, instead of repeating it.

>>> import asyncio
>>> calls = []
>>> async def compute():
...     calls.append(1)
...     await asyncio.sleep(0.01)
...     return "rubric"
>>> async def main():
...     pending = {}
...     return await asyncio.gather(*(shared(pending, "p1", compute) for _ in range(3)))
>>> asyncio.run(main()), len(calls)
(['rubric', 'rubric', 'rubric'], 1)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def shared(pending: dict[str, asyncio.Future[T]], key: str,
                 compute: Callable[[], Awaitable[T]]) -> T:
    """``compute()``'s result for ``key``, or the result of the computation for ``key`` already
    in ``pending`` (shielded: a cancelled waiter does not cancel it)."""
    running = pending.get(key)
    if running is not None:
        return await asyncio.shield(running)
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    pending[key] = future
    try:
        result = await compute()
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # retrieved: waiters re-raise it themselves
        raise
    finally:
        del pending[key]
    future.set_result(result)
    return result
