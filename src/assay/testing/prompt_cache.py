"""The fake server's prompt caching, as the providers bill it (tokens are ~4 characters).

OpenAI caches by itself: a prompt whose first 1,024 or more tokens were sent before reads
them from the cache, in steps of 128 tokens (``usage.prompt_tokens_details.cached_tokens``).
Anthropic caches what a request marks: the text up to and including the content block with
``cache_control`` is written to the cache the first time (``cache_creation_input_tokens``)
and read from it after (``cache_read_input_tokens``), if it is at least ``min_tokens`` long.

Example:
    >>> cache = PromptCache(min_tokens=2)
    >>> cache.openai("x" * 4096), cache.openai("x" * 4096 + "y")
    (0, 1024)
"""

from __future__ import annotations

import hashlib
from typing import Any

STEP_CHARS = 512  # OpenAI's 128-token steps, at 4 characters a token


class PromptCache:
    """Prefixes seen so far (by hash), for one fake server."""

    def __init__(self, min_tokens: int = 1024):
        self.min_tokens = min_tokens
        self._seen: set[bytes] = set()
        self.read_tokens = 0  # totals over every request, for cost benchmarks
        self.written_tokens = 0  # (Anthropic bills a cache write at 1.25x its input price)

    def openai(self, text: str) -> int:
        """Cached tokens of a chat prompt: its longest prefix seen before, in 128-token steps."""
        data = text.encode()
        digest = hashlib.sha256()
        cached = 0
        for end in range(STEP_CHARS, len(data) + 1, STEP_CHARS):
            digest.update(data[end - STEP_CHARS:end])
            key = b"o" + digest.copy().digest()
            if key in self._seen:
                cached = end
            else:
                self._seen.add(key)
        tokens = cached // 4 if cached // 4 >= self.min_tokens else 0
        self.read_tokens += tokens
        return tokens

    def anthropic(self, body: dict[str, Any]) -> tuple[int, int]:
        """(tokens read, tokens written) for a messages request's marked prefix."""
        prefix = _marked_prefix(body)
        tokens = len(prefix) // 4
        if not prefix or tokens < self.min_tokens:
            return 0, 0
        key = b"a" + hashlib.sha256(prefix.encode()).digest()
        if key in self._seen:
            self.read_tokens += tokens
            return tokens, 0
        self._seen.add(key)
        self.written_tokens += tokens
        return 0, tokens


def _marked_prefix(body: dict[str, Any]) -> str:
    """The text of system and messages up to the last block marked cache_control ('' if none)."""
    parts: list[str] = []
    marked = 0
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
            if block.get("cache_control"):
                marked = len(parts)
    return "".join(parts[:marked])
