"""A hard spending limit shared by every judge of a run (grading, routing, generation, rewards).

Before an attempt is sent, its cost is *reserved* from an estimate (:class:`CallEstimator`);
when its reply arrives the reservation is replaced by the real cost (:meth:`Budget.settle`).
An attempt is sent only while ``spent + reserved + its estimate <= max_usd``; one that does not
fit waits for the attempts in flight to settle (their real cost is usually below their
estimate), and is refused once nothing is in flight that could make room. From the first
refusal on the budget is *exhausted*: judges refuse every call with a failure of kind
``budget``, and the calls already in flight finish and are recorded. So a run never spends more
than ``max_usd`` while each attempt costs at most its estimate, and stops within one estimate
of it.

Example:
    >>> import asyncio
    >>> b = Budget(max_usd=0.01)
    >>> asyncio.run(b.reserve(0.004))
    True
    >>> b.settle(0.004, 0.003); round(b.spent_usd, 3), b.exhausted
    (0.003, False)
    >>> asyncio.run(b.reserve(0.008)), b.exhausted   # 0.003 + 0.008 > 0.01, nothing in flight
    (False, True)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import orjson

from assay.judges.config import ModelPrice
from assay.judges.pricing import tokens_in

# Completion tokens reserved for a call whose judge sets no ``max_tokens``, until a larger
# reply has been seen (a verdict takes about 80 per criterion; a reasoning model many more).
DEFAULT_COMPLETION_TOKENS = 1024
_SLACK = 1e-9  # relative: costs summed in another order must not refuse the last call that fits


class Budget:
    """See the module docstring. Thread-safe; callers may wait on different event loops."""

    def __init__(self, max_usd: float):
        if max_usd < 0:
            raise ValueError("max_usd must be >= 0")
        self.max_usd = float(max_usd)
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.calls = 0
        self.refused = 0
        self._holding = 0  # attempts with a reservation not settled yet
        self._stopped = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"Budget(max_usd={self.max_usd}, spent_usd={self.spent_usd:.6f}, "
                f"reserved_usd={self.reserved_usd:.6f})")

    @property
    def exhausted(self) -> bool:
        """True once a call was refused, or everything is spent: no call is sent any more."""
        return self._stopped or self.spent_usd >= self.max_usd

    @property
    def remaining_usd(self) -> float:
        return max(0.0, self.max_usd - self.spent_usd)

    async def reserve(self, usd: float) -> bool:
        """Set ``usd`` aside for one attempt about to be sent; False (and the budget exhausted)
        if it cannot fit even after the attempts in flight have settled. Every True must be
        followed by one :meth:`settle` of the same ``usd``."""
        while True:
            with self._lock:
                if self.exhausted:
                    return False
                if self.spent_usd + self.reserved_usd + usd <= self.max_usd * (1 + _SLACK):
                    self.reserved_usd += usd
                    self._holding += 1
                    return True
                if self._holding == 0:  # nothing in flight can make room
                    self._stopped = True
                    return False
                loop = asyncio.get_running_loop()
                woken: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, woken))
            await woken

    def settle(self, reserved_usd: float, usd: float) -> None:
        """Replace an attempt's reservation by what it really cost (0 when it got no reply)."""
        with self._lock:
            self._holding -= 1
            self.reserved_usd = self.reserved_usd - reserved_usd if self._holding else 0.0
            self.spent_usd += usd
            self.calls += 1
            waiters, self._waiters = self._waiters, []
        for loop, woken in waiters:
            try:
                loop.call_soon_threadsafe(_wake, woken)
            except RuntimeError:  # that loop is closed: its caller is gone
                pass

    def charge(self, usd: float) -> None:
        """Add a cost that had no reservation (e.g. a call made elsewhere)."""
        with self._lock:
            self.spent_usd += usd
            self.calls += 1

    def refuse(self) -> None:
        with self._lock:
            self.refused += 1

    def failure_message(self) -> str:
        return (f"budget of ${self.max_usd:g} reached (${self.spent_usd:.4f} spent; the next "
                "call could exceed it)")


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class CallEstimator:
    """What one attempt of a judge may cost, for its reservation.

    Prompt tokens are counted from the messages and the reply schema (about 4 characters per
    token); completion tokens are the judge's ``max_tokens``, else
    :data:`DEFAULT_COMPLETION_TOKENS`; and an estimate is never below the dearest attempt this
    judge has made so far (so an endpoint whose calls cost more than their text suggests is
    reserved for what it really costs).

    Example:
        >>> e = CallEstimator(ModelPrice(input=2.0, output=8.0), max_tokens=100)
        >>> e.estimate([{"role": "user", "content": "x" * 4000}], None)   # 1000 in + 100 out
        0.0028
        >>> e.observe(0.01); e.estimate([{"role": "user", "content": "x"}], None)
        0.01
    """

    def __init__(self, price: ModelPrice | None, max_tokens: int | None = None):
        self.price = price
        self.completion_tokens = max_tokens or DEFAULT_COMPLETION_TOKENS
        self.dearest_usd = 0.0

    def estimate(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None,
                 max_tokens: int | None = None) -> float:
        """The reservation of one attempt (``max_tokens``: its completion budget, if known)."""
        price = self.price
        if price is None:  # unpriced (a local model): free
            return 0.0
        chars = message_chars(messages)
        if schema is not None:
            chars += len(orjson.dumps(schema))
        prompt_tokens = tokens_in(chars)
        completion = max_tokens or self.completion_tokens
        usd = (prompt_tokens * price.input + completion * price.output) / 1_000_000
        return max(usd, self.dearest_usd)

    def observe(self, usd: float) -> None:
        """Tell the estimator what an attempt really cost."""
        self.dearest_usd = max(self.dearest_usd, usd)


def message_chars(messages: Sequence[dict[str, Any]]) -> int:
    """The characters of the messages' contents (a non-text content as its JSON): the base of
    the tokenizer-free token estimates (about 4 characters per token) of budgets and TPM limits.

    >>> message_chars([{"role": "user", "content": "hi"}, {"role": "user", "content": [1]}])
    5
    """
    return sum(len(m["content"]) if isinstance(m.get("content"), str)
               else len(orjson.dumps(m.get("content"))) for m in messages)


class PreflightSpend:
    """Preflight requests (the completion check, a local server's own question), their tokens
    and cost: what a run or job store adds to its totals (``preflight`` fields)."""

    __slots__ = ("completion_tokens", "cost_usd", "prompt_tokens", "requests")

    def __init__(self) -> None:
        self.requests = self.prompt_tokens = self.completion_tokens = 0
        self.cost_usd = 0.0

    def add(self, usage: Any, cost_usd: float) -> None:
        self.requests += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cost_usd += cost_usd

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd}


def sum_preflight(spends: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Preflight spends (:meth:`PreflightSpend.as_dict`) added up, field by field.

    >>> sum_preflight([{"requests": 1, "cost_usd": 0.5}, {"requests": 2, "cost_usd": 0.25}])
    {'requests': 3, 'prompt_tokens': 0, 'completion_tokens': 0, 'cost_usd': 0.75}
    """
    total = PreflightSpend().as_dict()
    for spend in spends:
        for key in total:
            total[key] += spend.get(key, 0)
    return total
