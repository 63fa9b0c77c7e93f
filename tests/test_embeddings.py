"""Local sentence embeddings (the bundled all-MiniLM-L6-v2; no download)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.embeddings import load_embedder
from assay.errors import ConfigError


def test_the_bundled_model_gives_unit_vectors_that_rank_meanings():
    embedder = load_embedder()
    vectors = embedder.encode(["crushing chest pain radiating to the left arm",
                               "symptoms of a heart attack", "how to bake sourdough bread"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_the_model_is_loaded_once_per_process():
    assert load_embedder() is load_embedder("all-MiniLM-L6-v2")


def test_an_unknown_model_path_is_refused_not_downloaded(tmp_path):
    with pytest.raises(ConfigError, match="no such local directory"):
        load_embedder(str(tmp_path / "nope"))
