"""Cutting documents into retrievable chunks with stable ids and exact source offsets.

Paragraphs (runs of text between blank lines) are packed greedily into chunks of at most
``max_chars`` characters; a paragraph longer than that is cut at sentence ends (or, failing
that, at whitespace). A chunk's ``text`` is always ``document.text[start:end]``, so a citation
can be shown in its source. Its id is ``DOCUMENT_ID#N`` (N counts from 0 in document order): the
same document cut with the same settings gets the same ids.

Example:
    >>> from assay.evidence.documents import Document
    >>> doc = Document("bp.md", "bp.md", "markdown", "BP", "# BP\\n\\nBelow 120/80 is normal.\\n\\n"
    ...                "Stage 2 starts at 140/90.")
    >>> [(c.id, c.text) for c in chunk_document(doc, max_chars=40)]
    [('bp.md#0', '# BP\\n\\nBelow 120/80 is normal.'), ('bp.md#1', 'Stage 2 starts at 140/90.')]
    >>> c = chunk_document(doc, max_chars=40)[1]; doc.text[c.start:c.end] == c.text
    True
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from assay.evidence.documents import Document

DEFAULT_MAX_CHARS = 1000


@dataclass(frozen=True)
class Chunk:
    """A span of one document: ``text == document.text[start:end]``."""

    id: str
    doc_id: str
    title: str
    source: str
    start: int
    end: int
    text: str
    source_start: int | None = None  # for HTML: the span in the source file itself
    source_end: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.source_start is None:  # text and Markdown: start/end are the file's own
            del out["source_start"], out["source_end"]
        return out

    @property
    def source_span(self) -> tuple[int, int]:
        """Where the chunk is in its source file (characters): for HTML, the span of the
        markup its text came from; for other documents ``(start, end)``."""
        if self.source_start is None or self.source_end is None:
            return self.start, self.end
        return self.source_start, self.source_end

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        return cls(**data)


def chunk_document(doc: Document, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """The chunks of ``doc``; see the module docstring."""
    if max_chars < 20:
        raise ValueError("max_chars must be at least 20")
    spans = _pack(_pieces(doc.text, max_chars), max_chars)
    at = doc.offsets
    return [Chunk(f"{doc.id}#{i}", doc.id, doc.title, doc.path, s, e, doc.text[s:e],
                  at[s] if at else None, at[e - 1] + 1 if at else None)
            for i, (s, e) in enumerate(spans)]


def _paragraphs(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in re.finditer(r"\n\s*\n", text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [_strip(text, s, e) for s, e in spans if text[s:e].strip()]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _pieces(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Paragraph spans, with over-long paragraphs cut into pieces of at most max_chars."""
    out: list[tuple[int, int]] = []
    for start, end in _paragraphs(text):
        while end - start > max_chars:
            window = text[start:start + max_chars]
            cut = max((m.end() for m in re.finditer(r"[.!?]\s", window)), default=0)
            if cut < max_chars // 3:
                cut = window.rfind(" ") + 1 or max_chars
            out.append(_strip(text, start, start + cut))
            start = _strip(text, start + cut, end)[0]
        if end > start:
            out.append((start, end))
    return out


def _pack(pieces: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for start, end in pieces:
        if spans and end - spans[-1][0] <= max_chars:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans
