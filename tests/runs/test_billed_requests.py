"""Issue 40, point 3: every request a provider bills is counted in the run's cost, the budget,
the summary and --json: attempts abandoned on their timeout (at their estimate, marked
estimated) and the judges' preflight request."""

from __future__ import annotations

import json

import pytest
from tests.runs.conftest import POLICY
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer, Faults

PER_CALL = 1.0  # 1,000 prompt tokens at $1,000 per million: $1 a reply
PREFLIGHT = 0.001  # the fake judge's preflight reply: 1 prompt token (and 1 free completion)


def priced_config(tmp_path, server, **extra) -> str:
    config = tmp_path / "assay.toml"
    lines = [f'[judges.priced]\nspec = "openai-compatible:fake@{server.base_url}"',
             "price = { input = 1000.0, output = 0.0 }",
             *(f"{k} = {v}" for k, v in extra.items())]
    config.write_text("\n".join(lines) + "\n")
    return str(config)


def grade(tmp_path, items_file, rubric_file, config, *extra):
    return CliRunner().invoke(app, [
        "grade", str(items_file), "--rubric", str(rubric_file), "--judge", "priced",
        "--config", config, "--run-dir", str(tmp_path / "run"), "--json",
        str(tmp_path / "out.json"), *extra], env={"COLUMNS": "200"})


def test_an_abandoned_attempt_is_in_the_runs_cost_summary_and_json_marked_estimated(
        tmp_path, items_file, rubric_file):
    faults = Faults(script=["timeout"], hang_s=5.0)
    with FakeJudgeServer.run_in_thread(policy=POLICY, faults=faults, usage={
            "prompt_tokens": 1000, "completion_tokens": 0}) as server:
        config = priced_config(tmp_path, server, timeout_s=0.3)
        out = grade(tmp_path, items_file, rubric_file, config)
    assert out.exit_code == 0, out.output
    totals = json.loads((tmp_path / "out.json").read_text())["totals"]
    assert totals["abandoned"] == 1 and totals["estimated_usd"] > 0
    # 24 replies, the preflight's, and the abandoned attempt at its reservation
    assert totals["cost_usd"] == pytest.approx(24 * PER_CALL + PREFLIGHT + totals["estimated_usd"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["totals"]["estimated_usd"] == totals["estimated_usd"]
    text = " ".join(out.output.split())
    assert f"cost includes ${totals['estimated_usd']:.4f} estimated for 1 attempt abandoned" in text


def test_the_preflight_request_is_in_the_runs_cost_and_counted_apart_from_the_calls(
        tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, usage={
            "prompt_tokens": 1000, "completion_tokens": 0}) as server:
        out = grade(tmp_path, items_file, rubric_file, priced_config(tmp_path, server))
        assert server.preflights == 1
    assert out.exit_code == 0, out.output
    totals = json.loads((tmp_path / "out.json").read_text())["totals"]
    assert totals["calls"] == 24 and totals["preflight_requests"] == 1
    assert totals["cost_usd"] == pytest.approx(24 * PER_CALL + PREFLIGHT)


def test_the_budget_pays_for_the_preflight(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, usage={
            "prompt_tokens": 1000, "completion_tokens": 0}) as server:
        config = priced_config(tmp_path, server, limits="{ max_in_flight = 1 }")
        # $24 would pay for the 24 calls alone: with the preflight, the last call no longer fits
        out = grade(tmp_path, items_file, rubric_file, config, "--budget", "24")
    assert out.exit_code == 3, out.output
    totals = json.loads((tmp_path / "out.json").read_text())["totals"]
    assert totals["calls"] == 23 and totals["cost_usd"] == pytest.approx(23 + PREFLIGHT)
