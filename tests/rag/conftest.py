"""Shared fixtures of the RAG tests: the shipped sample and a fake judge scripted for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.rag.fake_replies import JudgeDecisions, stage_script
from assay.rag.items import read_rag_items
from assay.testing import FakeJudgeServer

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag"


@pytest.fixture(scope="session")
def sample_items():
    return read_rag_items(SAMPLE / "items.jsonl")


@pytest.fixture(scope="session")
def sample_decisions():
    raw = json.loads((SAMPLE / "decisions.json").read_text(encoding="utf-8"))
    return {key: JudgeDecisions.model_validate(value) for key, value in raw.items()}


@pytest.fixture(scope="session")
def sample_graded(sample_items, tmp_path_factory):
    """The whole shipped sample graded once over loopback against its shipped stage script."""
    from assay.rag.grading import grade_rag

    job = tmp_path_factory.mktemp("rag") / "job"
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as server:
        run = grade_rag(sample_items, f"openai-compatible:fake@{server.base_url}", job)
        requests = list(server.requests)
    return run, requests


def script_for(items, decisions):
    return stage_script(items, decisions)
