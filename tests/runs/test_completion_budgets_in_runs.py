"""Rubric grading sends a completion budget in both call modes, and a verdict cut at its cap
or refused as too long for the judge's context is a classified error, never a verdict."""

from __future__ import annotations

import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

from assay.cli import app
from assay.grading.schemas import VERDICT_BUDGET
from assay.testing import FakeJudgeServer, Faults


def grade(items_file, rubric_file, judge: str, run_dir, *extra: str):
    return CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                    "--judge", judge, "--run-dir", str(run_dir), "--quiet", *extra])


@pytest.mark.parametrize("mode", ["per-criterion", "per-item"])
def test_every_grading_call_sends_one_verdicts_budget_per_criterion(tmp_path, items_file,
                                                                     rubric_file, mode):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = grade(items_file, rubric_file, spec(server), tmp_path / "run", "--mode", mode)
    assert out.exit_code == 0, out.output
    for request in server.requests:
        criteria = len(request["criteria"])
        assert request["body"]["max_tokens"] == VERDICT_BUDGET.tokens * criteria


def test_a_verdict_cut_at_its_cap_is_a_truncated_error_and_the_run_incomplete(tmp_path, items_file,
                                                                             rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, faults=Faults(truncated=1.0)) as server:
        out = grade(items_file, rubric_file, spec(server), tmp_path / "run")
    assert out.exit_code == 4, out.output
    assert "truncated: verdict: the reply was cut at max_tokens=2048" in out.output
    assert "unparseable" not in out.output


def test_a_prompt_over_the_judges_context_is_a_context_length_error_sent_once(
        tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(
            policy=POLICY, faults=Faults(at={"<criterion": ["context_overflow"] * 99})) as server:
        out = grade(items_file, rubric_file, spec(server), tmp_path / "run")
    assert out.exit_code == 4, out.output
    assert ("most often context_length: verdict: the request (2,300 tokens) does not fit the "
            "model's context (2,048 tokens)") in " ".join(out.output.split())
    assert len(server.requests) == 24  # one attempt per call: never retried


def test_a_healthbench_verdict_cut_at_simple_evals_max_tokens_names_where_2048_came_from(
        tmp_path, healthbench_dev_path):
    rows = healthbench_dev_path.read_text().splitlines()[:1]
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n")
    with FakeJudgeServer.run_in_thread(faults=Faults(truncated=1.0)) as server:
        out = CliRunner().invoke(app, ["grade", str(tmp_path / "rows.jsonl"), "--healthbench",
                                       "--ideal", "--judge", spec(server), "--run-dir",
                                       str(tmp_path / "run"), "--quiet"])
    assert out.exit_code == 4, out.output
    said = " ".join(out.output.split())
    assert ("the reply was cut at max_tokens=2048 (simple-evals' grader max_tokens, which the "
            "healthbench template sends; a larger max_tokens in the judge's config allows "
            "more") in said
    assert "the judge's own max_tokens" not in said  # the user set none
