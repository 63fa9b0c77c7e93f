"""Stage 1's offline parts: search queries to candidate chunks, rerank-reply validation, and the
evidence block as text.

* :func:`clean_search_query` drops ``site:`` operators (the routing agent writes them for web
  search; the local knowledge base has no sites).
* :func:`select_indices` is the released code's rerank rule: keep valid, distinct indices in
  the model's order, cut at ``top_k``, backfill in candidate order.
* :func:`evidence_text` is its preprocessing of the evidence block: ``Primary Consensus``,
  ``Critical Warnings``, one ``Source i Data`` line per source.

Example:
    >>> clean_search_query("fever in infants site:nhs.uk OR site:cdc.gov")
    'fever in infants'
    >>> select_indices([4, 4, 9, "x", 1], n_candidates=6, top_k=3)
    [4, 1, 0]
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.evidence.chunking import Chunk
from assay.judges.pricing import chars_each

_SITE = re.compile(r"\(?\s*site:\S+\s*\)?", re.IGNORECASE)


def clean_search_query(query: str) -> str:
    text = _SITE.sub(" ", query)
    text = re.sub(r"\b(OR|AND)\b", " ", text)
    return " ".join(text.split())


def select_indices(indices: Any, *, n_candidates: int, top_k: int) -> list[int]:
    chosen: list[int] = []
    for value in indices if isinstance(indices, list) else []:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n_candidates \
                and value not in chosen:
            chosen.append(value)
        if len(chosen) == top_k:
            return chosen
    for i in range(n_candidates):
        if len(chosen) == min(top_k, n_candidates):
            break
        if i not in chosen:
            chosen.append(i)
    return chosen


def candidates_text(chunks: list[Chunk], preview: int = 400) -> str:
    return "\n\n".join(f"[{i}] {c.title} ({c.source})\n{' '.join(c.text.split())[:preview]}"
                       for i, c in enumerate(chunks))


CHUNK_CHARS = 5000  # the most of one source's text the synthesis prompt shows


def raw_text(chunks: list[Chunk], evidence_tokens: int | None = None) -> str:
    """The sources as the synthesis prompt shows them (``SOURCE: title (id)``, capped text):
    each up to :data:`CHUNK_CHARS` characters, and all together about ``evidence_tokens``
    tokens when given (shared equally; about 4 characters a token).

    >>> from assay.evidence.chunking import Chunk
    >>> chunks = [Chunk(id=f"c{i}", doc_id="d", text="x" * 900, start=0, end=900, title="T",
    ...                 source="kb") for i in range(2)]
    >>> len(raw_text(chunks, evidence_tokens=100))   # 2 x (200 characters + "SOURCE: T (cN)")
    432
    """
    share = (CHUNK_CHARS if evidence_tokens is None else
             min(CHUNK_CHARS, chars_each(evidence_tokens, len(chunks))))
    return "\n\n".join(f"SOURCE: {c.title} ({c.id})\n{c.text[:share]}" for c in chunks)


def format_instructions(schema: dict[str, Any]) -> str:
    return ("The output should be formatted as a JSON instance that conforms to the JSON schema "
            "below.\n```\n" + json.dumps(schema, indent=2) + "\n```")


def evidence_text(block: dict[str, Any]) -> str:
    synthesis = block.get("synthesis") or {}
    lines = []
    if synthesis.get("consensus"):
        lines.append(f"Primary Consensus: {synthesis['consensus']}")
    if synthesis.get("red_flags"):
        lines.append(f"Critical Warnings: {json.dumps(synthesis['red_flags'], ensure_ascii=False)}")
    for i, source in enumerate(block.get("evidence_sources") or [], start=1):
        if isinstance(source, dict) and source.get("key_excerpt"):
            lines.append(f"Source {i} Data: {source['key_excerpt']}")
    return "\n".join(lines)
