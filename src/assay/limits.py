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
MAX_PROMPT_CHARS       1,000,000   a judge prompt longer than this is not sent (same)
=====================  ==========  ==============================================================

Example:
    >>> nesting_depth({"a": [{"b": 1}]})
    3
"""

from __future__ import annotations

from typing import Any

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_RECORD_BYTES = 16 * 1024 * 1024
MAX_NESTING = 64
MAX_ALIAS_NODES = 100_000
MAX_RESPONSE_CHARS = 200_000
MAX_PROMPT_CHARS = 1_000_000


def nesting_depth(value: Any, stop_at: int = MAX_NESTING + 1) -> int:
    """How deeply dicts and lists nest in ``value`` (a scalar is 0), counted without recursion
    and without looking deeper than ``stop_at``."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth >= stop_at:
            return depth
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def too_deep(value: Any) -> str | None:
    """A message if ``value`` nests deeper than :data:`MAX_NESTING`, else None."""
    if nesting_depth(value) > MAX_NESTING:
        return f"nested more than {MAX_NESTING} levels deep (the limit; see assay.limits)"
    return None
