"""How long one HTTP attempt may wait for its reply before it is abandoned and its slot freed.

A ``timeout_s`` the user sets is used as is, for every attempt. Left unset, the timeout *fits
the endpoint*:

* until :data:`FIT_AFTER` replies have been seen it is the ceiling, :data:`DEFAULT_TIMEOUT_S`;
* then it is ``MULTIPLE × p99`` of the last :data:`WINDOW` reply latencies (nearest rank),
  never below :data:`FLOOR_S` nor above the ceiling, refitted every :data:`FIT_AFTER` replies;
* attempts already in flight follow a refit (their deadline becomes send time + the new
  timeout), so a request that hung before the first fit is let go as soon as there is one;
* a call's retry after a timeout waits twice as long as the attempt that timed out (up to the
  ceiling), so a request slow for a reason of its own (a long answer) still gets through;
* when timeouts make up half of the recent outcomes (at least 2 of the last
  :data:`OUTCOMES`), the endpoint has slowed down for real: the timeout doubles (up to the
  ceiling) until replies refit it. A few hung requests among many replies change nothing.

On a 50 ms endpoint a hung request so frees its slot in about half a second, and on a model
that takes 20 s to answer it still gets a minute.

Example:
    >>> fitted_timeout([0.05] * 250 + [0.1] * 6)   # p99 is 0.1 s: 4 × 0.1 s
    0.4
    >>> fitted_timeout([0.05] * 256)                # 4 × 0.05 s is below the floor
    0.25
    >>> fitted_timeout([20.0] * 256)                # 80 s is above the ceiling
    60.0
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Iterable
from typing import Self

DEFAULT_TIMEOUT_S = 60.0  # the ceiling when the user sets no timeout_s
MULTIPLE = 4.0  # the timeout is this many times ...
PERCENTILE = 0.99  # ... this percentile of the recent reply latencies ...
FLOOR_S = 0.25  # ... and never shorter than this
WINDOW = 256  # reply latencies kept
FIT_AFTER = 16  # replies seen before the first fit, and between refits
OUTCOMES = 8  # recent attempts whose timeouts can double the timeout


def fitted_timeout(latencies: Iterable[float], ceiling: float = DEFAULT_TIMEOUT_S) -> float:
    """``MULTIPLE × p99`` of ``latencies`` (nearest rank), within ``[FLOOR_S, ceiling]``."""
    ordered = sorted(latencies)
    p99 = ordered[max(0, math.ceil(PERCENTILE * len(ordered)) - 1)]
    return min(ceiling, max(FLOOR_S, round(MULTIPLE * p99, 6)))


class AttemptTimeouts:
    """The timeouts of one endpoint's attempts (the rules are in the module doc).

    ``async with timeouts.attempt(n) as attempt:`` bounds one attempt whose call has already
    timed out ``n`` times; it raises :class:`TimeoutError` when ``attempt.limit`` passes.
    Report each reply's latency to :meth:`replied` and each timeout to :meth:`timed_out`.
    """

    def __init__(self, timeout_s: float | None = None, *, ceiling_s: float = DEFAULT_TIMEOUT_S):
        self.fixed = timeout_s is not None
        self.ceiling = timeout_s if timeout_s is not None else ceiling_s
        self.seconds = self.ceiling
        self._latencies: deque[float] = deque(maxlen=WINDOW)
        self._since_fit = 0
        self._outcomes: deque[bool] = deque(maxlen=OUTCOMES)  # True: a timeout
        self._open: set[_Attempt] = set()

    def limit(self, timed_out_before: int = 0) -> float:
        """The timeout of an attempt whose call timed out ``timed_out_before`` times already."""
        if timed_out_before == 0:
            return self.seconds
        return min(self.ceiling, self.seconds * 2.0 ** timed_out_before)

    def attempt(self, timed_out_before: int = 0) -> _Attempt:
        return _Attempt(self, timed_out_before)

    def replied(self, seconds: float) -> None:
        """A reply after ``seconds``: refit every FIT_AFTER replies."""
        if self.fixed:
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
        if self.fixed:
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
            for attempt in self._open:
                attempt.refit()


class _Attempt:
    """One attempt's deadline: an :func:`asyncio.timeout` that follows refits."""

    __slots__ = ("_owner", "_sent", "_timed_out_before", "_timer", "limit")

    def __init__(self, owner: AttemptTimeouts, timed_out_before: int):
        self._owner = owner
        self._timed_out_before = timed_out_before
        self._timer: asyncio.Timeout | None = None
        self._sent = 0.0
        self.limit = owner.limit(timed_out_before)

    async def __aenter__(self) -> Self:
        if not self._owner.fixed:  # a fixed timeout is the HTTP session's own
            self._sent = asyncio.get_running_loop().time()
            self._timer = asyncio.timeout_at(self._sent + self.limit)
            await self._timer.__aenter__()
            self._owner._open.add(self)
        return self

    async def __aexit__(self, kind, error, trace) -> None:
        if self._timer is not None:
            self._owner._open.discard(self)
            await self._timer.__aexit__(kind, error, trace)  # a cancel by the deadline: TimeoutError

    def refit(self) -> None:
        timer = self._timer
        if timer is not None and not timer.expired():
            self.limit = self._owner.limit(self._timed_out_before)
            timer.reschedule(self._sent + self.limit)
