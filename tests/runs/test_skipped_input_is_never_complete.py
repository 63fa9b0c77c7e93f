"""Issue 27.1: an input record that was skipped leaves the run incomplete, never complete; the
summary title, manifest.json and the exit code agree. An empty input is an error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.errors import InputError
from assay.testing import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "healthbench" / "examples.jsonl"
GOOD = '{"id": "q1", "prompt": "Bee?", "response": "Ice."}\n'


def grade(items: Path, rubric_file: Path, run_dir: Path, *extra: str):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric_file),
                                       "--judge", spec(server), "--run-dir", str(run_dir),
                                       "--quiet", *extra])
    return out, server


def manifest_status(run_dir: Path) -> str:
    return json.loads((run_dir / "manifest.json").read_text())["status"]


def assert_incomplete_everywhere(out, run_dir: Path) -> None:
    assert out.exit_code == 4, out.output
    title = " ".join(out.output.split())  # the table title may wrap
    assert f"Assay run {run_dir} · incomplete" in title and "· complete" not in title
    assert manifest_status(run_dir) == "incomplete"
    assert assay.runs.run_status(run_dir).status == "incomplete"


def test_a_malformed_line_leaves_the_run_incomplete_in_title_manifest_and_exit_code(
        tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text(GOOD + "{not json\n")
    out, _ = grade(items, rubric_file, tmp_path / "run")
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert "items.jsonl:2: malformed JSON" in out.output
    assert "1 input record skipped" in out.output


def test_an_invalid_health_memory_leaves_the_run_incomplete(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    bad_memory = {"id": "q2", "prompt": "LDL?", "response": "Fine.",
                  "health_memory": {"labs": [{"name": "LDL-C", "value": "high"}]}}
    items.write_text(GOOD + json.dumps(bad_memory) + "\n")
    out, server = grade(items, rubric_file, tmp_path / "run")
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert "items.jsonl:2: health_memory.labs[0]" in out.output
    assert {r["response_text"] for r in server.requests} == {"Ice."}


def test_an_item_without_a_response_leaves_the_run_incomplete(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text(GOOD + '{"id": "q2", "prompt": "Bee?"}\n')
    out, _ = grade(items, rubric_file, tmp_path / "run")
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert "item[q2].response: no response to grade" in out.output


def test_the_manifest_names_the_skipped_records(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text(GOOD + "{not json\n")
    grade(items, rubric_file, tmp_path / "run")
    session = json.loads((tmp_path / "run" / "manifest.json").read_text())["timing"]["sessions"][-1]
    assert session["skipped_input"] == 1 and session["items_in_input"] == 2
    assert "items.jsonl:2: malformed JSON" in session["skipped_examples"][0]


def test_ideal_rows_without_an_ideal_completion_are_named_and_the_run_is_incomplete(tmp_path):
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines()[:2]]
    del rows[1]["ideal_completions_data"]
    examples = tmp_path / "hb.jsonl"
    examples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        out = CliRunner().invoke(app, ["grade", str(examples), "--healthbench", "--ideal",
                                       "--judge", spec(server), "--run-dir", str(tmp_path / "run"),
                                       "--quiet"])
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert f"item[{rows[1]['prompt_id']}]: no ideal completion" in out.output
    assert len(server.requests) == len(rows[0]["rubrics"])  # the first row only


def test_a_response_that_matches_no_item_is_named_and_the_run_is_incomplete(tmp_path):
    prompt_id = json.loads(EXAMPLES.read_text().splitlines()[0])["prompt_id"]
    responses = tmp_path / "responses.jsonl"
    responses.write_text(json.dumps({"prompt_id": prompt_id, "response": "See a doctor."}) + "\n"
                         + json.dumps({"prompt_id": "no-such-id", "response": "Rest."}) + "\n")
    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        out = CliRunner().invoke(app, ["grade", str(EXAMPLES), "--healthbench", "--responses",
                                       str(responses), "--judge", spec(server),
                                       "--run-dir", str(tmp_path / "run"), "--quiet"])
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert "prompt_id: 'no-such-id' matches no item" in out.output


def test_an_empty_items_file_is_an_error_and_makes_no_run(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text("")
    out, server = grade(items, rubric_file, tmp_path / "run")
    assert out.exit_code == 1, out.output
    assert "items.jsonl: no item to grade: the input is empty" in out.output
    assert not (tmp_path / "run").exists() and server.requests == []


def test_an_items_file_whose_every_line_is_bad_is_an_error_naming_each(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "q1"}\n{oops\n')
    out, _ = grade(items, rubric_file, tmp_path / "run")
    assert out.exit_code == 1, out.output
    assert "items.jsonl:1: messages" in out.output and "items.jsonl:2: malformed" in out.output
    assert "every record was skipped" in out.output
    assert not (tmp_path / "run").exists()


async def test_the_python_api_reports_a_run_with_a_skipped_line_incomplete(tmp_path,
                                                                          rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text(GOOD + "{not json\n")
    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    assert result.status == "incomplete" and result.manifest["status"] == "incomplete"
    assert str(result.issues[0]).startswith(f"{items}:2: malformed JSON")


async def test_the_python_api_refuses_an_empty_list_of_items(tmp_path, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        try:
            await assay.agrade([], rubric=rubric_file, judges=[spec(server)],
                               run_dir=tmp_path / "run")
        except InputError as exc:
            assert "no item to grade: the input is empty" in str(exc)
        else:
            raise AssertionError("an empty list of items was graded")
    assert not (tmp_path / "run").exists()


def test_a_taxonomy_run_with_a_malformed_line_is_incomplete(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(GOOD + "{not json\n")
    with FakeJudgeServer.run_in_thread(policy="UNMET") as server:
        out = CliRunner().invoke(app, ["grade", str(items), "--taxonomy", "starter", "--router",
                                       "all", "--judge", spec(server),
                                       "--run-dir", str(tmp_path / "run"), "--quiet"])
    assert_incomplete_everywhere(out, tmp_path / "run")
    assert "items.jsonl:2: malformed JSON" in out.output
