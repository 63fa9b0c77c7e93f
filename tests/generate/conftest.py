"""Fixtures for the generation tests: the shipped sample (documents, queries, stage script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evidence import build_kb

SAMPLE = Path(__file__).parents[2] / "examples" / "generate"


@pytest.fixture(scope="session")
def sample_kb(tmp_path_factory):
    return build_kb([SAMPLE / "docs"], tmp_path_factory.mktemp("kb") / "kb", max_chars=400)


@pytest.fixture
def sample_stages() -> Path:
    return SAMPLE / "stages.yaml"


@pytest.fixture
def sample_queries() -> Path:
    return SAMPLE / "queries.txt"


def fake(server) -> str:
    return f"openai-compatible:fake@{server.base_url}"
