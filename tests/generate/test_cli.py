"""``assay kb build|search`` and ``assay generate`` from the command line."""

from __future__ import annotations

import json

from tests.generate.conftest import SAMPLE
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer

runner = CliRunner()


def test_kb_build_then_search_shows_chunk_ids_and_offsets(tmp_path):
    kb = tmp_path / "kb"
    built = runner.invoke(app, ["kb", "build", str(SAMPLE / "docs"), "--out", str(kb)],
                          env={"COLUMNS": "400"})  # a long temporary path is not wrapped
    assert built.exit_code == 0 and "5 documents" in built.output and "built" in built.output
    again = runner.invoke(app, ["kb", "build", str(SAMPLE / "docs"), "--out", str(kb)])
    assert "unchanged, reused" in again.output
    found = runner.invoke(app, ["kb", "search", str(kb), "remove a bee sting", "-k", "2", "--json"])
    hits = [json.loads(line) for line in found.output.splitlines()]
    assert found.exit_code == 0 and hits[0]["id"] == "insect-stings.md#0"
    assert hits[0]["start"] == 0 and hits[0]["text"].startswith("# Insect stings")


def test_kb_build_names_a_missing_folder(tmp_path):
    result = runner.invoke(app, ["kb", "build", str(tmp_path / "nope"), "--out", str(tmp_path / "kb")])
    assert result.exit_code == 1 and "nope: no such file or folder" in result.output


def test_generate_writes_healthbench_lines_and_a_dry_run_calls_nothing(tmp_path):
    kb = tmp_path / "kb"
    runner.invoke(app, ["kb", "build", str(SAMPLE / "docs"), "--out", str(kb), "--chunk-chars", "400"])
    out = tmp_path / "rubrics.jsonl"
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.yaml") as server:
        args = ["generate", str(SAMPLE / "queries.txt"), "--kb", str(kb), "--model",
                f"openai-compatible:fake@{server.base_url}", "--out", str(out), "-q"]
        dry = runner.invoke(app, [*args, "--dry-run"])
        assert dry.exit_code == 0 and "no call made" in dry.output and not server.requests
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "wrote 3 rubrics" in result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(line["rubrics"] and line["prompt"][0]["role"] == "user" for line in lines)


def test_generate_without_evidence_is_refused(tmp_path):
    result = runner.invoke(app, ["generate", str(SAMPLE / "queries.txt"), "--model", "vllm:m",
                                 "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 1 and "needs evidence: --kb KB" in result.output


def test_generate_with_a_failed_query_exits_incomplete(tmp_path):
    from assay.testing import Faults

    kb = tmp_path / "kb"
    runner.invoke(app, ["kb", "build", str(SAMPLE / "docs"), "--out", str(kb), "--chunk-chars", "400"])
    out = tmp_path / "rubrics.jsonl"
    # the bee-sting query's routing stays unparsed after both re-asks: that item fails
    faults = Faults(at={"stung by a bee": ["malformed"] * 3})
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.yaml", faults=faults) as server:
        result = runner.invoke(app, ["generate", str(SAMPLE / "queries.txt"), "--kb", str(kb),
                                     "--model", f"openai-compatible:fake@{server.base_url}",
                                     "--out", str(out), "-q"])
    assert result.exit_code == 4, result.output  # incomplete (docs/run-safety.md), not bad input
    assert "wrote 2 rubrics" in result.output and "stage 'route': unparseable" in result.output
