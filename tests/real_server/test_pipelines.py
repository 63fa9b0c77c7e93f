"""The stage pipelines against the real server: one generation query, one RAG item, one routing
call. Each stage call is a parsed reply or a classified failure; each item a result or a named
failure."""

from __future__ import annotations

import json

import pytest

from .conftest import EXAMPLES
from .outcomes import assay, job_outcomes, requests_in_flight, require_floor

pytestmark = pytest.mark.real_server


def test_one_generation_query(llama, tmp_path, outcome):
    (tmp_path / "queries.txt").write_text(
        "I was stung by a bee ten minutes ago and my lips are starting to swell. "
        "What should I do?\n"
    )
    assay(
        "kb",
        "build",
        str(EXAMPLES / "generate" / "docs"),
        "--out",
        "kb",
        "--chunk-chars",
        "400",
        cwd=tmp_path,
        ok_codes=(0,),
    )
    assay(
        "generate",
        "queries.txt",
        "--kb",
        "kb",
        "--model",
        llama.spec,
        "--out",
        "rubrics.jsonl",
        # a smaller pipeline than the defaults (it took 413 s of its 420 on a loaded machine):
        # less evidence to synthesise, a shorter rubric to draft, no extra audit round
        "--top-k",
        "3",
        "--evidence-tokens",
        "1000",
        "--max-criteria",
        "8",
        "--refine-rounds",
        "0",
        "-q",
        cwd=tmp_path,
    )
    counts = job_outcomes(tmp_path / "rubrics.jsonl.job", items=1)
    outcome(counts)
    require_floor(counts, "ok", "assay generate")
    assert set(requests_in_flight(tmp_path / "rubrics.jsonl.job").values()) == {llama.slots}


def test_one_rag_item(llama, tmp_path, outcome):
    first = (EXAMPLES / "rag" / "items.jsonl").read_text().splitlines()[0]
    (tmp_path / "items.jsonl").write_text(first + "\n")
    assay("rag", "grade", "items.jsonl", "--judge", llama.spec, "--out", "rag", "-q", cwd=tmp_path)
    counts = job_outcomes(tmp_path / "rag", items=1)
    outcome(counts)
    require_floor(counts, "ok", "assay rag grade")
    assert set(requests_in_flight(tmp_path / "rag").values()) == {llama.slots}


def test_one_routing_call(llama, tmp_path, outcome):
    first = (EXAMPLES / "taxonomy" / "pha-items.jsonl").read_text().splitlines()[0]
    (tmp_path / "items.jsonl").write_text(first + "\n")
    assay(
        "route",
        "run",
        "items.jsonl",
        "--taxonomy",
        "starter",
        "--router",
        "catalogue",
        "--judge",
        llama.spec,
        "-o",
        "routes.jsonl",
        "--job-dir",
        "routing",
        "-q",
        cwd=tmp_path,
    )
    counts = job_outcomes(tmp_path / "routing", items=1)
    outcome(counts)
    require_floor(counts, "ok", "assay route run")
    assert set(requests_in_flight(tmp_path / "routing").values()) == {llama.slots}
    assert sum(counts.values()) == 1  # the catalogue router: one call per item
    routes = [json.loads(line) for line in (tmp_path / "routes.jsonl").read_text().splitlines()]
    assert len(routes) <= 1
