"""The fake server's prompt cache, following the providers' rules (tokens are ~4 characters).

The rules are the providers' own (quoted in ``tests/data/provider_docs/prompt_caching.md``):

* **Anthropic** caches the prefix a request marks with ``cache_control`` (tools, system and
  messages up to the marked block) when it holds at least the model's minimum
  (:func:`~assay.judges.prompt_caching.min_cacheable_tokens`; a shorter one is neither written
  nor read, silently). A request that finds no entry writes one (``cache_creation_input_tokens``,
  ``cache_creation.ephemeral_5m_input_tokens`` or ``ephemeral_1h_input_tokens`` for a mark with
  ``"ttl": "1h"``); the entry becomes readable once that request's reply begins, so requests that
  arrive before then miss and write too. A request reading the entry
  (``cache_read_input_tokens``) refreshes its lifetime: 5 minutes, or 1 hour.
* **OpenAI** caches every prompt by itself: a prompt whose first 1,024 or more tokens were
  processed before (and answered: the prefix is cached after processing) reads its longest such
  prefix in 128-token steps (``usage.prompt_tokens_details.cached_tokens``); writes are free.
  An entry lives 5 minutes from its last use (the docs say 5 to 10).

:meth:`PromptCache.lookup` is asked when a request arrives; :meth:`PromptCache.replied` when its
reply is sent (a request that fails writes nothing). ``clock`` is the time in seconds (a test
moves it to expire entries without waiting).

Example:
    >>> now = [0.0]
    >>> cache = PromptCache(min_tokens=2, clock=lambda: now[0])
    >>> body = {"model": "m", "messages": [{"role": "user", "content": [
    ...     {"type": "text", "text": "x" * 64, "cache_control": {"type": "ephemeral"}}]}]}
    >>> first, second = cache.lookup_anthropic(body), cache.lookup_anthropic(body)
    >>> (first.written, second.written, second.read)   # both arrived before a reply: two writes
    (16, 16, 0)
    >>> cache.replied(first); cache.lookup_anthropic(body).read
    16
    >>> now[0] = 301.0; cache.lookup_anthropic(body).read   # 5 minutes after its last use
    0
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from assay.judges.prompt_caching import (
    OPENAI_MIN_TOKENS,
    OPENAI_STEP_TOKENS,
    TTL_SECONDS,
    CacheTTL,
    min_cacheable_tokens,
)

CHARS_PER_TOKEN = 4  # the fake's tokenizer, as its usage counts
STEP_CHARS = OPENAI_STEP_TOKENS * CHARS_PER_TOKEN


@dataclass
class Lookup:
    """What one request found: tokens ``read`` from the cache and ``written`` to it (with
    ``ttl``); ``keys`` are the entries its reply makes readable."""

    read: int = 0
    written: int = 0
    ttl: CacheTTL = "5m"
    keys: list[bytes] = field(default_factory=list)


@dataclass
class _Entry:
    ready_at: float  # when the reply of the request that wrote it began
    expires_at: float
    ttl_s: float


class PromptCache:
    """The prefixes one fake server has cached. ``min_tokens``: the shortest prefix cached, for
    every model (None: each model's own minimum, as the provider applies it)."""

    def __init__(self, min_tokens: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.min_tokens = min_tokens
        self.clock = clock
        self._entries: dict[bytes, _Entry] = {}

    def lookup_anthropic(self, body: dict[str, Any]) -> Lookup:
        """A messages request arriving: the tokens of its marked prefix read or written."""
        prefix, ttl = _marked_prefix(body)
        tokens = len(prefix) // CHARS_PER_TOKEN
        if not prefix or tokens < self._minimum("anthropic", body.get("model")):
            return Lookup()
        tools = orjson.dumps(body.get("tools") or [], option=orjson.OPT_SORT_KEYS)
        key = b"a" + hashlib.sha256(tools + b"\0" + prefix.encode()).digest()
        if self._read(key):
            return Lookup(read=tokens, ttl=ttl)
        return Lookup(written=tokens, ttl=ttl, keys=[key])

    def lookup_openai(self, body: dict[str, Any], text: str) -> Lookup:
        """A chat request arriving (``text``: its messages as the server counts them): the
        tokens of the longest prefix of 1,024+ tokens cached, in 128-token steps."""
        minimum = self._minimum("openai", body.get("model"))
        schema = orjson.dumps(body.get("response_format") or {}, option=orjson.OPT_SORT_KEYS)
        digest = hashlib.sha256(schema)
        data = text.encode()
        read, keys = 0, []
        for end in range(STEP_CHARS, len(data) + 1, STEP_CHARS):
            digest.update(data[end - STEP_CHARS:end])
            if end // CHARS_PER_TOKEN < minimum:
                continue
            key = b"o" + digest.copy().digest()
            if self._read(key):
                read = end // CHARS_PER_TOKEN
            else:
                keys.append(key)
        return Lookup(read=read, keys=keys)

    def replied(self, lookup: Lookup) -> None:
        """The reply of the request that made ``lookup`` begins: its prefixes become readable."""
        now = self.clock()
        ttl_s = TTL_SECONDS[lookup.ttl]
        for key in lookup.keys:
            entry = self._entries.get(key)
            if entry is None or entry.expires_at <= now:
                self._entries[key] = _Entry(now, now + ttl_s, ttl_s)
            else:  # written again by a request that arrived before the first reply
                entry.ready_at = min(entry.ready_at, now)
                entry.ttl_s = max(entry.ttl_s, ttl_s)
                entry.expires_at = max(entry.expires_at, now + ttl_s)

    def _read(self, key: bytes) -> bool:
        """Whether ``key`` is readable now; reading it refreshes its lifetime."""
        entry = self._entries.get(key)
        now = self.clock()
        if entry is None or entry.ready_at > now or entry.expires_at <= now:
            return False
        entry.expires_at = now + entry.ttl_s
        return True

    def _minimum(self, wire: str, model: Any) -> int:
        if self.min_tokens is not None:
            return self.min_tokens
        if wire == "openai":
            return OPENAI_MIN_TOKENS
        return min_cacheable_tokens(wire, str(model or ""))


def _marked_prefix(body: dict[str, Any]) -> tuple[str, CacheTTL]:
    """The text of system and messages up to the last block marked ``cache_control`` ('' if
    none), and the lifetime that mark asks for."""
    parts: list[str] = []
    marked = 0
    ttl: CacheTTL = "5m"
    system = body.get("system")
    blocks: list[Any] = [system] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks.extend([content] if isinstance(content, str) else content or [])
    for block in blocks:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            parts.append(str(block.get("text", "")))
            control = block.get("cache_control")
            if control:
                marked = len(parts)
                ttl = "1h" if isinstance(control, dict) and control.get("ttl") == "1h" else "5m"
    return "".join(parts[:marked]), ttl
