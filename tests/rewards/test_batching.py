"""The micro-batcher adapts to the load: it waits for more items only while a batch is being
scored and another request is still being read; otherwise it scores at once."""

from __future__ import annotations

import asyncio

from assay.rewards.batching import MicroBatcher

HOUR = 3600.0  # a window no test could wait out: whatever is scored here did not wait for it


class Gated:
    """Scores items once ``open`` is set; records each batch it was given."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.batches: list[list[str]] = []

    async def score(self, items):
        self.batches.append(list(items))
        await self.open.wait()
        return [item.upper() for item in items]


async def turns(n: int = 3) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def one_batch_in_flight(window_s: float = HOUR):
    """(scorer, batcher, the task of "a"): "a" is being scored, and stays so until
    ``scorer.open`` is set."""
    scorer = Gated()
    batcher = MicroBatcher(scorer, window_s=window_s)
    first = asyncio.create_task(batcher.submit(["a"]))
    await turns()
    assert scorer.batches == [["a"]]
    return scorer, batcher, first


async def test_a_lone_submission_is_scored_at_once_not_after_the_window():
    scorer = Gated()
    batcher = MicroBatcher(scorer, window_s=HOUR)
    result = asyncio.create_task(batcher.submit(["a"]))
    await turns()
    assert scorer.batches == [["a"]]
    scorer.open.set()
    assert await result == ["A"]


async def test_submissions_of_one_loop_turn_share_a_batch():
    scorer = Gated()
    batcher = MicroBatcher(scorer, window_s=HOUR)
    results = asyncio.gather(batcher.submit(["a", "b"]), batcher.submit(["c"]))
    await turns()
    assert scorer.batches == [["a", "b", "c"]]
    scorer.open.set()
    assert await results == [["A", "B"], ["C"]]


async def test_while_a_batch_runs_a_submission_waits_for_the_request_being_read():
    scorer, batcher, first = await one_batch_in_flight()
    body = asyncio.Event()

    async def request(items):
        with batcher.incoming():
            await body.wait()
        return await batcher.submit(items)

    reading = asyncio.create_task(request(["c"]))
    await turns()
    waiting = asyncio.create_task(batcher.submit(["b"]))
    await turns()
    assert scorer.batches == [["a"]]  # "b" waits: "c" is on its way
    body.set()
    await turns()
    assert scorer.batches == [["a"], ["b", "c"]]
    scorer.open.set()
    assert await asyncio.gather(first, waiting, reading) == [["A"], ["B"], ["C"]]


async def test_a_request_that_leaves_without_submitting_releases_the_queue():
    scorer, batcher, first = await one_batch_in_flight()
    with batcher.incoming():
        waiting = asyncio.create_task(batcher.submit(["b"]))
        await turns()
        assert scorer.batches == [["a"]]
    await turns()  # the request was refused (a 400): nothing more is coming
    assert scorer.batches == [["a"], ["b"]]
    scorer.open.set()
    assert await asyncio.gather(first, waiting) == [["A"], ["B"]]


async def test_with_nothing_being_read_a_submission_runs_beside_the_batch_in_flight():
    scorer, batcher, first = await one_batch_in_flight()
    second = asyncio.create_task(batcher.submit(["b"]))
    await turns()
    assert scorer.batches == [["a"], ["b"]]
    scorer.open.set()
    assert await asyncio.gather(first, second) == [["A"], ["B"]]


async def test_when_the_batch_in_flight_ends_a_waiting_submission_is_scored():
    scorer, batcher, first = await one_batch_in_flight()
    with batcher.incoming():
        waiting = asyncio.create_task(batcher.submit(["b"]))
        await turns()
        scorer.open.set()
        assert await first == ["A"]
        assert await waiting == ["B"]
    assert scorer.batches == [["a"], ["b"]]


async def test_the_window_bounds_the_wait_for_a_request_that_is_slow_to_arrive():
    scorer, batcher, first = await one_batch_in_flight(window_s=0.01)
    with batcher.incoming():  # a body that does not come within the window
        waiting = asyncio.create_task(batcher.submit(["b"]))
        for _ in range(1000):
            if len(scorer.batches) == 2:
                break
            await asyncio.sleep(0.01)
        assert scorer.batches == [["a"], ["b"]]  # "a" is still being scored
        scorer.open.set()
        assert await asyncio.gather(first, waiting) == [["A"], ["B"]]


class Streaming:
    """Reports each item as it is scored; raises on "bad" after reporting the items before it."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def score(self, items, on_result=None):
        self.batches.append(list(items))
        results = []
        for i, item in enumerate(items):
            if item == "bad":
                raise ValueError("bad item")
            results.append(item.upper())
            if on_result is not None:
                on_result(i, item.upper())
            await asyncio.sleep(0)
        return results


async def test_a_submission_answered_before_its_batch_failed_keeps_its_answer():
    scorer = Streaming()
    batcher = MicroBatcher(scorer, window_s=HOUR)
    first = asyncio.create_task(batcher.submit(["a"]))
    await turns()  # "a" is scored alone; the next two share a batch that fails on "bad"
    results = await asyncio.gather(batcher.submit(["b"]), batcher.submit(["bad"]),
                                   return_exceptions=True)
    assert await first == ["A"]
    assert results[0] == ["B"] and isinstance(results[1], ValueError)
    # "b" was answered when it was scored: only the failed submission is scored again alone
    assert scorer.batches == [["a"], ["b", "bad"], ["bad"]]
