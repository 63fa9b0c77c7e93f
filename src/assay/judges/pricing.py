"""Prices and cost: a table shipped as data (``pricing.json``), overridable by the user.

Cost of a call = uncached prompt tokens × input price + cached tokens × cached-input price
(input price when unknown) + tokens written to the prompt cache × 1.25 × input price
(Anthropic's 5-minute cache writes; × 2 for its 1-hour cache) + completion tokens × output
price, prices per million tokens.
A model without a price costs 0 and is reported as unpriced (local models are free).

Example:
    >>> from assay.judges.types import Usage
    >>> p = Pricing.default()
    >>> p.price_for("gpt-4.1-2025-04-14").input
    2.0
    >>> round(p.cost("gpt-4.1-mini", Usage(prompt_tokens=1_000_000, completion_tokens=0)), 2)
    0.4
    >>> estimate_cost("gpt-4.1-mini", prompt_tokens=1000, completion_tokens=100, n_calls=500).usd
    0.28
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.judges.config import ModelPrice
from assay.judges.prompt_caching import WRITE_FACTOR
from assay.judges.types import Usage

PRICING_ENV = "ASSAY_PRICING"
# What a call costs through a provider's batch API, as a share of its live price: OpenAI's
# Batch API and Anthropic's Message Batches both bill half (input, cached input and output).
BATCH_PRICE_FACTOR = 0.5
# What a prompt-cache write costs, as a share of the input price (Anthropic's 5-minute
# ephemeral cache, and its 1-hour cache; OpenAI reports no cache writes and charges none).
CACHE_WRITE_PRICE_FACTOR = WRITE_FACTOR["5m"]
CACHE_WRITE_1H_PRICE_FACTOR = WRITE_FACTOR["1h"]


class Pricing:
    """A model → :class:`ModelPrice` table with exact, vendor-stripped and prefix matching."""

    def __init__(self, prices: dict[str, ModelPrice]):
        self.prices = dict(prices)
        self._memo: dict[str, ModelPrice | None] = {}

    @classmethod
    def default(cls) -> Pricing:
        """The shipped table, with the file named by ``$ASSAY_PRICING`` merged on top."""
        text = resources.files("assay.judges").joinpath("pricing.json").read_text("utf-8")
        table = cls(_parse_models(json.loads(text), "pricing.json"))
        override = os.environ.get(PRICING_ENV)
        return table.merged(cls.load(override)) if override else table

    @classmethod
    def load(cls, path: str | Path) -> Pricing:
        """Read a JSON or TOML file: ``{"models": {"NAME": {"input": .., "output": ..}}}``."""
        path = Path(path)
        try:
            raw = path.read_text(encoding="utf-8")
            if path.suffix == ".toml":
                import tomllib  # only for a TOML price list: not on every judge's import path

                document = tomllib.loads(raw)
            else:
                document = json.loads(raw)
        except (OSError, ValueError) as exc:
            raise InputError(Issue(str(path), None, None, f"cannot read pricing: {exc}")) from None
        return cls(_parse_models(document, str(path)))

    def merged(self, other: Pricing) -> Pricing:
        return Pricing({**self.prices, **other.prices})

    def with_price(self, model: str, price: ModelPrice) -> Pricing:
        return Pricing({**self.prices, model: price})

    def price_for(self, model: str) -> ModelPrice | None:
        if model in self._memo:
            return self._memo[model]
        found = self._lookup(model)
        self._memo[model] = found
        return found

    def _lookup(self, model: str) -> ModelPrice | None:
        for name in (model, model.rsplit("/", 1)[-1]):
            if name in self.prices:
                return self.prices[name]
            best = max(
                (k for k in self.prices if name.startswith((k + "-", k + "@"))),
                key=len,
                default=None,
            )
            if best is not None:
                return self.prices[best]
        return None

    def cost(self, model: str, usage: Usage, price: ModelPrice | None = None) -> float:
        price = price or self.price_for(model)
        return 0.0 if price is None else usage_cost(price, usage)


def usage_cost(price: ModelPrice, usage: Usage) -> float:
    """>>> from assay.judges.config import ModelPrice
    >>> sonnet = ModelPrice(input=3.0, output=15.0, cached_input=0.3)
    >>> usage_cost(sonnet, Usage(prompt_tokens=1_000_000, cache_write_tokens=1_000_000))
    3.75
    >>> usage_cost(sonnet, Usage(prompt_tokens=1_000_000, cache_write_tokens=1_000_000,
    ...                          cache_write_1h_tokens=1_000_000))
    6.0
    """
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    written = min(usage.cache_write_tokens, usage.prompt_tokens - cached)
    written_1h = min(usage.cache_write_1h_tokens, written)
    cached_price = price.input if price.cached_input is None else price.cached_input
    return (
        (usage.prompt_tokens - cached - written) * price.input
        + cached * cached_price
        + (written - written_1h) * price.input * CACHE_WRITE_PRICE_FACTOR
        + written_1h * price.input * CACHE_WRITE_1H_PRICE_FACTOR
        + usage.completion_tokens * price.output
    ) / 1_000_000


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """A dry-run estimate: ``priced`` is False when the model has no known price (usd = 0)."""

    model: str
    n_calls: int
    prompt_tokens: int
    completion_tokens: int
    usd: float
    priced: bool


def estimate_cost(
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    n_calls: int = 1,
    *,
    pricing: Pricing | None = None,
) -> CostEstimate:
    """Dollars for ``n_calls`` calls of ``prompt_tokens`` in and ``completion_tokens`` out each."""
    table = pricing or default_pricing()
    price = table.price_for(model)
    usage = Usage(prompt_tokens * n_calls, completion_tokens * n_calls)
    usd = round(usage_cost(price, usage), 6) if price else 0.0
    return CostEstimate(model, n_calls, usage.prompt_tokens, usage.completion_tokens, usd, price is not None)


CHARS_PER_TOKEN = 4  # the tokenizer-free estimate wherever Assay counts or budgets tokens


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 characters per token), for dry runs and TPM limits."""
    return tokens_in(len(text))


def tokens_in(chars: int) -> int:
    """The tokens of ``chars`` characters, estimated as :func:`estimate_tokens` does."""
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def chars_each(tokens: int, parts: int) -> int:
    """The characters each of ``parts`` texts may keep so that together they hold about
    ``tokens`` tokens (an equal share: passages or sources cut for a small context).

    >>> chars_each(100, 2)
    200
    """
    return tokens * CHARS_PER_TOKEN // max(1, parts)


_DEFAULT: Pricing | None = None


def default_pricing() -> Pricing:
    """The shipped price table (with ``$ASSAY_PRICING``'s), read once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Pricing.default()
    return _DEFAULT


def _parse_models(document: Any, source: str) -> dict[str, ModelPrice]:
    models = document.get("models") if isinstance(document, dict) else None
    if not isinstance(models, dict):
        raise InputError(Issue(source, None, "models", "expected a table of model prices"))
    out: dict[str, ModelPrice] = {}
    issues = []
    for name, fields in models.items():
        try:
            out[name] = ModelPrice.model_validate(fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            issues.append(Issue(source, None, f"models.{name}.{where}".rstrip("."), err["msg"]))
    if issues:
        raise InputError(issues)
    return out
