"""Runs to report on: graded over loopback by two fake judges that disagree on one criterion."""

from __future__ import annotations

import json

import pytest
from tests.runs.conftest import RUBRIC

import assay
from assay.testing import FakeJudgeServer

EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
AGREE = {"stinger": "MET", "tweezers": "UNMET", "pain": "partly", "tone": "calm"}
DISAGREE = {**AGREE, "stinger": "UNMET"}


def write_run_inputs(tmp_path, n=4, rubric_data=None):
    import yaml

    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(rubric_data or RUBRIC))
    items = tmp_path / "items.jsonl"
    with items.open("w") as out:
        for i in range(n):
            response = EVIL if i == 0 else f"Answer {i}: scrape the stinger out, ice it."
            out.write(json.dumps({"id": f"q{i}", "prompt": f"Bee sting {i}?", "response": response,
                                  "tags": ["theme:emergency" if i % 2 else "theme:hedging"]}) + "\n")
    return items, rubric


async def grade_run(tmp_path, name, policies, n=4, items=None, rubric=None):
    """A run of ``n`` bee-sting items (or of the JSONL file ``items``) graded on the bee
    rubric (or the rubric ``rubric``, as data) by one fake judge per policy."""
    written, rubric = write_run_inputs(tmp_path, n, rubric)
    items = items or written
    servers = [await FakeJudgeServer(policy=p).start() for p in policies]
    try:
        await assay.agrade(items, rubric=rubric, run_dir=tmp_path / name,
                           judges=[f"openai-compatible:judge{i}@{s.base_url}" for i, s in enumerate(servers)])
    finally:
        for server in servers:
            await server.stop()
    return tmp_path / name


@pytest.fixture
async def two_judge_run(tmp_path):
    return await grade_run(tmp_path, "run-a", [AGREE, DISAGREE])


@pytest.fixture
async def one_judge_run(tmp_path):
    return await grade_run(tmp_path, "run-b", [AGREE])
