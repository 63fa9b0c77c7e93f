"""Per-endpoint limits: requests in flight, requests and tokens per minute, slowing on 429s.

:class:`TokenBucket` refills continuously at ``per_minute / 60`` per second and holds at most
``burst_s`` seconds of budget; a request larger than the bucket waits for a full bucket and
then leaves it in debt, so the long-run rate still holds. :class:`Limiter` combines a
concurrency gate, the two buckets, and an AIMD response to rate limits (429s only: a 500 or a
timeout is retried with backoff but says nothing about the endpoint's capacity, so it leaves
the width alone):

* **multiplicative decrease**: a *rate-limit storm* (429s are at least half of the last
  ``STORM_WINDOW`` answers, of at least ``STORM_MIN_ANSWERS`` since the last narrowing) halves
  the width and pauses the whole endpoint for the Retry-After. The 429s of requests sent before that narrowing do not narrow it again (one
  decrease per round trip, as TCP does), so a burst of 429s from one full window halves it once;
* an isolated 429 (even one answer in ten) only delays its own retry by its Retry-After:
  narrowing or pausing every request for it would stall a run against an endpoint that sheds
  a little load (at 10% 429s, 4 of 8 answers are 429s by chance once in 200 tries, 16 of 32
  once in 80 million);
* the width never drops below ``max_in_flight // MIN_WIDTH_DIVISOR`` (at least 1);
* **additive increase**: the width grows back by one per window of ``width`` successes, up to
  ``max_in_flight``, so it recovers once the storm has passed.

``max_in_flight`` is the user's (``limits.max_in_flight`` other than the default,
``--concurrency``), else the parallel slots of a server that says them (llama.cpp queues
requests beyond its slots and never answers 429: more in flight only wait there, and time
out), else 64; :attr:`Limiter.in_flight_source` says which.

**AIMD on latency** (:meth:`Limiter.follow_latency`, for a local server that says no slots:
vLLM, Ollama, LM Studio). Such a server never answers 429 either; it queues what it cannot
decode at once, and a request's latency grows with the queue. So the width starts at
:data:`LATENCY_START` and, per window of ``max(width, 4)`` replies, grows by one while the
window's median latency stays within :data:`GROW_WHILE` times the fastest window's, holds above
that, and halves above :data:`BACK_OFF_ABOVE` times it (never below 1, never above
``max_in_flight``). On a server of S slots a request waits about ``width / S`` reply times once
``width`` passes S, so the width settles near ``1.25 S``. :attr:`Limiter.reached` is the widest
it went (a run's manifest records it).

**Lanes.** Requests waiting for a slot wait in the lane of the task that sent them
(:data:`JUDGE_LANE`, a context variable; one lane unless a caller sets it). A free slot goes
to the waiting lane with the fewest requests in flight (ties in turn), first come first served
within a lane; retries go ahead of every lane. ``assay serve`` gives each HTTP request a lane
of its own, so a one-item request's calls take the next free slots instead of queueing behind
the thousands of a large one's, however many large ones there are. :meth:`Limiter.release`
is called in the task that acquired (the lane is read from the context).

Example:
    >>> import asyncio
    >>> from assay.judges.config import Limits
    >>> limiter = Limiter(Limits(max_in_flight=2, rpm=6000))
    >>> async def one():
    ...     await limiter.acquire(tokens=100)
    ...     limiter.release()
    >>> asyncio.run(one())
    >>> limiter.in_flight
    0
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter, deque
from collections.abc import Hashable
from contextvars import ContextVar

from assay.judges.config import DEFAULT_MAX_IN_FLIGHT, Limits

STORM_WINDOW = 32  # a storm: 429s are at least half of the last (up to) this many answers ...
STORM_MIN_ANSWERS = 8  # ... of at least this many answers since the last narrowing
MIN_WIDTH_DIVISOR = 16  # the width never drops below max_in_flight // this (nor below 1)
LATENCY_START = 2  # requests in flight a local server that says no slots starts with
LATENCY_WINDOW = 4  # at least this many replies per latency window
GROW_WHILE = 1.25  # grow while a window's median latency is within this of the fastest window's
BACK_OFF_ABOVE = 2.0  # halve above this

#: The lane a judge request waits in for a slot (see the module doc): set it in a task, and
#: the judge requests of that task and of the tasks it starts wait in that lane.
JUDGE_LANE: ContextVar[Hashable] = ContextVar("assay_judge_lane", default=None)


class TokenBucket:
    """A continuous-refill token bucket for a per-minute rate."""

    def __init__(self, per_minute: float, burst_s: float = 1.0):
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.tokens = self.capacity
        self._stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self, n: float = 1.0) -> None:
        """Wait until ``min(n, capacity)`` tokens are there, then take ``n`` (may go negative)."""
        need = min(n, self.capacity)
        while True:
            self._refill()
            if self.tokens >= need:
                self.tokens -= n
                return
            await asyncio.sleep((need - self.tokens) / self.rate)

    def adjust(self, delta: float) -> None:
        """Take ``delta`` more tokens (negative gives some back), e.g. estimate vs. actual."""
        self._refill()
        self.tokens = min(self.capacity, self.tokens - delta)


class Limiter:
    """Admission control for one endpoint. :meth:`acquire` before a request (it returns the
    round the request is sent in) and :meth:`release` after it, then :meth:`record_success` or
    :meth:`record_rate_limited` with that round."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.max_in_flight = self.width = limits.max_in_flight
        self.min_width = max(1, limits.max_in_flight // MIN_WIDTH_DIVISOR)
        chosen = limits.max_in_flight != DEFAULT_MAX_IN_FLIGHT
        self._chosen = chosen  # by the user: a server's slots do not change it
        self.in_flight_source = "limits.max_in_flight" if chosen else "the default"
        self.in_flight = 0
        self.rpm = TokenBucket(limits.rpm) if limits.rpm else None
        self.tpm = TokenBucket(limits.tpm) if limits.tpm else None
        self.paused_until = 0.0
        self.slowdowns = 0
        self.round = 0  # bumped by every narrowing
        self._answers: deque[bool] = deque(maxlen=STORM_WINDOW)  # True: a 429, this round
        self._successes = 0  # since the width last changed
        # first attempts waiting, by lane, the lanes in turn (the last served at the back)
        self._lanes: dict[Hashable, deque[asyncio.Future[None]]] = {}
        self._retries: deque[tuple[Hashable, asyncio.Future[None]]] = deque()  # admitted first
        self._lane_in_flight: Counter[Hashable] = Counter()
        self._latencies: list[float] | None = None  # the window's replies (AIMD on latency)
        self._fastest = float("inf")  # the lowest window median latency so far
        self.reached = self.width  # the widest the width has been

    def set_max_in_flight(self, n: int, source: str = "--concurrency") -> None:
        """Allow ``n`` requests in flight, as the user chose (``source``, e.g. ``assay grade
        --concurrency N``): a server's slots do not change it afterwards."""
        self._chosen = True
        self._resize(n, source)

    def follow_server(self, slots: int, source: str) -> bool:
        """Allow as many requests in flight as the server decodes at once (``slots``, said by
        ``source``), unless the user chose a number; True if it did.

        >>> limiter = Limiter(Limits())
        >>> limiter.follow_server(4, "/props total_slots"), limiter.max_in_flight
        (True, 4)
        >>> limiter.set_max_in_flight(8); limiter.follow_server(2, "/props total_slots")
        False
        >>> limiter.max_in_flight, limiter.in_flight_source
        (8, '--concurrency')
        """
        if self._chosen:
            return False
        self._resize(slots, f"the server's parallel slots ({source})")
        return True

    @property
    def follows_latency(self) -> bool:
        """Whether the width follows the replies' latency (:meth:`follow_latency`)."""
        return self._latencies is not None

    def follow_latency(self, start: int = LATENCY_START) -> bool:
        """Start at ``start`` requests in flight and grow while the replies' latency holds
        (AIMD on latency, see the module doc), unless the user chose a number; True if so.

        >>> limiter = Limiter(Limits())
        >>> limiter.follow_latency(), limiter.width
        (True, 2)
        >>> for latency in [1.0] * 4 + [1.1] * 4:   # two windows within 1.25x: +1 each
        ...     limiter.record_success(latency_s=latency)
        >>> limiter.width, limiter.reached
        (4, 4)
        >>> for latency in [3.0] * 4:   # over 2x the fastest window: halved
        ...     limiter.record_success(latency_s=latency)
        >>> limiter.width, limiter.reached
        (2, 4)
        """
        if self._chosen:
            return False
        self.width = self.reached = max(1, min(start, self.max_in_flight))
        self._latencies = []
        self.in_flight_source = (f"latency: started at {self.width}, grown while the replies "
                                 f"kept within {GROW_WHILE:g}x the fastest (the server says "
                                 "no parallel slots)")
        return True

    def _resize(self, n: int, source: str) -> None:
        self.max_in_flight = self.width = self.reached = max(1, int(n))
        self.min_width = max(1, self.max_in_flight // MIN_WIDTH_DIVISOR)
        self.in_flight_source = source
        self._latencies = None
        self._wake()

    async def acquire(self, tokens: float = 0.0, *, retry: bool = False) -> int:
        """Wait for a slot (a ``retry`` goes ahead of waiting first attempts: its call has
        waited already, and the run's tail is its slowest call) and the rate budgets."""
        lane = JUDGE_LANE.get()
        if self.in_flight < self.width and not self._lanes and not self._retries:
            self.in_flight += 1
            self._lane_in_flight[lane] += 1
        else:
            future = asyncio.get_running_loop().create_future()
            if retry:
                self._retries.append((lane, future))
            else:
                self._lanes.setdefault(lane, deque()).append(future)
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self.release()
                elif retry:
                    self._retries.remove((lane, future))
                else:
                    queue = self._lanes[lane]
                    queue.remove(future)
                    if not queue:
                        del self._lanes[lane]
                raise
        try:
            # the pause is checked after admission: waiters woken later must honour it too
            while (pause := self.paused_until - time.monotonic()) > 0:
                await asyncio.sleep(pause)
            if self.rpm is not None:
                await self.rpm.take(1.0)
            if self.tpm is not None and tokens > 0:
                await self.tpm.take(tokens)
        except BaseException:
            self.release()
            raise
        return self.round

    def release(self) -> None:
        """End a request admitted by :meth:`acquire` (in the task that acquired)."""
        self.in_flight -= 1
        lane = JUDGE_LANE.get()
        self._lane_in_flight[lane] -= 1
        if not self._lane_in_flight[lane]:
            del self._lane_in_flight[lane]
        self._wake()

    def _wake(self) -> None:
        while self.in_flight < self.width and (self._retries or self._lanes):
            lane, future = self._retries.popleft() if self._retries else self._next_in_turn()
            if not future.done():
                self.in_flight += 1
                self._lane_in_flight[lane] += 1
                future.set_result(None)

    def _next_in_turn(self) -> tuple[Hashable, asyncio.Future[None]]:
        """The first waiter of the waiting lane with the fewest requests in flight (the first
        such in turn); that lane goes to the back of the turn."""
        in_flight = self._lane_in_flight
        lane = min(self._lanes, key=lambda waiting: in_flight[waiting])
        queue = self._lanes.pop(lane)
        future = queue.popleft()
        if queue:
            self._lanes[lane] = queue
        return lane, future

    def record_success(self, estimated_tokens: float = 0.0, actual_tokens: float = 0.0,
                       latency_s: float | None = None) -> None:
        """A request answered well, in ``latency_s`` seconds."""
        if self.tpm is not None and estimated_tokens:
            self.tpm.adjust(actual_tokens - estimated_tokens)
        self._answers.append(False)
        if self._latencies is not None:
            if latency_s is not None:
                self._latency_step(latency_s)
        elif self.width < self.max_in_flight:
            self._successes += 1
            if self._successes >= self.width:  # additive increase: +1 per window
                self._successes = 0
                self.width += 1
                self._wake()

    def _latency_step(self, latency_s: float) -> None:
        window = self._latencies
        assert window is not None
        window.append(latency_s)
        if len(window) < max(self.width, LATENCY_WINDOW):
            return
        median = statistics.median(window)
        window.clear()
        self._fastest = min(self._fastest, median)
        if median > BACK_OFF_ABOVE * self._fastest:
            self.width = max(1, self.width // 2)
        elif median <= GROW_WHILE * self._fastest and self.width < self.max_in_flight:
            self.width += 1
            self.reached = max(self.reached, self.width)
            self._wake()

    def record_rate_limited(self, retry_after: float | None, sent_in: int | None = None) -> None:
        """A 429 to a request sent in round ``sent_in``: narrow and pause in a storm (see the
        module doc); an isolated one changes nothing here (its retry waits on its own)."""
        if sent_in is not None and sent_in < self.round:
            return  # sent before the last narrowing, which already answered it
        answers = self._answers
        answers.append(True)
        limited = sum(answers)
        if not (self.limits.slow_down and len(answers) >= STORM_MIN_ANSWERS
                and 2 * limited >= len(answers)):
            return
        answers.clear()
        self.round += 1
        self._successes = 0
        if retry_after:
            self.paused_until = max(self.paused_until, time.monotonic() + retry_after)
        if self.width > self.min_width:
            self.width = max(self.min_width, self.width // 2)
            self.slowdowns += 1
