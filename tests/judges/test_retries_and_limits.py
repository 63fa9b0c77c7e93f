"""Retries (backoff, Retry-After) and per-endpoint limits (in flight, RPM, TPM, slow-down)."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from email.utils import formatdate

from assay.judges import FailureKind, RetryPolicy
from assay.judges.retry import backoff_delay, classify_status, parse_retry_after, retry_delay
from assay.testing import Faults

from .helpers import judge_for, request


def arrivals(server) -> list[float]:
    return [r["time"] for r in server.requests]


async def test_a_429_is_retried_after_the_retry_after_delay(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=0.2))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 2
    first, second = arrivals(server)
    assert second - first >= 0.19


async def test_retry_after_in_milliseconds_is_honoured(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=0.15, retry_after_ms=True))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    first, second = arrivals(server)
    assert reply.ok and second - first >= 0.14


async def test_retry_after_is_capped_by_the_policy(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=3600))
    policy = RetryPolicy(max_retries=2, base_delay_s=0.0, max_retry_after_s=0.01)
    async with judge_for(server, retry=policy) as judge:
        reply = await asyncio.wait_for(judge.ask(request()), timeout=5)
    assert reply.ok


async def test_a_wait_for_retry_after_does_not_grow_the_backoff_of_a_later_500(serve, caplog):
    # Two 429s, each honoured for its Retry-After, then a 500: that 500 is the call's first
    # backoff (base · 2⁰), not its third (base · 2²).
    caplog.set_level(logging.DEBUG, logger="assay.judges")
    server = await serve(faults=Faults(script=["rate_limit", "rate_limit", "server_error",
                                               "server_error"], retry_after=0.01))
    policy = RetryPolicy(max_retries=4, base_delay_s=0.02, jitter=False)
    async with judge_for(server, retry=policy) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 5
    assert retry_delays(caplog) == ["0.01 s", "0.01 s", "0.02 s", "0.04 s"]


def retry_delays(caplog) -> list[str]:
    return [record.getMessage().rsplit(" in ", 1)[1] for record in caplog.records
            if "; retry " in record.getMessage()]


async def test_500s_among_mostly_good_answers_are_retried_after_the_base_backoff(serve, caplog):
    # 16 good answers, then one call meets three 500s: the endpoint is healthy (3 failures in
    # 19 answers), so none of its retries waits longer than the first.
    caplog.set_level(logging.DEBUG, logger="assay.judges")
    server = await serve(faults=Faults(script=[None] * 16 + ["server_error"] * 3))
    policy = RetryPolicy(max_retries=4, base_delay_s=0.02, jitter=False)
    async with judge_for(server, retry=policy) as judge:
        for i in range(16):
            assert (await judge.ask(request(f"c{i}"))).ok
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 4
    assert retry_delays(caplog) == ["0.02 s", "0.02 s", "0.02 s"]


async def test_an_endpoint_failing_most_requests_gets_exponential_backoff(serve, caplog):
    caplog.set_level(logging.DEBUG, logger="assay.judges")
    server = await serve(faults=Faults(server_error=1.0))
    policy = RetryPolicy(max_retries=4, base_delay_s=0.01, jitter=False)
    async with judge_for(server, retry=policy) as judge:
        replies = [await judge.ask(request(f"c{i}")) for i in range(3)]
    assert all(r.failure.kind is FailureKind.SERVER_ERROR for r in replies)
    assert retry_delays(caplog) == ["0.01 s", "0.02 s", "0.04 s", "0.08 s"] * 3


async def test_persistent_429s_end_as_a_rate_limit_failure(serve):
    server = await serve(faults=Faults(rate_limit=1.0, retry_after=0.001))
    async with judge_for(server, limits={"slow_down": False}) as judge:
        reply = await judge.ask(request())
    assert reply.failure.kind is FailureKind.RATE_LIMIT and reply.failure.status == 429
    assert reply.attempts == 4


async def test_no_retries_means_one_attempt(serve):
    server = await serve(faults=Faults(server_error=1.0))
    async with judge_for(server, retry={"max_retries": 0}) as judge:
        reply = await judge.ask(request())
    assert reply.attempts == 1 and len(server.requests) == 1


async def test_an_isolated_429_delays_only_its_own_retry(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=0.25), latency=0.01)
    async with judge_for(server, limits={"max_in_flight": 1}) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(3)))
    assert all(r.ok for r in replies) and judge.limiter.slowdowns == 0
    first, *rest = server.requests
    retried = next(r for r in rest if r["criterion_id"] == first["criterion_id"])
    others = [r["time"] for r in rest if r is not retried]
    assert retried["time"] - first["time"] >= 0.24  # its own Retry-After
    assert max(others) < retried["time"]  # the others went ahead meanwhile


async def test_a_storm_of_429s_pauses_the_whole_endpoint(serve):
    server = await serve(faults=Faults(script=["rate_limit"] * 8, retry_after=0.25), latency=0.01)
    async with judge_for(server, limits={"max_in_flight": 8}) as judge:
        storm = [asyncio.create_task(judge.ask(request(f"c{i}"))) for i in range(8)]
        while not judge.limiter.slowdowns:  # the 8th 429 makes the storm
            await asyncio.sleep(0.001)
        pause_ends = judge.limiter.paused_until - time.monotonic() + time.time()
        after = await asyncio.gather(*(judge.ask(request(f"d{i}")) for i in range(8)))
        replies = await asyncio.gather(*storm)
    assert all(r.ok for r in replies + after) and judge.limiter.slowdowns == 1
    later = [r["time"] for r in server.requests if r["criterion_id"].startswith("d")]
    assert len(later) == 8 and min(later) >= pause_ends - 0.01  # none was sent during the pause


async def test_a_full_window_of_429s_narrows_once_not_once_per_429(serve):
    server = await serve(faults=Faults(script=["rate_limit"] * 16, retry_after=0.001), latency=0.01)
    async with judge_for(server, limits={"max_in_flight": 16}, retry={"base_delay_s": 0}) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(16)))
        assert judge.limiter.slowdowns == 1  # the 429s of requests sent before it do not count
        assert judge.limiter.width >= 8
    assert all(r.ok for r in replies)


def test_a_trickle_of_429s_among_successes_does_not_narrow():
    from assay.judges.config import Limits
    from assay.judges.limits import Limiter

    limiter = Limiter(Limits(max_in_flight=64))
    for _ in range(50):  # 10% 429s, in pairs: each pair used to halve the width
        limiter.record_rate_limited(1.0, limiter.round)
        limiter.record_rate_limited(1.0, limiter.round)
        for _ in range(18):
            limiter.record_success()
    assert (limiter.width, limiter.slowdowns, limiter.paused_until) == (64, 0, 0.0)


def test_the_width_under_scripted_429_bursts_then_successes():
    from assay.judges.config import Limits
    from assay.judges.limits import Limiter

    limiter = Limiter(Limits(max_in_flight=32))  # the floor: 32 // 16 = 2
    widths = []
    for _ in range(5):  # five bursts, each of a full window's 429s from one round
        sent_in = limiter.round
        for _ in range(32):
            limiter.record_rate_limited(None, sent_in)
        widths.append(limiter.width)
    # each burst halves once (the 8th 429 makes the storm, the other 24 were sent before it),
    # down to the floor
    assert widths == [16, 8, 4, 2, 2] and limiter.slowdowns == 4
    widths = []
    for _ in range(9):
        limiter.record_success()
        widths.append(limiter.width)
    assert widths == [2, 3, 3, 3, 4, 4, 4, 4, 5]  # +1 per window of `width` successes
    for _ in range(sum(range(2, 32)) - 9):  # 2 + 3 + ... + 31 successes in all
        limiter.record_success()
    assert limiter.width == 32
    for _ in range(100):
        limiter.record_success()
    limiter.record_rate_limited(None, limiter.round)  # an isolated 429 afterwards
    assert limiter.width == 32 and limiter.slowdowns == 4


async def test_server_errors_and_timeouts_are_retried_but_do_not_narrow(serve):
    server = await serve(faults=Faults(script=["server_error"] * 6 + ["timeout"] * 2, hang_s=30),
                         latency=0.005)
    async with judge_for(server, limits={"max_in_flight": 4}, timeout_s=0.2,
                         retry={"max_retries": 8, "base_delay_s": 0.001}) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(4)))
        assert (judge.limiter.width, judge.limiter.slowdowns) == (4, 0)
    assert all(r.ok for r in replies) and sum(r.attempts for r in replies) == 12


async def test_a_hung_request_times_out_on_a_timeout_fitted_to_the_endpoint(serve):
    # 16 quick replies fit the timeout (0.1 s here: the floor); the 17th request hangs for 30 s
    # and the default ceiling is 60 s: it must give up on it long before that.
    server = await serve(faults=Faults(script=[None] * 16 + ["timeout"], hang_s=30.0), latency=0.005)
    async with judge_for(server, limits={"max_in_flight": 1}, retry={"base_delay_s": 0}) as judge:
        replies = [await judge.ask(request(f"c{i}")) for i in range(16)]
        fitted = judge.attempt_timeout_s
        assert fitted < 60.0
        hung = await asyncio.wait_for(judge.ask(request("hung")), timeout=20)
        after = await judge.ask(request("after"))  # its slot was freed
        assert judge.attempt_timeout_s == fitted  # one hung request among many replies
    assert all(r.ok for r in replies) and hung.ok and after.ok
    assert hung.attempts >= 2 and judge.limiter.in_flight == 0  # a stalled machine may let its retry time out too


async def test_requests_in_flight_never_exceed_the_limit(serve):
    server = await serve(latency=0.02)
    async with judge_for(server, limits={"max_in_flight": 3}) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(15)))
    assert all(r.ok for r in replies)
    assert server.peak_in_flight == 3


async def test_requests_per_minute_are_limited_by_a_token_bucket(serve):
    server = await serve()
    async with judge_for(server, limits={"rpm": 600}) as judge:  # 10/s, one second of burst
        started = time.time()  # from the first ask, not the first arrival: load can only delay
        await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(15)))
    times = sorted(arrivals(server))
    assert times[-1] - started >= 0.45  # 5 requests beyond the burst at 10/s


async def test_tokens_per_minute_are_limited_by_a_token_bucket(serve):
    server = await serve(usage={"prompt_tokens": 30, "completion_tokens": 200})
    async with judge_for(server, limits={"tpm": 60_000}, max_tokens=200) as judge:  # 1000/s
        started = time.time()
        await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(8)))
    times = sorted(arrivals(server))
    assert times[-1] - started >= 0.5  # ~1,850 tokens against a 1,000-token burst


async def test_repeated_429s_halve_the_concurrency(serve):
    server = await serve(faults=Faults(script=["rate_limit"] * 8, retry_after=0.001))
    async with judge_for(server, limits={"max_in_flight": 8}, retry={"max_retries": 6, "base_delay_s": 0}) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(8)))
        assert judge.limiter.slowdowns >= 1
        assert judge.limiter.width < 8
    assert all(r.ok for r in replies)


async def test_the_concurrency_grows_back_after_successes(serve):
    server = await serve(faults=Faults(script=["rate_limit"] * 8, retry_after=0.001))
    async with judge_for(server, limits={"max_in_flight": 8}, retry={"max_retries": 3, "base_delay_s": 0}) as judge:
        await asyncio.gather(*(judge.ask(request(f"s{i}")) for i in range(8)))
        # halved to 4, then the 8 retries succeed: the first 4 make it 5, 4 of 5 more count
        assert judge.limiter.slowdowns == 1 and judge.limiter.width == 5
        widths = []
        for i in range(1 + 6 + 7):  # the 5th of its window, then windows of 6 and 7
            await judge.ask(request(f"c{i}"))
            widths.append(judge.limiter.width)
        assert widths == [6] * 6 + [7] * 7 + [8]


async def test_the_fitted_timeout_doubles_when_timeouts_are_half_the_recent_outcomes(serve):
    # an endpoint that slows down for real: after 16 quick replies, 4 requests at once hang
    server = await serve(faults=Faults(script=[None] * 16 + ["timeout"] * 4, hang_s=30),
                         latency=0.005)
    async with judge_for(server, limits={"max_in_flight": 4}, retry={"base_delay_s": 0}) as judge:
        for i in range(16):
            await judge.ask(request(f"c{i}"))
        fitted = judge.attempt_timeout_s
        slow = await asyncio.wait_for(
            asyncio.gather(*(judge.ask(request(f"s{i}")) for i in range(4))), timeout=20)
        # 4 timeouts and 4 replies are the last 8 outcomes: double (once). A retry that a
        # stalled machine lets time out too is a timeout like any other and may double it again
        # (the rule itself is pinned exactly, without a clock, in test_timeouts.py)
        stalled = any(r.attempts > 2 for r in slow)
        assert judge.attempt_timeout_s == 2 * fitted or (stalled and judge.attempt_timeout_s > 2 * fitted)
    assert all(r.ok and r.attempts >= 2 for r in slow)


def test_backoff_doubles_and_is_capped():
    policy = RetryPolicy(base_delay_s=0.1, max_delay_s=0.5, jitter=False)
    assert [backoff_delay(n, policy) for n in range(4)] == [0.1, 0.2, 0.4, 0.5]


def test_jittered_backoff_stays_within_the_cap():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0)
    rng = random.Random(1)
    delays = [backoff_delay(5, policy, rng) for _ in range(200)]
    assert all(0 <= d <= 4.0 for d in delays) and len(set(delays)) > 100


def test_retry_after_wins_over_backoff():
    assert retry_delay(0, RetryPolicy(), retry_after=7.0) == 7.0


def test_retry_after_may_be_an_http_date():
    when = formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"Retry-After": when}) <= 31


def test_statuses_are_classified():
    assert [classify_status(s) for s in (200, 400, 401, 408, 429, 500, 529)] == [
        None, FailureKind.TRANSPORT, FailureKind.TRANSPORT, FailureKind.TIMEOUT,
        FailureKind.RATE_LIMIT, FailureKind.SERVER_ERROR, FailureKind.SERVER_ERROR]


async def test_a_retry_is_admitted_before_waiting_first_attempts():
    from assay.judges.config import Limits
    from assay.judges.limits import Limiter

    limiter = Limiter(Limits(max_in_flight=1))
    await limiter.acquire()  # the only slot is taken
    order = []

    async def one(name: str, retry: bool) -> None:
        await limiter.acquire(retry=retry)
        order.append(name)
        limiter.release()

    tasks = [asyncio.create_task(one(name, name.startswith("retry")))
             for name in ("first-a", "first-b", "retry-a", "retry-b")]
    await asyncio.sleep(0)  # all four are waiting now
    limiter.release()
    await asyncio.gather(*tasks)
    assert order == ["retry-a", "retry-b", "first-a", "first-b"]
    assert limiter.in_flight == 0


async def test_waiting_requests_of_different_lanes_take_free_slots_in_turn():
    from assay.judges.config import Limits
    from assay.judges.limits import JUDGE_LANE, Limiter

    limiter = Limiter(Limits(max_in_flight=1))
    await limiter.acquire()  # the only slot is taken
    order = []

    async def one(lane: str, n: int, retry: bool = False) -> None:
        JUDGE_LANE.set(lane)
        await limiter.acquire(retry=retry)
        order.append(f"{lane}{n}")
        limiter.release()

    # a large request queues five calls, then a small one two, then a retry of the large's
    tasks = [asyncio.create_task(one("large", n)) for n in range(5)]
    tasks += [asyncio.create_task(one("small", n)) for n in range(2)]
    tasks.append(asyncio.create_task(one("large", 9, retry=True)))
    await asyncio.sleep(0)  # all of them are waiting now
    limiter.release()
    await asyncio.gather(*tasks)
    assert order == ["large9", "large0", "small0", "large1", "small1", "large2", "large3",
                     "large4"]
    assert limiter.in_flight == 0 and not limiter._lanes and not limiter._lane_in_flight


async def test_a_free_slot_goes_to_the_waiting_lane_with_the_fewest_in_flight():
    from assay.judges.config import Limits
    from assay.judges.limits import JUDGE_LANE, Limiter

    limiter = Limiter(Limits(max_in_flight=4))
    done = {name: asyncio.Event() for name in ("large", "small")}
    admitted = []

    async def one(lane: str, n: int) -> None:
        JUDGE_LANE.set(lane)
        await limiter.acquire()
        admitted.append(f"{lane}{n}")
        await done[lane].wait()
        limiter.release()

    large = [asyncio.create_task(one("large", n)) for n in range(8)]  # 4 in flight, 4 waiting
    await asyncio.sleep(0)
    small = [asyncio.create_task(one("small", n)) for n in range(2)]
    await asyncio.sleep(0)
    assert admitted == ["large0", "large1", "large2", "large3"]
    done["large"].set()  # the 4 slots free up: the small lane (none in flight) goes first
    for _ in range(3):  # the large calls end; then the admitted ones run
        await asyncio.sleep(0)
    assert admitted[4:6] == ["small0", "small1"]
    done["small"].set()
    await asyncio.gather(*large, *small)
    assert admitted[6:] == ["large4", "large5", "large6", "large7"]
    assert limiter.in_flight == 0 and not limiter._lane_in_flight


async def test_a_cancelled_waiter_leaves_its_lane():
    from assay.judges.config import Limits
    from assay.judges.limits import JUDGE_LANE, Limiter

    limiter = Limiter(Limits(max_in_flight=1))
    await limiter.acquire()
    JUDGE_LANE.set("gone")
    waiting = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert not limiter._lanes
    limiter.release()
    assert limiter.in_flight == 0
