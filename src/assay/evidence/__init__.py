"""Evidence for rubric generation: documents, chunks, a local knowledge base (BM25 + optional
dense retrieval, fused by reciprocal rank) and pluggable web search.

* :func:`build_kb` / :class:`KnowledgeBase`: index a folder of Markdown, text, HTML and PDF
  documents on disk and search it (``assay kb build DOCS --out KB``, ``assay kb search``).
* :func:`make_web_search`: the Tavily adapter (off by default, key from ``TAVILY_API_KEY``).
* :func:`reciprocal_rank_fusion`: one ranking from several.
"""

from assay.evidence.chunking import Chunk, chunk_document
from assay.evidence.documents import Document, read_document, read_documents
from assay.evidence.fusion import reciprocal_rank_fusion
from assay.evidence.kb import Hit, KnowledgeBase, build_kb
from assay.evidence.websearch import (
    AUTHORITATIVE_DOMAINS,
    SearchError,
    SearchResult,
    TavilySearch,
    WebSearch,
    make_web_search,
)

__all__ = [
    "AUTHORITATIVE_DOMAINS",
    "Chunk",
    "Document",
    "Hit",
    "KnowledgeBase",
    "SearchError",
    "SearchResult",
    "TavilySearch",
    "WebSearch",
    "build_kb",
    "chunk_document",
    "make_web_search",
    "read_document",
    "read_documents",
    "reciprocal_rank_fusion",
]
