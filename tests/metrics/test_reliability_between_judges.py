"""Reliability between an ensemble's judges with no human label: pooled and per criterion, on
scores, each figure with its bootstrap CI, and from `assay agreement RUN` alone."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.report.conftest import AGREE, write_run_inputs
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.judges.specs import parse_spec
from assay.metrics.inter_judge import inter_judge
from assay.testing import FakeJudgeServer
from assay.testing.policies import RandomErrorPolicy, as_policy
from assay.verdict import Verdict

runner = CliRunner()


async def _ensemble_run(tmp_path, n_items=12):
    items, rubric = write_run_inputs(tmp_path, n=n_items)
    policies = [RandomErrorPolicy(as_policy(AGREE), error_rate=0.3, seed=s) for s in (1, 2, 3)]
    servers = [await FakeJudgeServer(policy=p).start() for p in policies]
    try:
        await assay.agrade(items, rubric=rubric, run_dir=tmp_path / "run",
                           judges=[parse_spec(f"openai-compatible:m@{s.base_url}", id=f"judge{i}")
                                   for i, s in enumerate(servers)])
    finally:
        for server in servers:
            await server.stop()
    return tmp_path / "run"


def _varied_verdicts():
    answers = {"a": "MMUUMUMMUU", "b": "MUUUMUMMMU", "c": "MMUMMUUMUU"}
    return [Verdict(item_id=f"q{i}", criterion_id=c, judge=judge,
                    decision="MET" if x == "M" else "UNMET")
            for judge, row in answers.items() for i, x in enumerate(row) for c in ("x", "y")]


def test_pooled_figures_between_judges_come_with_bootstrap_cis():
    r = inter_judge(_varied_verdicts(), seed=3, n_resamples=200)
    for metric in (r.percent_agreement, r.alpha_nominal, r.fleiss_kappa):
        assert metric.value is not None and metric.ci is not None
        assert metric.ci.low <= metric.value <= metric.ci.high


def test_per_criterion_figures_between_judges_come_with_bootstrap_cis():
    r = inter_judge(_varied_verdicts(), seed=3, n_resamples=200)
    for c in r.per_criterion.values():
        assert c.alpha.ci is not None and c.fleiss_kappa.ci is not None


def test_score_iccs_and_interval_alpha_come_with_bootstrap_cis():
    scores = {"a": {f"q{i}": i / 10 for i in range(10)},
              "b": {f"q{i}": (i + (i % 3)) / 12 for i in range(10)}}
    verdicts = [v for v in _varied_verdicts() if v.judge in scores]
    r = inter_judge(verdicts, item_scores=scores, seed=1, n_resamples=200)
    assert r.score_icc["ICC(2,1)"].ci is not None
    assert r.score_alpha_interval.ci is not None


def test_the_same_seed_gives_the_same_cis_and_no_resamples_say_why_there_is_none():
    one, two = (inter_judge(_varied_verdicts(), seed=9, n_resamples=100) for _ in range(2))
    assert one == two
    none = inter_judge(_varied_verdicts(), n_resamples=0).alpha_nominal
    assert none.ci is None and "no bootstrap" in none.reason


async def test_agreement_on_an_ensemble_run_without_labels_gives_reliability_with_cis(tmp_path):
    run = await _ensemble_run(tmp_path)
    out = tmp_path / "reliability.json"
    result = runner.invoke(app, ["agreement", str(run), "--json", str(out), "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    assert "Between judges" in result.output
    data = json.loads(out.read_text())
    assert data["reports"] == []
    between = data["inter_judge"]
    assert between["judges"] == ["judge0", "judge1", "judge2"]
    for name in ("alpha_nominal", "fleiss_kappa", "percent_agreement"):
        assert between[name]["ci"] is not None, name
    assert between["score_icc"]["ICC(2,1)"]["ci"] is not None


async def test_agreement_on_a_single_judge_run_without_labels_is_still_an_error(tmp_path):
    items, rubric = write_run_inputs(tmp_path)
    server = await FakeJudgeServer(policy=AGREE).start()
    try:
        await assay.agrade(items, rubric=rubric, run_dir=tmp_path / "one",
                           judges=[f"openai-compatible:m@{server.base_url}"])
    finally:
        await server.stop()
    result = runner.invoke(app, ["agreement", str(tmp_path / "one")])
    assert result.exit_code == 1 and "no human labels" in result.output


def test_score_alpha_of_many_distinct_scores_is_computed_from_sums():
    # the krippendorff package holds units × values² floats: 67 GiB for 1,000 distinct scores
    items = [f"q{i}" for i in range(1000)]
    scores = {judge: {item: (i * 7919 + shift) % 1000 / 1000 for i, item in enumerate(items)}
              for judge, shift in (("a", 0), ("b", 3), ("c", 11))}
    verdicts = [Verdict(item_id="q0", criterion_id="x", judge=j, decision="MET") for j in "abc"]
    r = inter_judge(verdicts, item_scores=scores, n_resamples=0)
    x = np.array([[scores[j][item] for j in "abc"] for item in items])
    # Krippendorff's definition: α = 1 − D_o / D_e, squared differences within units (each
    # unit's pairs over m − 1 = 2) against all pairs of values (over n − 1)
    within = sum(((row[:, None] - row[None, :]) ** 2).sum() / 2 for row in x) / x.size
    values = x.ravel()
    between = ((values[:, None] - values[None, :]) ** 2).sum() / (x.size * (x.size - 1))
    assert r.score_alpha_interval.value == pytest.approx(1 - within / between, abs=1e-9)
