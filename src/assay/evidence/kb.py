"""A local knowledge base: chunks of a user's documents with a BM25 index (``bm25s``) and,
optionally, dense vectors (``assay.embeddings``), fused by reciprocal rank.

On disk, a knowledge base is one folder::

    KB/kb.json        what was indexed: documents (id, path, sha256), chunk size, dense model
    KB/chunks.jsonl   one chunk per line (id, document, offsets, text)
    KB/bm25/          the bm25s index
    KB/dense.npy      unit-length chunk embeddings (only when built with dense=True)

:func:`build_kb` reuses an existing folder when the documents and settings are unchanged
(``kb.reused`` is then True) and rebuilds it otherwise. Retrieval needs no key and no network.

Example:
    >>> import pathlib, tempfile
    >>> docs = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (docs / "stings.md").write_text("# Bee stings\\n\\nScrape the stinger out quickly.")
    >>> _ = (docs / "burns.md").write_text("# Burns\\n\\nCool a burn under running water.")
    >>> kb = build_kb([docs], docs / "kb")
    >>> [hit.chunk.id for hit in kb.search("how to remove a bee stinger", k=1)]
    ['stings.md#0']
    >>> build_kb([docs], docs / "kb").reused
    True
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import ConfigError, InputError, Issue
from assay.evidence.chunking import DEFAULT_MAX_CHARS, Chunk, chunk_document
from assay.evidence.documents import read_documents
from assay.evidence.fusion import reciprocal_rank_fusion
from assay.evidence.tokens import tokens

FORMAT_VERSION = 1
MODES = ("auto", "bm25", "dense", "hybrid")


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its fused score and its rank in each retriever (1-based)."""

    chunk: Chunk
    score: float
    bm25_rank: int | None = None
    dense_rank: int | None = None


class KnowledgeBase:
    """An opened knowledge base; build one with :func:`build_kb`, open one with :meth:`load`."""

    def __init__(self, path: Path, manifest: dict[str, Any], chunks: list[Chunk], bm25: Any,
                 dense: np.ndarray | None, reused: bool = False):
        self.path, self.manifest, self.chunks = path, manifest, chunks
        self._bm25, self._dense = bm25, dense
        self.reused = reused

    def __repr__(self) -> str:
        return (f"KnowledgeBase({str(self.path)!r}, documents={len(self.manifest['documents'])}, "
                f"chunks={len(self.chunks)}, dense={self.dense_model!r})")

    @property
    def dense_model(self) -> str | None:
        return self.manifest.get("dense_model")

    @property
    def fingerprint(self) -> str:
        """Identifies the indexed content (for job configs: a changed KB is a changed job)."""
        return str(self.manifest["fingerprint"])

    def chunk(self, chunk_id: str) -> Chunk:
        return self._by_id[chunk_id]

    @property
    def _by_id(self) -> dict[str, Chunk]:
        cached = self.__dict__.get("_index")
        if cached is None:
            cached = self.__dict__["_index"] = {c.id: c for c in self.chunks}
        return cached

    @classmethod
    def load(cls, path: str | Path) -> KnowledgeBase:
        """Open the knowledge base in folder ``path``."""
        import bm25s

        path = Path(path)
        manifest_path = path / "kb.json"
        if not manifest_path.is_file():
            raise ConfigError(f"{path}: not a knowledge base (no kb.json); build one with "
                              "assay kb build DOCS --out KB")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("version") != FORMAT_VERSION:
            raise ConfigError(f"{path}: knowledge base format {manifest.get('version')} is not "
                              f"{FORMAT_VERSION}; rebuild it")
        with (path / "chunks.jsonl").open(encoding="utf-8") as handle:
            chunks = [Chunk.from_dict(json.loads(line)) for line in handle if line.strip()]
        bm25 = bm25s.BM25.load(str(path / "bm25")) if chunks else None
        dense = np.load(path / "dense.npy") if manifest.get("dense_model") else None
        return cls(path, manifest, chunks, bm25, dense)

    def search(self, query: str, k: int = 5, *, mode: str = "auto",
               pool: int = 50) -> list[Hit]:
        """The ``k`` best chunks for ``query``. ``mode``: ``bm25``, ``dense``, ``hybrid``
        (reciprocal-rank fusion of both over their top ``pool``) or ``auto`` (hybrid when the
        base has dense vectors, else BM25)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        if mode == "auto":
            mode = "hybrid" if self._dense is not None else "bm25"
        if mode in ("dense", "hybrid") and self._dense is None:
            raise ConfigError(f"{self.path}: built without dense vectors; rebuild with --dense "
                              "or search with mode bm25")
        if not self.chunks or k <= 0:
            return []
        rankings: dict[str, list[int]] = {}
        if mode in ("bm25", "hybrid"):
            rankings["bm25"] = self._bm25_ranking(query, pool)
        if mode in ("dense", "hybrid"):
            rankings["dense"] = self._dense_ranking(query, pool)
        ids = {name: [self.chunks[i].id for i in ranking] for name, ranking in rankings.items()}
        fused = reciprocal_rank_fusion(list(ids.values()))
        ranks = {name: {cid: r for r, cid in enumerate(ranking, 1)} for name, ranking in ids.items()}
        return [Hit(self._by_id[cid], score, ranks.get("bm25", {}).get(cid),
                    ranks.get("dense", {}).get(cid)) for cid, score in fused[:k]]

    def _bm25_ranking(self, query: str, pool: int) -> list[int]:
        words = [w for w in tokens(query) if w in self._vocabulary]
        if not words:
            return []
        n = min(pool, len(self.chunks))
        docs, scores = self._bm25.retrieve([words], k=n, show_progress=False, n_threads=0)
        return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]

    @property
    def _vocabulary(self) -> set[str]:
        cached = self.__dict__.get("_vocab")
        if cached is None:
            cached = self.__dict__["_vocab"] = set(self._bm25.vocab_dict)
        return cached

    def _dense_ranking(self, query: str, pool: int) -> list[int]:
        from assay.embeddings import load_embedder

        vector = load_embedder(self.dense_model).encode([query])[0]
        scores = self._dense @ vector
        n = min(pool, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        return [int(i) for i in sorted(top, key=lambda i: (-scores[i], i))]


def build_kb(docs: Iterable[str | Path], out: str | Path, *, max_chars: int = DEFAULT_MAX_CHARS,
             dense: bool | str = False, force: bool = False) -> KnowledgeBase:
    """Index the documents under ``docs`` into folder ``out`` (see the module docstring).

    ``dense``: False for BM25 only, True for the bundled MiniLM, or a local model folder.
    """
    documents = read_documents(docs)
    if not documents:
        raise InputError(Issue(None, None, "DOCS", "no .md, .txt, .html or .pdf document found"))
    dense_model = None if dense is False else ("all-MiniLM-L6-v2" if dense is True else str(dense))
    doc_records = [{"id": d.id, "path": d.path, "kind": d.kind, "title": d.title,
                    "sha256": d.sha256} for d in documents]
    settings = {"max_chars": max_chars, "dense_model": dense_model}
    fingerprint = _fingerprint(doc_records, settings)
    out = Path(out)
    if not force and (out / "kb.json").is_file():
        try:
            old = json.loads((out / "kb.json").read_text(encoding="utf-8"))
        except ValueError:
            old = {}
        if old.get("fingerprint") == fingerprint and old.get("version") == FORMAT_VERSION:
            kb = KnowledgeBase.load(out)
            kb.reused = True
            return kb
    chunks = [c for d in documents for c in chunk_document(d, max_chars=max_chars)]
    return write_kb(out, chunks, doc_records, settings, fingerprint)


def write_kb(out: Path, chunks: Sequence[Chunk], doc_records: list[dict[str, Any]],
             settings: dict[str, Any], fingerprint: str | None = None) -> KnowledgeBase:
    """Index ``chunks`` into ``out`` (used by :func:`build_kb` and by benchmarks)."""
    import bm25s

    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    texts = [f"{c.title}\n{c.text}" for c in chunks]
    bm25 = bm25s.BM25()
    bm25.index([tokens(t) or ["_"] for t in texts], show_progress=False)
    bm25.save(str(out / "bm25"))
    dense = None
    if settings.get("dense_model"):
        from assay.embeddings import load_embedder

        dense = load_embedder(settings["dense_model"]).encode(texts)
        np.save(out / "dense.npy", dense)
    elif (out / "dense.npy").exists():
        (out / "dense.npy").unlink()
    with (out / "chunks.jsonl").open("w", encoding="utf-8") as handle:
        for c in chunks:
            handle.write(json.dumps(c.as_dict(), ensure_ascii=False) + "\n")
    manifest = {"version": FORMAT_VERSION, "fingerprint": fingerprint or _fingerprint(
        doc_records, settings), "documents": doc_records, "chunks": len(chunks), **settings,
        "built_at": time.time(), "build_s": round(time.perf_counter() - started, 3)}
    (out / "kb.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return KnowledgeBase(out, manifest, list(chunks), bm25, dense)


def _fingerprint(doc_records: list[dict[str, Any]], settings: dict[str, Any]) -> str:
    import hashlib

    payload = json.dumps([[(d["id"], d["sha256"]) for d in doc_records], settings, FORMAT_VERSION],
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
