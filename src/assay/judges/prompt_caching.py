"""Which prompt heads a provider caches, and when caching one pays.

The rules are the providers' own (quoted in ``tests/data/provider_docs/prompt_caching.md``):

* **Anthropic** caches the prefix a request marks with ``cache_control`` (tools, system and
  messages up to the marked block), if it is at least the model's minimum (1,024 tokens for
  Claude Sonnet 4.5, 2,048 for Sonnet 4.6, 4,096 for Haiku 4.5 and Opus 4.5+); a shorter one is
  not cached, silently. The first request writes the entry (1.25x the input price for the
  5-minute lifetime, 2x for the 1-hour one), and the entry is readable only once that
  request's response has begun; later requests read it at 0.1x. Requests sent together all
  miss, and all pay the write.
* **OpenAI** caches every prompt of 1,024 tokens or more by itself, writes for free, and serves
  a later prompt's longest cached prefix (in 128-token steps) at the cached-input price.

So a head shared by ``n`` calls pays to cache when one call writes it and the other ``n - 1``
read it: ``write + (n - 1) x read < n`` (in units of the head's uncached price). Anthropic's
5-minute cache pays from 2 calls, its 1-hour cache from 3; OpenAI's from 2. The engine sends
one call of such a group first and the others once its reply has come (:mod:`assay.runs.
cache_schedule`); a head under the minimum, or shared by too few calls, is not marked at all.

Example:
    >>> min_cacheable_tokens("anthropic", "claude-sonnet-4-5-20250929")
    1024
    >>> min_cacheable_tokens("anthropic", "claude-haiku-4-5"), min_cacheable_tokens("openai", "gpt-4.1")
    (4096, 1024)
    >>> pays(2, write=1.25, read=0.1), pays(2, write=2.0, read=0.1), pays(3, write=2.0, read=0.1)
    (True, False, True)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

CacheTTL = Literal["5m", "1h"]

# Anthropic's minimum cacheable prompt length by model (name prefixes, the longest that matches
# wins): the "Cache limitations" list of the prompt-caching page.
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-mythos": 4096,
    "claude-opus-4-7": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
# A Claude model the list does not name: the largest minimum, so that no head is marked that
# the model may not cache (a head under the model's real minimum only loses a saving).
ANTHROPIC_UNKNOWN_MIN_TOKENS = 4096
OPENAI_MIN_TOKENS = 1024  # "Caching is enabled automatically for prompts that are 1024 tokens or longer"
OPENAI_STEP_TOKENS = 128  # cache hits come in 128-token steps past the first 1,024

# What a cache write costs, as a share of the input price (OpenAI writes for free).
WRITE_FACTOR: dict[CacheTTL, float] = {"5m": 1.25, "1h": 2.0}
TTL_SECONDS: dict[CacheTTL, float] = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True, slots=True)
class CachePlan:
    """How a group of calls sharing a head is cached: the head marked with ``ttl`` (Anthropic;
    OpenAI caches without a mark), one call sent first and the others after its reply."""

    ttl: CacheTTL = "5m"


@functools.cache  # asked for every request a judge sends: a few models in a run
def min_cacheable_tokens(wire: str, model: str) -> int:
    """The shortest prefix ``model`` caches on ``wire`` (``anthropic`` or ``openai``)."""
    if wire != "anthropic":
        return OPENAI_MIN_TOKENS
    name = model.rsplit("/", 1)[-1]
    best = max((prefix for prefix in ANTHROPIC_MIN_TOKENS if name.startswith(prefix)),
               key=len, default=None)
    return ANTHROPIC_MIN_TOKENS[best] if best is not None else ANTHROPIC_UNKNOWN_MIN_TOKENS


def write_factor(wire: str, ttl: CacheTTL) -> float:
    """The price of a cache write as a share of the input price."""
    return WRITE_FACTOR[ttl] if wire == "anthropic" else 1.0


def pays(sharing: int, *, write: float, read: float) -> bool:
    """Whether ``sharing`` calls of one head cost less with the head cached (one write, the
    rest reads) than with nothing cached; ``write`` and ``read`` as shares of the input price."""
    return sharing >= 2 and write + (sharing - 1) * read < sharing
