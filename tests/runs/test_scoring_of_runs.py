"""Ensembles, abstention strategies, errors vs verdicts, rescoring without calls, exports."""

from __future__ import annotations

import json

import pytest
from tests.runs.conftest import POLICY, POLICY_SCORE, rows, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.io.verdicts import read_verdicts
from assay.runs import rescore, rescore_run
from assay.testing import FakeJudgeServer, Faults


async def test_ensemble_votes_are_stored_per_judge_and_aggregated(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy={**POLICY, "stinger": "MET"}) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "UNMET"}) as b:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                                    run_dir=tmp_path / "run")
    assert len(result.votes) == 48 and len(result.verdicts) == 24
    # MET vs UNMET on a desirable criterion: a tie, resolved to the lower score (UNMET).
    assert result.overall == pytest.approx(4 / 11)
    assert result.report.scores.mean_agreement == pytest.approx((0.5 + 1 + 1 + 1) / 4)
    assert rescore_run(result.run_dir, aggregation="any").overall == pytest.approx(POLICY_SCORE)
    assert rescore_run(result.run_dir, aggregation="weighted").overall == pytest.approx(4 / 11)


async def test_judge_weights_decide_a_weighted_vote(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy={**POLICY, "stinger": "MET"}) as a, \
            FakeJudgeServer(policy={**POLICY, "stinger": "UNMET"}) as b:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                                    weights=[2, 1], aggregation="weighted", run_dir=tmp_path / "run")
    assert result.overall == pytest.approx(POLICY_SCORE)


async def test_same_judge_twice_gets_distinct_ids(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items_file, rubric=rubric_file,
                                    judges=[spec(server), spec(server)], run_dir=tmp_path / "run")
    assert {v.judge for v in result.votes} == {spec(server), spec(server) + "#2"}


@pytest.mark.parametrize("strategy, expected", [
    ("skip", 4 / 6),           # stinger left out: (0.5*4 + 2) / (4 + 2)
    ("zero", 4 / 11),          # stinger counts 0 of 5
    ("partial:0.5", 6.5 / 11),  # stinger counts 2.5 of 5
    ("fail", 4 / 11),          # worst case for a desirable criterion: 0
])
async def test_cannot_assess_is_a_verdict_scored_by_each_abstention_strategy(
        tmp_path, items_file, rubric_file, strategy, expected):
    async with FakeJudgeServer(policy={**POLICY, "stinger": "CANNOT_ASSESS"}) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    abstention=strategy, run_dir=tmp_path / "run")
    assert rows(result.run_dir, "SELECT DISTINCT verdict FROM verdicts WHERE criterion_id='stinger'") \
        == [("CANNOT_ASSESS",)]
    assert result.overall == pytest.approx(expected)


async def test_unreadable_replies_are_errors_never_verdicts(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY, faults=Faults(malformed=1.0)) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    assert rows(result.run_dir, "SELECT COUNT(*) FROM verdicts") == [(0,)]
    kinds = {k for (k,) in rows(result.run_dir, "SELECT kind FROM errors")}
    assert kinds and kinds <= {"unparseable", "schema_mismatch"}
    assert result.totals.errors == 24 and result.overall is None


async def test_rescoring_a_run_makes_no_request(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
        before = len(server.requests)
        table = rescore(result.run_dir, abstention="zero", formula="pass-rate")
        cli = CliRunner().invoke(app, ["score", str(result.run_dir), "--formula", "raw"])
        assert len(server.requests) == before
    assert table.formula == "pass-rate" and len(table.items) == 6
    assert cli.exit_code == 0, cli.output


async def test_exports_write_verdict_jsonl_that_assay_score_reads_csv_and_parquet(
        tmp_path, items_file, rubric_file):
    import pandas as pd

    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    assert result.export(tmp_path / "v.jsonl") == 24
    assert len(read_verdicts(tmp_path / "v.jsonl")) == 24
    cli = CliRunner().invoke(app, ["score", str(tmp_path / "v.jsonl"), "--rubric", str(rubric_file),
                                   "--json", str(tmp_path / "s.json")])
    assert cli.exit_code == 0, cli.output
    assert json.loads((tmp_path / "s.json").read_text())["summary"]["mean"] == pytest.approx(result.overall)
    assert result.export(tmp_path / "v.csv") == 24
    assert list(pd.read_csv(tmp_path / "v.csv").columns) == list(result.to_pandas().columns)
    assert result.export(tmp_path / "votes.parquet", votes=True) == 24
    assert len(pd.read_parquet(tmp_path / "votes.parquet")) == 24
