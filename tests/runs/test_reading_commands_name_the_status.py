"""Issue 27.2: `assay score`, `report`, `agreement` and `compare` name a run that is not
complete before any figure, in --json and in the report's header; --require-complete makes it
an error (exit 4, nothing written)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.testing import FakeJudgeServer

WARNING = "warning: run"


@pytest.fixture
async def complete_run(tmp_path, items_file, rubric_file) -> Path:
    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "complete")
    assert result.status == "complete"
    return result.run_dir


@pytest.fixture
def incomplete_run(tmp_path, complete_run) -> Path:
    """The complete run, copied, with one item's verdicts deleted by hand."""
    import shutil

    run_dir = tmp_path / "incomplete"
    shutil.copytree(complete_run, run_dir, ignore=shutil.ignore_patterns("run.lock"))
    db = sqlite3.connect(run_dir / "run.sqlite")
    db.execute("DELETE FROM verdicts WHERE item_id = 'q2'")
    db.commit()
    db.close()
    return run_dir


@pytest.fixture
def labels(tmp_path) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(
        json.dumps({"item_id": f"q{i}", "criterion_id": c, "verdict": POLICY[c],
                    "judge": "physician"}) + "\n"
        for i in range(6) for c in ("stinger", "tweezers")))
    return path


def flat(text: str) -> str:
    """``text`` with its line breaks (rich wraps long lines) and runs of spaces as one space."""
    return " ".join(text.split())


def invoke(*args: str):
    # wide enough that a long temporary path is never wrapped inside the line checked
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "400"})


def test_score_names_an_incomplete_run_before_its_figures(incomplete_run):
    out = invoke("score", incomplete_run)
    assert out.exit_code == 0, out.output
    assert flat(out.output).startswith(
        f"{WARNING} {incomplete_run}: incomplete: 1 of 6 items lack verdicts")


def test_score_says_nothing_more_of_a_complete_run(complete_run):
    out = invoke("score", complete_run)
    assert out.exit_code == 0 and WARNING not in out.output


def test_score_json_carries_the_run_status(tmp_path, incomplete_run):
    out = invoke("score", incomplete_run, "--json", tmp_path / "s.json")
    assert out.exit_code == 0, out.output
    status = json.loads((tmp_path / "s.json").read_text())["run_status"]
    assert status["status"] == "incomplete" and status["coverage"]["items_lacking"] == 1


def test_score_require_complete_refuses_an_incomplete_run_and_writes_nothing(tmp_path,
                                                                            incomplete_run):
    out = invoke("score", incomplete_run, "--require-complete", "--json", tmp_path / "s.json",
                 "--export", tmp_path / "v.jsonl")
    assert out.exit_code == 4, out.output
    assert f"error {incomplete_run}: incomplete" in flat(out.output)
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "v.jsonl").exists()


def test_score_require_complete_passes_a_complete_run(complete_run):
    assert invoke("score", complete_run, "--require-complete").exit_code == 0


def report_header(out_file: Path) -> str:
    return out_file.read_text().split('<div id="run-status">')[1].split("</div>\n</div>")[0]


def test_report_header_shows_an_incomplete_runs_status_and_why(tmp_path, incomplete_run):
    out = invoke("report", incomplete_run, "--out", tmp_path / "r.html")
    assert out.exit_code == 0, out.output
    assert f"{WARNING} {incomplete_run}: incomplete" in flat(out.output)
    header = report_header(tmp_path / "r.html")
    assert 'run incomplete: <b class="status-name">incomplete</b> · 1 of 6 items lack' in header
    assert "<h2>Run incomplete · incomplete</h2>" in (tmp_path / "r.html").read_text()


def test_report_header_shows_a_complete_run_complete(tmp_path, complete_run):
    out = invoke("report", complete_run, "--out", tmp_path / "r.html")
    assert out.exit_code == 0 and WARNING not in out.output
    assert 'run complete: <b class="status-name">complete</b>' in report_header(tmp_path / "r.html")


def test_report_require_complete_refuses_and_writes_no_file(tmp_path, complete_run,
                                                            incomplete_run):
    out = invoke("report", complete_run, incomplete_run, "--out", tmp_path / "r.html",
                 "--require-complete")
    assert out.exit_code == 4, out.output
    assert not (tmp_path / "r.html").exists()


def test_agreement_names_an_incomplete_run_and_require_complete_refuses(tmp_path, labels,
                                                                       incomplete_run):
    out = invoke("agreement", incomplete_run, "--labels", labels, "--bootstrap", "0",
                 "--json", tmp_path / "a.json")
    assert out.exit_code == 0, out.output
    assert flat(out.output).startswith(f"{WARNING} {incomplete_run}: incomplete")
    saved = json.loads((tmp_path / "a.json").read_text())
    assert saved["run_status"]["source"]["status"] == "incomplete"
    assert saved["run_status"]["labels"] is None  # a verdict file has no run status
    refused = invoke("agreement", incomplete_run, "--labels", labels, "--require-complete")
    assert refused.exit_code == 4, refused.output


def test_compare_names_each_run_and_require_complete_refuses(tmp_path, complete_run,
                                                            incomplete_run):
    out = invoke("compare", complete_run, incomplete_run, "--json", tmp_path / "c.json")
    assert out.exit_code == 0, out.output
    assert flat(out.output).startswith(f"{WARNING} {incomplete_run}: incomplete")
    statuses = json.loads((tmp_path / "c.json").read_text())["run_status"]
    assert statuses["a"]["status"] == "complete" and statuses["b"]["status"] == "incomplete"
    refused = invoke("compare", complete_run, incomplete_run, "--require-complete",
                     "--json", tmp_path / "c2.json")
    assert refused.exit_code == 4 and not (tmp_path / "c2.json").exists()
