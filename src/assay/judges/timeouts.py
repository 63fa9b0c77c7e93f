"""How long one HTTP attempt may wait for its reply before it is abandoned and its slot freed.

A ``timeout_s`` the user sets is used as is, for every attempt. Left unset, the timeout *fits
the endpoint*:

* until :data:`FIT_AFTER` replies have been seen it is the ceiling, :data:`DEFAULT_TIMEOUT_S`;
* then it is ``MULTIPLE × p99`` of the last :data:`WINDOW` reply latencies (nearest rank),
  never below :data:`FLOOR_S` nor above the ceiling, refitted every :data:`FIT_AFTER` replies;
* once the window is full it is also at most ``SLOWEST_MULTIPLE ×`` its slowest reply: with
  256 replies the tail is well seen, and an attempt twice as slow as every one of them is hung,
  not slow. Where the slowest replies are within twice the p99 (tight latencies: a local
  server, the 50 ms fake judge) this is the nearer bound; where a few outliers lie beyond it,
  ``4 × p99`` stays the bound;
* attempts already in flight follow a refit (their deadline becomes send time + the new
  timeout), so a request that hung before the first fit is let go as soon as there is one;
* a call's retry after a timeout waits twice as long as the attempt that timed out (up to the
  ceiling), so a request slow for a reason of its own (a long answer) still gets through;
* when timeouts make up half of the recent outcomes (at least 2 of the last
  :data:`OUTCOMES`), the endpoint has slowed down for real: the timeout doubles (up to the
  ceiling) until replies refit it. A few hung requests among many replies change nothing;
* an attempt past its timeout is let go once an attempt sent after it has been answered (it
  was overtaken: the endpoint answers, but not this request), else at :data:`LONE_MULTIPLE`
  times its timeout and at least :data:`LONE_MIN_S` after it (never past the ceiling). A loaded machine stalls the
  client or a server on it as a whole: replies then come late all together, none overtakes
  another, and none is abandoned for a stall shorter than that. And the attempt is let go a
  few event-loop turns after its deadline is seen (:data:`LET_GO_AFTER_TURNS`), so a reply
  that came while the process was starved, read by the next poll of its sockets, finishes
  first.

A judge whose every attempt is billed (a **paid endpoint**: a price is known for its model
and it is not a local server) is not fitted at all (``fitted=False``): an attempt waits the
ceiling (60 s by default, ``timeout_ceiling_s``) before it is abandoned. A provider bills an
abandoned attempt in full, since the model generated the reply anyway: on an endpoint where 1%
of the questions take 40 times the median (long reasoning answers), the fit abandoned and
re-sent 0.8-1.5% more requests than calls, where waiting the ceiling re-sends none. A hung
request on a paid endpoint costs a slot for the ceiling instead of money. Free endpoints (local servers,
unpriced models) keep the fit, where a hung request's slot is what matters.

On a 50 ms endpoint a hung request so frees its slot in about an eighth of a second once 256
replies are seen (a quarter before), and on a model that takes 20 s to answer it still gets a
minute. A resumed run or job starts from the fit of the
latencies it stored (:meth:`AttemptTimeouts.seed`) until its own replies refit it, so that its
first attempts are not held to the ceiling: a resume of a few calls against a hanging endpoint
does not wait 60 s per hung attempt.

Example:
    >>> fitted_timeout([0.05] * 94 + [0.1] * 6)    # p99 is 0.1 s: 4 × 0.1 s
    0.4
    >>> fitted_timeout([0.05] * 100)                # 4 × 0.05 s
    0.2
    >>> fitted_timeout([0.05] * 256)                # a full window: 2 × its slowest, 0.05 s
    0.1
    >>> fitted_timeout([0.01] * 100)                # 4 × 0.01 s is below the floor
    0.1
    >>> fitted_timeout([20.0] * 100)                # 80 s is above the ceiling
    60.0
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Iterable
from typing import Self

DEFAULT_TIMEOUT_S = 60.0  # the ceiling when the user sets no timeout_s
MULTIPLE = 4.0  # the timeout is this many times ...
PERCENTILE = 0.99  # ... this percentile of the recent reply latencies ...
FLOOR_S = 0.1  # ... and never shorter than this (timer and event-loop jitter)
WINDOW = 256  # reply latencies kept
SLOWEST_MULTIPLE = 2.0  # a full window's fit is at most this many times its slowest reply
FIT_AFTER = 16  # replies seen before the first fit, and between refits
OUTCOMES = 8  # recent attempts whose timeouts can double the timeout
LONE_MULTIPLE = 4.0  # an attempt no later one has overtaken waits this many times its timeout
LONE_MIN_S = 1.0  # ... and at least this much longer than its timeout (a stall of the machine)
LET_GO_AFTER_TURNS = 2  # event-loop turns between seeing a deadline passed and letting go
_RESOLUTION = time.get_clock_info("monotonic").resolution  # as the event loop's timers


def fitted_timeout(latencies: Iterable[float], ceiling: float = DEFAULT_TIMEOUT_S) -> float:
    """``MULTIPLE × p99`` of ``latencies`` (nearest rank), and at most ``SLOWEST_MULTIPLE ×``
    the slowest of at least ``WINDOW`` of them, within ``[FLOOR_S, ceiling]``."""
    ordered = sorted(latencies)
    p99 = ordered[max(0, math.ceil(PERCENTILE * len(ordered)) - 1)]
    fit = MULTIPLE * p99
    if len(ordered) >= WINDOW:
        fit = min(fit, SLOWEST_MULTIPLE * ordered[-1])
    return min(ceiling, max(FLOOR_S, round(fit, 6)))


class AttemptTimeouts:
    """The timeouts of one endpoint's attempts (the rules are in the module doc).

    ``async with timeouts.attempt(n) as attempt:`` bounds one attempt whose call has already
    timed out ``n`` times; it raises :class:`TimeoutError` when ``attempt.limit`` passes.
    Report each reply's latency to :meth:`replied` and each timeout to :meth:`timed_out`.

    One event-loop timer watches every attempt in flight (set for the nearest deadline), not
    one timer each: an attempt costs no timer of its own and a refit no rescheduling.

    ``fitted=False`` (a paid endpoint's): every attempt waits the ceiling; replies do not
    refit it.
    """

    def __init__(self, timeout_s: float | None = None, *, ceiling_s: float = DEFAULT_TIMEOUT_S,
                 fitted: bool = True):
        self.fixed = timeout_s is not None
        self.fitted = fitted and not self.fixed
        self.ceiling = timeout_s if timeout_s is not None else ceiling_s
        self.seconds = self.ceiling
        self._latencies: deque[float] = deque(maxlen=WINDOW)
        self._since_fit = 0
        self._outcomes: deque[bool] = deque(maxlen=OUTCOMES)  # True: a timeout
        self._open: dict[_Attempt, None] = {}  # attempts in flight
        self._watch: asyncio.TimerHandle | None = None  # fires at the nearest deadline ...
        self._watch_at = math.inf  # ... which is this (loop time)
        self._watch_loop: asyncio.AbstractEventLoop | None = None
        self._sent = 0  # attempts sent so far: each attempt's number
        self._answered = 0  # the number of the latest attempt sent that has been answered
        self._overdue = 0  # attempts past their timeout, not overtaken yet (at the last look)

    def limit(self, timed_out_before: int = 0) -> float:
        """The timeout of an attempt whose call timed out ``timed_out_before`` times already."""
        if timed_out_before == 0:
            return self.seconds
        return min(self.ceiling, self.seconds * 2.0 ** timed_out_before)

    def attempt(self, timed_out_before: int = 0) -> _Attempt:
        return _Attempt(self, timed_out_before)

    def seed(self, latencies: Iterable[float]) -> None:
        """Start from the fit of ``latencies`` seen before (a resumed run's stored ones) instead
        of the ceiling, when there are at least :data:`FIT_AFTER` of them. They do not enter the
        window: this session's own first :data:`FIT_AFTER` replies refit from themselves alone
        (stored call latencies include the wait for a free slot in a loaded run, so their fit
        is on the long side). Only a fit that has seen no reply yet is seeded.

        >>> timeouts = AttemptTimeouts()
        >>> timeouts.seed([0.5] * 20); timeouts.seconds
        2.0
        >>> for _ in range(FIT_AFTER): timeouts.replied(0.05)
        >>> timeouts.seconds
        0.2
        """
        if not self.fitted or self._latencies:
            return
        seen = [x for x in latencies if x >= 0]
        if len(seen) >= FIT_AFTER:
            self._set(fitted_timeout(seen, self.ceiling))

    def replied(self, seconds: float) -> None:
        """A reply after ``seconds``: refit every FIT_AFTER replies."""
        if not self.fitted:
            return
        self._latencies.append(seconds)
        self._outcomes.append(False)
        self._since_fit += 1
        if self._since_fit >= FIT_AFTER:
            self._since_fit = 0
            self._set(fitted_timeout(self._latencies, self.ceiling))

    def timed_out(self, limit: float) -> None:
        """An attempt got no reply within ``limit``: double the timeout if timeouts are half
        of the recent outcomes."""
        if not self.fitted:
            return
        outcomes = self._outcomes
        outcomes.append(True)
        timeouts = sum(outcomes)
        if timeouts >= 2 and 2 * timeouts >= len(outcomes):
            outcomes.clear()
            self._set(min(self.ceiling, max(self.seconds, 2 * limit)))

    def _set(self, seconds: float) -> None:
        if seconds != self.seconds:
            self.seconds = seconds
            now = self._watch_loop.time() if self._watch_loop is not None else 0.0
            nearest = math.inf
            for attempt in self._open:  # attempts in flight follow the refit
                attempt.limit = self.limit(attempt._timed_out_before)
                nearest = min(nearest, attempt.next_look(now))
            if nearest < self._watch_at and self._watch_loop is not None:
                self._watch_until(nearest, self._watch_loop)

    def _opened(self, attempt: _Attempt, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._watch_loop:  # a new event loop: forget the last one's attempts
            if self._watch is not None:
                self._watch.cancel()
            self._watch, self._watch_at, self._watch_loop = None, math.inf, loop
            self._open = {a: None for a in self._open if a._loop is loop}
        self._sent += 1
        attempt._number = self._sent
        self._open[attempt] = None
        deadline = attempt._sent + attempt.limit
        if deadline < self._watch_at:
            self._watch_until(deadline, loop)

    def _closed(self, attempt: _Attempt, answered: bool) -> None:
        self._open.pop(attempt, None)
        if answered and attempt._number > self._answered:
            self._answered = attempt._number
            if self._overdue and self._watch_loop is not None:  # it may overtake one: look
                self._watch_until(self._watch_loop.time(), self._watch_loop)
        if not self._open and self._watch is not None:  # nothing left to watch
            self._watch.cancel()
            self._watch, self._watch_at = None, math.inf

    def _watch_until(self, deadline: float, loop: asyncio.AbstractEventLoop) -> None:
        if self._watch is not None:
            self._watch.cancel()
        self._watch_at = deadline
        self._watch = loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        """The watch timer: let go every attempt past its deadline that a later one overtook
        or that is past :data:`LONE_MULTIPLE` times its timeout, then watch the nearest."""
        self._watch, self._watch_at = None, math.inf
        loop = self._watch_loop
        if loop is None or not self._open:
            return
        now = loop.time() + _RESOLUTION
        nearest, overdue, let_go = math.inf, 0, []
        for attempt in self._open:
            deadline = attempt._sent + attempt.limit
            if deadline > now:
                nearest = min(nearest, deadline)
            elif attempt._number < self._answered or attempt.lone_deadline() <= now:
                let_go.append(attempt)
            else:
                overdue += 1
                nearest = min(nearest, attempt.lone_deadline())
        self._overdue = overdue
        for attempt in let_go:
            del self._open[attempt]
        if let_go:
            loop.call_soon(_let_go, let_go, LET_GO_AFTER_TURNS)
        if nearest < math.inf:
            self._watch_until(nearest, loop)


def _let_go(attempts: list[_Attempt], turns: int) -> None:
    """Let ``attempts`` go after ``turns`` more turns of the event loop, those whose reply has
    not come meanwhile: a process starved past a deadline may run its timers in a turn whose
    poll found no socket ready yet (the next poll finds the replies that came while it was
    stopped), and the tasks that poll wakes run in the turn after it."""
    if turns:
        asyncio.get_running_loop().call_soon(_let_go, attempts, turns - 1)
        return
    for attempt in attempts:
        attempt._expire()


class _Attempt:
    """One attempt's deadline (send time + its limit, following refits). Past it, the attempt's
    task is cancelled and the cancellation leaves the ``async with`` as :class:`TimeoutError`,
    exactly as :func:`asyncio.timeout` does it."""

    __slots__ = ("_cancelling", "_done", "_expired", "_loop", "_number", "_owner", "_sent",
                 "_task", "_timed_out_before", "limit")

    def __init__(self, owner: AttemptTimeouts, timed_out_before: int):
        self._owner = owner
        self._timed_out_before = timed_out_before
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancelling = 0
        self._expired = False
        self._done = False
        self._sent = 0.0
        self._number = 0
        self.limit = owner.limit(timed_out_before)

    def lone_deadline(self) -> float:
        """When the attempt is let go if no later attempt overtakes it (loop time). An attempt
        held to the ceiling is let go at it: the ceiling is the longest any attempt waits."""
        if self.limit >= self._owner.ceiling:
            return self._sent + self.limit
        return self._sent + max(LONE_MULTIPLE * self.limit, self.limit + LONE_MIN_S)

    def next_look(self, now: float) -> float:
        """When the watch should look at this attempt next (loop time)."""
        deadline = self._sent + self.limit
        return deadline if deadline > now else self.lone_deadline()

    async def __aenter__(self) -> Self:
        if not self._owner.fixed:  # a fixed timeout is the HTTP session's own
            task = asyncio.current_task()
            if task is None:
                raise RuntimeError("an attempt's timeout works inside a task")
            loop = task.get_loop()
            self._task, self._loop, self._cancelling = task, loop, task.cancelling()
            self._sent = loop.time()
            self._owner._opened(self, loop)
        return self

    async def __aexit__(self, kind, error, trace) -> None:
        task = self._task
        if task is not None:
            self._done = True
            self._owner._closed(self, answered=kind is None and not self._expired)
            if self._expired and task.uncancel() <= self._cancelling \
                    and kind is asyncio.CancelledError:
                raise TimeoutError from error  # our cancel, and no one else's: the deadline

    def _expire(self) -> None:
        if self._task is not None and not self._expired and not self._done:
            self._expired = True
            self._task.cancel()
