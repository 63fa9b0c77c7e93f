"""Issue 16: the attempt timeout fits the endpoint (assay.judges.timeouts), hand-worked values,
and a hung request frees its slot over real HTTP."""

from __future__ import annotations

import asyncio

import pytest

from assay.judges.timeouts import (
    DEFAULT_TIMEOUT_S,
    FIT_AFTER,
    FLOOR_S,
    LONE_MIN_S,
    OUTCOMES,
    WINDOW,
    AttemptTimeouts,
    fitted_timeout,
)
from assay.testing import Faults

from .helpers import judge_for, request


def test_the_fitted_timeout_is_four_times_the_nearest_rank_p99():
    # 100 latencies 0.01, 0.02, ..., 1.00 s: the p99 is the 99th smallest (0.99 s) -> 3.96 s
    assert fitted_timeout([k / 100 for k in range(1, 101)]) == pytest.approx(3.96)
    # 256 latencies: rank ceil(0.99 * 256) = 254, the 3rd largest: two outliers do not count
    assert fitted_timeout([0.1] * 254 + [5.0, 9.0]) == pytest.approx(0.4)
    assert fitted_timeout([0.1] * 253 + [0.3, 5.0, 9.0]) == pytest.approx(1.2)


def test_a_full_window_fits_at_most_twice_its_slowest_reply():
    # 256 replies of 50-60 ms: 4 x p99 (the 254th, 0.06 s) is 0.24 s; twice the slowest 0.12 s
    tight = [0.05] * 200 + [0.06] * 56
    assert fitted_timeout(tight) == pytest.approx(0.12)
    assert fitted_timeout(tight[:WINDOW - 1]) == pytest.approx(0.24)  # not full: 4 x p99
    # a long tail: the p99 is near the slowest, and twice the slowest is the nearer bound
    assert fitted_timeout([1.0] * 250 + [3.0] * 6) == pytest.approx(6.0)
    # outliers beyond the p99: 4 x p99 (0.4 s) is the nearer bound, as before
    assert fitted_timeout([0.1] * 254 + [5.0, 9.0]) == pytest.approx(0.4)


def test_the_fitted_timeout_stays_between_the_floor_and_the_ceiling():
    assert FLOOR_S == 0.1 and DEFAULT_TIMEOUT_S == 60.0
    assert fitted_timeout([0.01] * 50) == 0.1  # 0.04 s: the floor
    assert fitted_timeout([30.0] * 50) == 60.0  # 120 s: the default ceiling
    assert fitted_timeout([1.0] * 50, ceiling=2.5) == 2.5


def test_the_ceiling_holds_until_enough_replies_then_it_refits_every_few_replies():
    timeouts = AttemptTimeouts()
    for _ in range(FIT_AFTER - 1):
        timeouts.replied(0.1)
    assert timeouts.seconds == 60.0  # 15 replies: no fit yet
    timeouts.replied(0.1)
    assert timeouts.seconds == pytest.approx(0.4)  # the 16th: 4 x 0.1 s
    for _ in range(FIT_AFTER):
        timeouts.replied(0.5)  # 16 of 0.1 s and 16 of 0.5 s: the p99 is 0.5 s
    assert timeouts.seconds == pytest.approx(2.0)


def test_a_timeout_set_by_the_user_wins_over_the_fit():
    timeouts = AttemptTimeouts(5.0)
    for _ in range(4 * FIT_AFTER):
        timeouts.replied(0.01)
    for _ in range(8):
        timeouts.timed_out(5.0)
    assert (timeouts.seconds, timeouts.limit(3)) == (5.0, 5.0)


def test_a_retry_after_a_timeout_waits_twice_as_long_up_to_the_ceiling():
    timeouts = AttemptTimeouts(ceiling_s=3.0)
    for _ in range(FIT_AFTER):
        timeouts.replied(0.1)  # fitted: 0.4 s
    assert [timeouts.limit(n) for n in range(5)] == pytest.approx([0.4, 0.8, 1.6, 3.0, 3.0])


def test_the_timeout_doubles_only_when_timeouts_are_half_of_the_recent_outcomes():
    timeouts = AttemptTimeouts()
    for _ in range(FIT_AFTER):
        timeouts.replied(0.1)  # 0.4 s
    for _ in range(3):
        timeouts.timed_out(0.4)  # the last 8 outcomes: 5 replies, 3 timeouts
    assert timeouts.seconds == pytest.approx(0.4)
    timeouts.timed_out(0.4)  # 4 replies, 4 timeouts: half -> double the attempt's 0.4 s
    assert timeouts.seconds == pytest.approx(0.8)
    timeouts.timed_out(0.8)  # the outcomes start afresh: 1 timeout is not enough
    assert timeouts.seconds == pytest.approx(0.8)
    timeouts.timed_out(0.8)  # 2 of 2
    assert timeouts.seconds == pytest.approx(1.6)


async def test_an_attempt_in_flight_follows_a_refit():
    timeouts = AttemptTimeouts()
    reached = asyncio.Event()

    async def hung() -> None:
        async with timeouts.attempt() as attempt:
            assert attempt.limit == 60.0
            reached.set()
            await asyncio.sleep(3600)

    task = asyncio.create_task(hung())
    await reached.wait()
    for _ in range(FIT_AFTER):
        timeouts.replied(0.01)  # refit to the floor while the attempt waits
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(task, timeout=20)  # a guard, not a measurement
    assert timeouts.seconds == FLOOR_S and not timeouts._open


async def test_a_request_hung_before_the_first_fit_is_let_go_at_the_fit(serve):
    # The first request hangs for 30 s with the default 60 s ceiling; the other slot's 16
    # quick replies fit the timeout (the floor here), which frees the hung one's slot.
    server = await serve(faults=Faults(script=["timeout"], hang_s=30.0), latency=0.005)
    async with judge_for(server, limits={"max_in_flight": 2}, retry={"base_delay_s": 0}) as judge:
        replies = await asyncio.wait_for(
            asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(24))), timeout=20)
        assert judge.limiter.in_flight == 0
    assert all(r.ok for r in replies)
    assert replies[0].attempts == 2 and sum(r.attempts for r in replies) == 25
    assert len(server.requests) == 25


async def test_a_user_timeout_is_what_each_attempt_waits(serve):
    server = await serve(faults=Faults(script=[None] * FIT_AFTER + ["timeout"], hang_s=30.0),
                         latency=0.001)
    async with judge_for(server, timeout_s=0.5, retry={"base_delay_s": 0}) as judge:
        for i in range(FIT_AFTER):
            await judge.ask(request(f"c{i}"))
        assert judge.attempt_timeout_s == 0.5  # not fitted to the 1 ms replies
        hung = await asyncio.wait_for(judge.ask(request("hung")), timeout=20)
    assert hung.ok and hung.attempts == 2


async def test_one_watch_lets_go_only_the_attempts_past_their_deadline():
    timeouts = AttemptTimeouts()
    for _ in range(FIT_AFTER):
        timeouts.replied(0.01)  # the floor: 0.1 s
    loop = asyncio.get_running_loop()

    async def attempt(wait: float) -> float:
        async with timeouts.attempt():
            sent = loop.time()
            try:
                await asyncio.sleep(wait)
            except TimeoutError:  # the deadline is raised at the ``async with``, not here
                raise AssertionError("not a TimeoutError inside the attempt") from None
        return loop.time() - sent

    results = await asyncio.gather(*(attempt(0.01) for _ in range(5)), attempt(3600),
                                   return_exceptions=True)
    assert all(isinstance(r, float) for r in results[:5]) and isinstance(results[5], TimeoutError)
    assert not timeouts._open and timeouts._watch is None  # nothing left scheduled


async def test_an_attempt_in_flight_is_not_let_go_before_a_lengthened_deadline():
    timeouts = AttemptTimeouts(ceiling_s=1.0)
    for _ in range(FIT_AFTER):
        timeouts.replied(0.01)  # the floor: 0.1 s
    loop = asyncio.get_running_loop()
    sent = loop.time()
    with pytest.raises(TimeoutError):
        async with timeouts.attempt() as attempt:
            for _ in range(OUTCOMES // 2):
                timeouts.timed_out(0.1)  # half of the recent outcomes: the timeout doubles
            assert attempt.limit == timeouts.seconds == 0.2
            await asyncio.sleep(3600)
    assert loop.time() - sent >= 0.2  # the watch set for 0.1 s looked again and waited


def test_a_seed_of_enough_stored_latencies_fits_the_timeout_at_once():
    timeouts = AttemptTimeouts()
    timeouts.seed([0.1] * (FIT_AFTER - 1) + [0.3])
    assert timeouts.seconds == pytest.approx(1.2)  # 4 x the p99 (0.3 s), not the 60 s ceiling


def test_a_seed_of_too_few_latencies_leaves_the_ceiling():
    timeouts = AttemptTimeouts()
    timeouts.seed([0.1] * (FIT_AFTER - 1))
    assert timeouts.seconds == 60.0


def test_the_sessions_own_replies_refit_a_seeded_timeout_from_themselves_alone():
    timeouts = AttemptTimeouts()
    timeouts.seed([2.0] * 100)  # a loaded run's latencies, waits for a free slot included
    assert timeouts.seconds == 8.0
    for _ in range(FIT_AFTER):
        timeouts.replied(0.1)
    assert timeouts.seconds == pytest.approx(0.4)  # 4 x 0.1 s: the seed is not in the window


def test_a_seed_changes_nothing_once_replies_were_seen_or_with_a_user_timeout():
    seen = AttemptTimeouts()
    for _ in range(FIT_AFTER):
        seen.replied(0.1)
    seen.seed([5.0] * FIT_AFTER)
    user = AttemptTimeouts(5.0)
    user.seed([0.1] * FIT_AFTER)
    assert (seen.seconds, user.seconds) == (pytest.approx(0.4), 5.0)


# --- issue 40: a paid endpoint's slow replies, and a loaded machine's -------------------------


def test_a_paid_judge_is_not_fitted_a_free_or_local_one_is():
    from assay.judges import make_judge

    paid = make_judge("openai-compatible:gpt-4.1-mini@http://127.0.0.1:9/v1")  # a listed price
    free = make_judge("openai-compatible:fake@http://127.0.0.1:9/v1")  # no price: free
    local = make_judge("llamacpp:gpt-4.1-mini")  # a local server bills nothing
    priced = make_judge("openai-compatible:fake@http://127.0.0.1:9/v1",
                        price={"input": 1.0, "output": 2.0})
    assert (paid.paid, free.paid, local.paid, priced.paid) == (True, False, False, True)
    for _ in range(4 * FIT_AFTER):
        paid.timeouts.replied(0.01)
        free.timeouts.replied(0.01)
    assert paid.timeouts.seconds == DEFAULT_TIMEOUT_S and free.timeouts.seconds == FLOOR_S
    paid.timeouts.seed([0.01] * FIT_AFTER)
    assert paid.timeouts.seconds == DEFAULT_TIMEOUT_S


async def test_a_paid_judge_waits_for_a_reply_that_is_merely_slow(serve):
    """A tenth of the questions take 60 times the median on every attempt (long answers): a
    free judge abandons and re-sends them, a paid one (each attempt billed) waits for them."""
    from assay.testing import Latency

    server = await serve(latency=Latency.heavy_tail(0.005, share=0.1, factor=60.0, seed=3))
    slow = [i for i in range(64) if server.latency.sample(None, f"c{i}") > 0.1]
    assert slow  # the seed gives some slow questions (0.3 s)
    async with judge_for(server, price={"input": 1.0, "output": 1.0},
                         limits={"max_in_flight": 8}) as paid:
        replies = await asyncio.gather(*(paid.ask(request(f"c{i}")) for i in range(64)))
    assert all(r.ok and r.attempts == 1 for r in replies)
    assert len(server.requests) == 64
    async with judge_for(server, limits={"max_in_flight": 8}) as free:
        replies = await asyncio.gather(*(free.ask(request(f"c{i}")) for i in range(64)))
    assert all(r.ok for r in replies) and sum(r.attempts for r in replies) > 64


async def test_replies_late_together_are_kept_a_hung_one_goes_once_overtaken_or_alone():
    """A loaded machine stalls every reply at once: none overtakes another, so a stall shorter
    than LONE_MULTIPLE times the timeout (and LONE_MIN_S more than it) abandons none. A hung
    attempt is let go at its timeout once a later attempt has been answered, and alone then."""
    timeouts = AttemptTimeouts()
    for _ in range(FIT_AFTER):
        timeouts.replied(0.01)  # the floor: 0.1 s
    loop = asyncio.get_running_loop()

    async def attempt(wait: float, delay: float = 0.0) -> float:
        await asyncio.sleep(delay)
        sent = loop.time()
        async with timeouts.attempt():
            await asyncio.sleep(wait)
        return loop.time() - sent

    stalled = await asyncio.gather(*(attempt(0.25) for _ in range(8)))
    assert all(s >= 0.25 for s in stalled)  # 2.5 times the timeout: all kept
    started = loop.time()
    hung, later = await asyncio.gather(attempt(3600), attempt(0.15, delay=0.01),
                                       return_exceptions=True)
    assert isinstance(hung, TimeoutError) and isinstance(later, float)
    assert loop.time() - started < FLOOR_S + LONE_MIN_S  # overtaken at 0.16 s: let go
    started = loop.time()
    with pytest.raises(TimeoutError):
        await attempt(3600)
    assert loop.time() - started >= FLOOR_S + LONE_MIN_S  # alone: 1.1 s (4 x 0.1 s is less)


async def test_a_reply_read_in_the_same_loop_turn_as_its_deadline_is_kept():
    """A starved process reads the reply and sees the deadline passed in one turn of its
    event loop: the reply is read first (the attempt is let go a turn later, if still open)."""
    import socket
    import time

    timeouts = AttemptTimeouts()
    for _ in range(FIT_AFTER):
        timeouts.replied(0.01)  # the floor: 0.1 s
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)

    async def overtaking() -> None:
        async with timeouts.attempt():
            await asyncio.sleep(0.01)  # answered: the attempt below counts as overtaken

    def stall() -> None:  # the reply arrives, then the process is starved past the deadline
        theirs.send(b"x")
        time.sleep(0.3)

    async def waiting() -> bytes:
        async with timeouts.attempt():
            loop.call_later(0.05, stall)
            await overtaking()
            return await reader.read(1)

    try:
        assert await asyncio.wait_for(waiting(), timeout=20) == b"x"
    finally:
        writer.close()
        theirs.close()
