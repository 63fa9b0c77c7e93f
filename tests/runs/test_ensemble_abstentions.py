"""End to end: with one judge abstaining, ``--abstain`` changes the score only when the ensemble
counts abstaining votes (``--aggregate ...,abstain=count``), from the CLI and the API."""

from __future__ import annotations

import json

import pytest
from tests.runs.conftest import POLICY, POLICY_SCORE, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.runs import rescore
from assay.testing import FakeJudgeServer


@pytest.fixture
async def abstaining_run(tmp_path, items_file, rubric_file):
    """Judge a answers POLICY; judge b abstains on stinger (5 of 11 points)."""
    async with FakeJudgeServer(policy=POLICY) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "CANNOT_ASSESS"}) as b:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                                    run_dir=tmp_path / "run")
    return result


async def test_dropped_abstentions_leave_abstain_without_effect(abstaining_run):
    for strategy in ("skip", "zero"):
        assert rescore(abstaining_run.run_dir, abstention=strategy).mean == \
            pytest.approx(POLICY_SCORE)


async def test_counted_abstentions_are_scored_by_abstain(abstaining_run):
    run = abstaining_run.run_dir
    counted = "majority,abstain=count"
    # stinger: one MET vs one CANNOT_ASSESS -> the abstention; then --abstain decides
    assert rescore(run, aggregation=counted, abstention="skip").mean == pytest.approx(4 / 6)
    assert rescore(run, aggregation=counted, abstention="zero").mean == pytest.approx(4 / 11)
    assert abstaining_run.rescore(aggregation=counted, abstention="partial:0.5").overall == \
        pytest.approx(6.5 / 11)


async def test_the_cli_takes_the_rule_in_aggregate(abstaining_run, tmp_path):
    out = CliRunner().invoke(app, ["score", str(abstaining_run.run_dir), "--aggregate",
                                   "majority,abstain=count", "--abstain", "zero",
                                   "--json", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "s.json").read_text())["summary"]["mean"] == pytest.approx(4 / 11)


async def test_a_run_graded_with_the_rule_keeps_it(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "CANNOT_ASSESS"}) as b:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                                    aggregation="majority,abstain=count", abstention="zero",
                                    run_dir=tmp_path / "run")
    assert result.overall == pytest.approx(4 / 11)
    assert rescore(result.run_dir).mean == pytest.approx(4 / 11)
