"""A failing item fails alone: the others' results are written, the command exits 1 naming the
item, and running it again finishes the job without repeating finished calls."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import app
from assay.rubric_eval import prompts
from assay.testing import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "rubric_eval"


def test_a_query_without_any_possible_edit_fails_alone_and_the_rest_is_kept(tmp_path):
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"index": 0, "reference_response": "Take 2 tablets."}) + "\n"
                    + json.dumps({"index": 1, "reference_response": "Rest and drink water."})
                    + "\n" + json.dumps({"index": 2, "reference_response": "You should rest."})
                    + "\n")
    # the model never gives a usable edit (its replies parse but are not minimal edits; a reply
    # that never parses fails its pair instead, see test_faults_then_resume)
    stages = {prompts.PERTURB: {"edit_span_before": "nothing", "edit_span_after": "else",
                                "perturbed_response": "A different answer.", "error_type": "other"}}
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        args = ["nearmiss", "build", "--gold", str(EXAMPLES / "reference_rubrics.jsonl"),
                "--conversations", str(EXAMPLES / "conversations.txt"), "--references",
                str(refs), "--judge", f"openai-compatible:fake@{server.base_url}", "--out",
                str(tmp_path / "job"), "--quiet", "--attempts", "1"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 4  # an incomplete job, as every job's (issue 40)
        assert "query '1': no valid minimal edit in 1 attempts" in result.output
        pairs = [json.loads(x) for x in (tmp_path / "job" / "pairs.jsonl").read_text().split("\n")
                 if x]
        assert [(p["index"], p["method"], p["error_type"]) for p in pairs] == [
            ("0", "rule", "numeric_threshold"), ("2", "rule", "modality_flip")]
        manifest = json.loads((tmp_path / "job" / "manifest.json").read_text())
        assert manifest["status"] == "incomplete" and list(manifest["failed"]) == ["1"]
        calls = len(server.requests)
        CliRunner().invoke(app, args)
        # only the failed query is tried again, and its call, finished, is not made again
        assert len(server.requests) == calls
        again = json.loads((tmp_path / "job" / "manifest.json").read_text())
        assert list(again["failed"]) == ["1"]


def test_without_atomisation_each_gold_criterion_is_one_point(tmp_path):
    stages = {prompts.VERIFY: {"decision": "NO", "support_index": None, "reason": "absent"}}
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        result = CliRunner().invoke(app, [
            "cia", str(EXAMPLES / "our_rubrics.jsonl"), "--gold",
            str(EXAMPLES / "reference_rubrics.jsonl"), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--out", str(tmp_path / "cia"),
            "--no-atomize", "--quiet"])
        assert result.exit_code == 0, result.output
        assert {r["stage"] for r in server.requests} == {prompts.VERIFY}
    summary = json.loads((tmp_path / "cia" / "cia.json").read_text())
    assert summary["gold_points"] == 29 and summary["summary"]["report"]["covered"] == 0
