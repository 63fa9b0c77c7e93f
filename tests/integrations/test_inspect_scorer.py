"""``rubric_scorer`` inside ``inspect_ai.eval``: the judge is Assay's fake judge over HTTP;
the per-sample scores equal ``assay grade`` of the same outputs, and the HealthBench overall
equals inspect_evals' own HealthBench scorer on the same verdicts."""

from __future__ import annotations

import json
import math

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from inspect_ai.solver import generate

import assay
from assay.integrations.inspect import rubric_scorer
from assay.testing import FakeJudgeServer, Faults

from .conftest import hashed_verdict
from .inspect_tasks import EXAMPLES, answers, healthbench_dataset, healthbench_rows, mock_model


@pytest.fixture(scope="module")
def both_scorers(tmp_path_factory):
    """One eval of 3 HealthBench samples scored by inspect_evals' scorer and by Assay's."""
    from inspect_evals.healthbench.scorer import healthbench_scorer

    rows = healthbench_rows(3)
    logs = tmp_path_factory.mktemp("logs")
    with FakeJudgeServer.run_in_thread(policy=hashed_verdict) as server:
        theirs = get_model("openai-api/fake/fake", base_url=server.base_url, api_key="unused")
        task = Task(dataset=healthbench_dataset(rows), solver=generate(),
                    scorer=[healthbench_scorer(judge_model=theirs, bootstrap_samples=200),
                            rubric_scorer(f"openai-compatible:fake@{server.base_url}")])
        [log] = inspect_eval(task, model=mock_model(answers(3)), log_dir=str(logs),
                             display="none")
        yield log, rows, server.base_url, logs


def test_each_sample_scores_as_inspect_evals_healthbench_scorer_does(both_scorers):
    log = both_scorers[0]
    assert log.status == "success"
    for sample in log.samples:
        theirs = sample.scores["_scorer"].value["healthbench_score"]
        ours = sample.scores["rubric_scorer"].value
        assert ours == pytest.approx(theirs, abs=1e-12), sample.id
        assert 0 < ours < 1


def test_the_healthbench_overall_equals_inspect_evals_clipped_mean(both_scorers):
    metrics = {s.name: s.metrics for s in both_scorers[0].results.scores}
    assert metrics["rubric_scorer"]["overall"].value == pytest.approx(
        metrics["_scorer"]["bootstrap_score"].value, abs=1e-12)
    assert metrics["rubric_scorer"]["mean"].value == pytest.approx(
        metrics["healthbench_score"]["mean"].value, abs=1e-12)
    assert {"stderr", "bootstrap_std", "axis_accuracy", "theme_hedging"} <= set(
        metrics["rubric_scorer"])


def test_per_sample_scores_equal_assay_grade_of_the_same_outputs(both_scorers, tmp_path):
    log = both_scorers[0]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"prompt_id": s.id, "response": s.output.completion})
                                 + "\n" for s in log.samples))
    with FakeJudgeServer.run_in_thread(policy=hashed_verdict) as server:
        graded = assay.grade(EXAMPLES, healthbench=True, responses=responses,
                             judges=[f"openai-compatible:fake@{server.base_url}"],
                             run_dir=tmp_path / "run")
    ours = {s.id: s.scores["rubric_scorer"].value for s in log.samples}
    assert graded.scores == pytest.approx(ours, abs=1e-12)
    assert graded.overall == pytest.approx(
        {s.name: s.metrics for s in log.results.scores}["rubric_scorer"]["overall"].value)


def test_each_score_carries_every_criterion_verdict_and_explanation(both_scorers):
    log, rows = both_scorers[0], both_scorers[1]
    by_id = {row["prompt_id"]: row for row in rows}
    for sample in log.samples:
        criteria = sample.scores["rubric_scorer"].metadata["criteria"]
        assert [c["text"] for c in criteria] == [r["criterion"] for r in by_id[sample.id]["rubrics"]]
        theirs = sample.scores["_scorer"].metadata["detailed_results"]
        assert [c["verdict"] == "MET" for c in criteria] == [r["met"] for r in theirs]
        assert all(c["explanation"] and c["votes"] for c in criteria)


def test_a_failed_judge_call_leaves_the_sample_unscored_never_scored(tmp_path):
    rows = healthbench_rows(2)
    failing = rows[0]["rubrics"][0]["criterion"]

    # every call about one criterion of the first sample fails (HTTP 500), retries included
    faults = Faults(at={failing: ["server_error"] * 50}, retry_after=0)
    with FakeJudgeServer.run_in_thread(policy="MET", faults=faults) as server:
        task = Task(dataset=healthbench_dataset(rows), solver=generate(),
                    scorer=rubric_scorer(f"openai-compatible:fake@{server.base_url}",
                                         max_reasks=0))
        [log] = inspect_eval(task, model=mock_model(answers(2)), log_dir=str(tmp_path),
                             display="none")
    first, second = sorted(log.samples, key=lambda s: s.id != rows[0]["prompt_id"])
    unscored = first.scores["rubric_scorer"]
    assert math.isnan(unscored.value) and unscored.reason == "grader_failed"
    assert "server_error" in unscored.explanation or "500" in unscored.explanation
    assert second.scores["rubric_scorer"].value > 0
    [score] = log.results.scores
    assert (score.scored_samples, score.unscored_samples) == (1, 1)
    assert score.metrics["mean"].value == second.scores["rubric_scorer"].value
