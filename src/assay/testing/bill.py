"""What the fake server's provider would bill: tokens by kind, live and in batches.

Every reply the fake server sends with a usage adds it to :attr:`FakeJudgeServer.bill`, under
``live`` or ``batch`` (a request of one of its batches), a preflight included (a provider bills
it). :meth:`ProviderBill.usd` prices the tokens at a model's list prices, as the providers'
pages state them: uncached input at the input price, cache reads at the cached-input price,
cache writes at 1.25x the input price for a 5-minute entry and 2x for a 1-hour one (Anthropic;
OpenAI bills no writes), output at the output price, and a batch at half of all that. It is
computed here on its own, not with Assay's pricing code, so that a benchmark can check one
against the other.

Example:
    >>> from assay.judges.config import ModelPrice
    >>> bill = ProviderBill()
    >>> bill.live.add(input=1000, cache_write_5m=4000, output=100)
    >>> bill.batch.add(input=1000, cache_read=4000, output=100)
    >>> round(bill.usd(ModelPrice(input=3.0, cached_input=0.3, output=15.0)) * 1e6)
    22350
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BATCH_SHARE = 0.5  # "All usage is charged at 50% of the standard API prices"
WRITE_5M, WRITE_1H = 1.25, 2.0  # times the input price


@dataclass
class Tally:
    """Tokens billed on one channel: ``input`` is the prompt tokens neither read from nor
    written to the cache."""

    requests: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

    def add(self, *, input: int = 0, cache_read: int = 0, cache_write_5m: int = 0,
            cache_write_1h: int = 0, output: int = 0) -> None:
        self.requests += 1
        self.input += input
        self.cache_read += cache_read
        self.cache_write_5m += cache_write_5m
        self.cache_write_1h += cache_write_1h
        self.output += output

    @property
    def prompt(self) -> int:
        """Every prompt token, however billed."""
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h

    def usd(self, price: Any) -> float:
        """Dollars at ``price`` (a :class:`~assay.judges.config.ModelPrice`, USD per million)."""
        read_price = price.input if price.cached_input is None else price.cached_input
        return (self.input * price.input + self.cache_read * read_price
                + self.cache_write_5m * price.input * WRITE_5M
                + self.cache_write_1h * price.input * WRITE_1H
                + self.output * price.output) / 1e6


@dataclass
class ProviderBill:
    """The tokens a fake server billed, live and through its batch endpoints."""

    live: Tally = field(default_factory=Tally)
    batch: Tally = field(default_factory=Tally)

    def usd(self, price: Any) -> float:
        return self.live.usd(price) + BATCH_SHARE * self.batch.usd(price)
