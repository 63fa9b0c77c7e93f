"""Rewards share a hard budget: ``build_scorer(..., budget_usd=X)`` (``assay serve --budget``)
reserves each call's cost before it is sent, so a batch at 64 calls in flight never spends more
than X, and a completion with a call the budget refused gets no reward (None), never one
computed as if that criterion were unmet."""

from __future__ import annotations

import pytest

from assay.judges import run_sync
from assay.rewards import RewardItem, build_scorer
from assay.rubric import Criterion
from assay.testing import FakeJudgeServer

CRITERIA = [Criterion(id=f"c{i}", text=f"Mentions point {i} of the advice.") for i in range(4)]


def test_a_reward_batch_at_64_in_flight_never_spends_more_than_its_budget(tmp_path):
    items = [RewardItem.of(f"Question {i}: my knee hurts after running.",
                           f"Answer {i}: rest, ice and see a doctor if it lasts.", CRITERIA)
             for i in range(60)]  # 240 calls
    with FakeJudgeServer.run_in_thread(policy="MET", latency=0.02) as server:
        config = tmp_path / "assay.toml"
        config.write_text(f'[judges.priced]\nspec = "openai-compatible:fake@{server.base_url}"\n'
                          'price = { input = 20.0, output = 20.0 }\nmax_tokens = 64\n'
                          'limits = { max_in_flight = 64 }\n')
        scorer = build_scorer("priced", bank=None, template="assay", config_file=config,
                              budget_usd=0.5)
        results = run_sync(scorer.score(items))
        run_sync(scorer.aclose())
        answered = len(server.requests)
    budget, judge = scorer.judge.budget, scorer.judge
    assert budget is not None and budget.refused > 0  # the budget stopped the batch
    # a call reserves under $0.01 (about 200 prompt tokens and 64 completion tokens at $20/M)
    assert 0.49 < judge.total_cost_usd <= 0.5
    assert budget.spent_usd == pytest.approx(judge.total_cost_usd)
    assert answered == judge.calls - budget.refused  # every call sent was answered and counted
    refused = [r for r in results if any(v.startswith("budget:") for v in r.failed.values())]
    assert refused and all(r.reward is None for r in refused)
    assert all(r.reward == 1.0 and not r.failed for r in results if r not in refused)


def test_serve_refuses_a_budget_that_each_replica_would_spend():
    from typer.testing import CliRunner

    from assay.cli import app

    out = CliRunner().invoke(app, ["serve", "--judge", "vllm:x", "--replicas", "2",
                                   "--budget", "1"])
    assert out.exit_code == 1 and "not with --replicas" in " ".join(out.output.split())
