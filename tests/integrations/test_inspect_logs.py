"""Inspect logs in and out: ``assay grade --inspect-log`` regrades an Inspect run (``.eval`` and
``.json``) as ``assay grade`` grades the same outputs, and ``assay export --inspect`` writes a
run that Inspect's own ``read_eval_log`` reads back with every score."""

from __future__ import annotations

import json
import math

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.solver import generate
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.runs.results import rescore_run

from .conftest import hashed_verdict
from .inspect_tasks import EXAMPLES, answers, healthbench_dataset, healthbench_rows, mock_model


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    """An inspect_evals HealthBench run (no scorer) logged as .eval and as .json."""
    rows = healthbench_rows(3)
    logs = {}
    for log_format in ("eval", "json"):
        folder = tmp_path_factory.mktemp(log_format)
        [log] = inspect_eval(Task(dataset=healthbench_dataset(rows), solver=generate()),
                             model=mock_model(answers(3)), log_dir=str(folder),
                             log_format=log_format, display="none")
        assert log.status == "success"
        logs[log_format] = log.location
    return logs


@pytest.fixture(scope="module")
def fake_judge():
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread(policy=hashed_verdict) as server:
        yield f"openai-compatible:fake@{server.base_url}"


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_grading_an_inspect_log_scores_as_grading_its_outputs(inspect_logs, fake_judge,
                                                              log_format, tmp_path):
    log = read_eval_log(inspect_logs[log_format])
    result = CliRunner().invoke(app, ["grade", "--inspect-log", inspect_logs[log_format],
                                      "--judge", fake_judge, "--run-dir", str(tmp_path / "run"),
                                      "--json", str(tmp_path / "out.json"), "--quiet"])
    assert result.exit_code == 0, result.output
    graded = json.loads((tmp_path / "out.json").read_text())
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"prompt_id": s.id, "response": s.output.completion})
                                 + "\n" for s in log.samples))
    direct = assay.grade(EXAMPLES, healthbench=True, responses=responses, judges=[fake_judge],
                         run_dir=tmp_path / "direct")
    assert graded["status"] == "complete"
    assert graded["summary"]["formula"] == "healthbench"  # HealthBench mode from the log
    scores = {row["item_id"]: row["score"] for row in graded["items"]}
    assert scores == pytest.approx(direct.scores, abs=1e-12) and len(scores) == 3
    assert graded["overall"] == pytest.approx(direct.overall)


def test_an_inspect_log_refuses_items_of_its_own(inspect_logs, fake_judge):
    result = CliRunner().invoke(app, ["grade", str(EXAMPLES), "--inspect-log",
                                      inspect_logs["eval"], "--judge", fake_judge])
    assert result.exit_code != 0
    assert "--inspect-log gives the items" in result.output


def test_an_unreadable_log_is_named(tmp_path, fake_judge):
    bad = tmp_path / "bad.eval"
    bad.write_text("not a zip")
    result = CliRunner().invoke(app, ["grade", "--inspect-log", str(bad), "--judge", fake_judge])
    assert result.exit_code != 0
    assert "bad.eval" in result.output and "not a readable Inspect log" in result.output


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_exported_run_reads_back_with_every_score(fake_judge, tmp_path, suffix):
    run = tmp_path / "run"
    assay.grade(EXAMPLES, healthbench=True, ideal=True, judges=[fake_judge], run_dir=run)
    out = tmp_path / f"run{suffix}"
    result = CliRunner().invoke(app, ["export", str(run), "--inspect", "-o", str(out)])
    assert result.exit_code == 0, result.output
    log = read_eval_log(str(out))
    expected = rescore_run(run)
    assert {s.id: s.scores["assay_rubric"].value for s in log.samples} == pytest.approx(
        expected.scores, abs=1e-12)
    for sample in log.samples:
        score = sample.scores["assay_rubric"]
        assert sample.output.completion == score.answer and score.answer
        assert all(c["verdict"] in ("MET", "UNMET") and c["explanation"] and c["votes"]
                   for c in score.metadata["criteria"])
        assert all(c["text"] in score.explanation for c in score.metadata["criteria"])
    [results] = log.results.scores
    assert results.metrics["mean"].value == pytest.approx(
        sum(expected.scores.values()) / len(expected.scores))
    assert results.metrics["healthbench_clipped_overall"].value == pytest.approx(expected.overall)
    assert (results.scored_samples, results.unscored_samples) == (len(expected.scores), 0)
    assert not any(math.isnan(s.scores["assay_rubric"].value) for s in log.samples)


def test_an_item_without_verdicts_is_exported_unscored(tmp_path):
    from assay.testing import FakeJudgeServer, Faults

    run = tmp_path / "run"
    first = healthbench_rows(1)[0]["rubrics"][0]["criterion"]
    with FakeJudgeServer.run_in_thread(policy="MET", faults=Faults(
            at={first: ["server_error"] * 50}, retry_after=0)) as server:
        done = assay.grade(EXAMPLES, healthbench=True, ideal=True, max_reasks=0,
                           judges=[f"openai-compatible:fake@{server.base_url}"], run_dir=run)
    assert done.status == "incomplete"
    log = read_eval_log(str(_export(run, tmp_path / "run.eval")))
    unscored = [s for s in log.samples if math.isnan(s.scores["assay_rubric"].value)]
    assert len(unscored) == 1 and unscored[0].scores["assay_rubric"].reason == "grader_failed"
    assert log.results.scores[0].unscored_samples == 1
    assert log.status == "error" and "incomplete" in log.error.message  # never "success"


def _export(run, out):
    result = CliRunner().invoke(app, ["export", str(run), "--inspect", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out
