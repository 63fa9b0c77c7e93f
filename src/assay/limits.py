"""Size limits on input, checked where it is read, so a hostile or broken file fails fast with
a clear message instead of exhausting memory or time later.

=====================  ==========  ==============================================================
limit                  value       what happens past it
=====================  ==========  ==============================================================
MAX_DOCUMENT_BYTES     64 MiB      a YAML/JSON document (rubric, taxonomy, item list) is refused
MAX_RECORD_BYTES       16 MiB      one JSONL line is reported as an issue and skipped
MAX_NESTING            64          a document or record nested deeper is refused
MAX_ALIAS_NODES        100,000     YAML aliases (``*ref``) may add at most this many nodes
MAX_RESPONSE_CHARS     200,000     a longer response is not sent to a judge (the item is
                                   reported and skipped)
MAX_PROMPT_CHARS       1,000,000   a judge prompt longer than this is not sent (same); a
                                   router's or any other stage's prompt fails its item
MAX_MEMORY_CHARS       200,000     an item whose health memory renders longer is refused where
                                   it is read (file, line, field): judge and router prompts
                                   both carry it
=====================  ==========  ==============================================================

Example:
    >>> nests_deeper({"a": [{"b": 1}]}, limit=3), nests_deeper({"a": [{"b": 1}]}, limit=2)
    (False, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_RECORD_BYTES = 16 * 1024 * 1024
MAX_NESTING = 64
MAX_ALIAS_NODES = 100_000
MAX_RESPONSE_CHARS = 200_000
MAX_PROMPT_CHARS = 1_000_000
MAX_MEMORY_CHARS = 200_000


class _TooDeep(Exception):
    pass


def _walk(value: Any, depth: int, limit: int) -> None:
    if depth > limit:
        raise _TooDeep
    for child in (value.values() if type(value) is dict else value):
        kind = type(child)
        if kind is dict or kind is list:
            _walk(child, depth + 1, limit)


def nests_deeper(value: Any, limit: int = MAX_NESTING) -> bool:
    """True if dicts and lists nest more than ``limit`` levels in ``value`` (parsed JSON or
    YAML). The walk stops at ``limit + 1`` levels, so it never recurses deeper than that."""
    if type(value) is not dict and type(value) is not list:
        return False
    try:
        _walk(value, 1, limit)
    except _TooDeep:
        return True
    return False


def prompt_chars(messages: Iterable[Mapping[str, Any]]) -> int:
    """The characters of a conversation's contents, as a judge prompt carries them (what
    :data:`MAX_PROMPT_CHARS` bounds).

    >>> prompt_chars([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    11
    """
    return sum(len(str(m.get("content", ""))) for m in messages)


def too_deep(value: Any) -> str | None:
    """A message if ``value`` nests deeper than :data:`MAX_NESTING`, else None."""
    if nests_deeper(value):
        return f"nested more than {MAX_NESTING} levels deep (the limit; see assay.limits)"
    return None
