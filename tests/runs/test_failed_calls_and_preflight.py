"""Issue 18.4: a run whose calls fail is never "complete" with exit 0; preflight finds a wrong
endpoint path before the run is created."""

from __future__ import annotations

import json

from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer, Faults


def grade(items_file, rubric_file, judge: str, run_dir, *extra: str):
    return CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                    "--judge", judge, "--run-dir", str(run_dir), "--quiet", *extra])


def test_a_wrong_url_path_fails_in_preflight_before_the_run_is_created(tmp_path, items_file,
                                                                        rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        wrong = f"openai-compatible:fake@http://127.0.0.1:{server.port}/wrong/v1"
        out = grade(items_file, rubric_file, wrong, tmp_path / "run")
        check = CliRunner().invoke(app, ["judges", "check", wrong])
    assert out.exit_code == 1, out.output
    assert "HTTP 404" in out.output and "/wrong/v1/chat/completions" in out.output
    assert not (tmp_path / "run").exists()
    assert server.requests == []
    assert check.exit_code == 1 and "FAIL" in check.output and "HTTP 404" in check.output


def test_preflight_sends_one_real_request_to_the_completion_path(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = grade(items_file, rubric_file, spec(server), tmp_path / "run")
    assert out.exit_code == 0, out.output
    assert server.preflights == 1 and len(server.requests) == 24


def test_a_run_whose_calls_all_fail_is_incomplete_with_a_distinct_exit_code(tmp_path, items_file,
                                                                             rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, faults=Faults(malformed=1.0)) as server:
        out = grade(items_file, rubric_file, spec(server), tmp_path / "run")
    assert out.exit_code == 4, out.output
    assert "complete" not in out.output.replace("incomplete", "")
    assert "incomplete: 6 items lack verdicts (24 calls failed" in out.output
    assert f"assay grade --resume {tmp_path / 'run'}" in out.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "incomplete"


def test_some_failed_calls_make_the_run_incomplete_and_resume_completes_it(tmp_path, items_file,
                                                                           rubric_file):
    # One request at a time, in order: the engine keeps all 24 calls outstanding, so the
    # requests go A..X, then the re-asks of the failed ones (two each, max_reasks); malformed
    # replies to A..H and to their re-asks fail exactly those 8 calls (two items). No final
    # pass: what the resume retries is tested here.
    faults = Faults(script=["malformed"] * 8 + [None] * 16 + ["malformed"] * 16)
    with FakeJudgeServer.run_in_thread(policy=POLICY, faults=faults) as server:
        first = grade(items_file, rubric_file, spec(server), tmp_path / "run", "--concurrency", "1",
                      "--final-passes", "0")
        assert first.exit_code == 4, first.output
        assert "incomplete: 2 items lack verdicts (8 calls failed" in first.output
        n = len(server.requests)
        second = CliRunner().invoke(app, ["grade", "--resume", str(tmp_path / "run"), "--quiet"])
    assert second.exit_code == 0, second.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    # only the failed calls are made again (an attempt that timed out on a loaded machine may
    # be sent twice: count the distinct calls)
    again = {json.dumps(r["body"]["messages"]) for r in server.requests[n:]}
    assert len(again) == 8
