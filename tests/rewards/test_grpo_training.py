"""GRPO for real (issue 32, point 5): TRL's ``GRPOTrainer.train()`` runs two optimiser steps on
a tiny causal LM built on the spot, rewarded by Assay's TRL adapter whose judge is the fake
server over loopback HTTP. The runs are those of ``examples/health-score/grpo_train.py``
(loaded and run here, so the example runs in CI); nothing is downloaded (HF offline mode)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import huggingface_hub.constants
import pytest
import torch

from assay.testing.tiny_lm import tiny_causal_lm

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).parents[2] / "examples" / "health-score" / "grpo_train.py"
MEAN = "rewards/health_score_reward/mean"


@pytest.fixture(scope="module")
def example():
    """The example module, imported with the Hugging Face Hub offline."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        spec = importlib.util.spec_from_file_location("grpo_train_example", EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        patch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up
        spec.loader.exec_module(module)
        yield module


@pytest.fixture(scope="module")
def run(example):
    """The example's own run: seed 0, every judge call answered."""
    return example.main(["--seed", "0"])


@pytest.fixture(scope="module")
def flaky_run(example):
    """The penalty's judge call on the chest-pain prompt answers HTTP 500 (default policy)."""
    return example.main(["--seed", "0", "--flaky"])


def step_logs(run):
    return [log for log in run.trainer.state.log_history if MEAN in log]


def expected_reward(completion: str) -> float:
    """The keyword judge's ±1 reward, min-max normalised over doc (+1), rest (+1), harm (−1)."""
    raw = ("doctor" in completion) + ("rest" in completion) - ("double" in completion)
    return (raw + 1) / 3


def test_grpo_trainer_takes_two_optimiser_steps_on_the_tiny_model(run):
    untrained, _ = tiny_causal_lm(seed=0)
    trained = run.trainer.model
    assert run.trainer.state.global_step == 2
    assert any(not torch.equal(a, b) for a, b in zip(untrained.parameters(), trained.parameters(),
                                                     strict=True))


def test_rewards_are_the_judges_verdicts_on_the_trainers_own_completions(run):
    assert len(run.batches) == 2 and all(len(b["rewards"]) == 8 for b in run.batches)
    for batch in run.batches:
        assert batch["rewards"] == [pytest.approx(expected_reward(c.lower()))
                                    for c in batch["completions"]]


def test_the_trainer_logs_the_mean_of_the_rewards_it_received_each_step(run):
    logs = step_logs(run)
    assert [log["step"] for log in logs] == [1, 2]
    for log, batch in zip(logs, run.batches, strict=True):
        assert log[MEAN] == pytest.approx(sum(batch["rewards"]) / 8, abs=1e-6)


def test_a_failed_judge_call_leaves_its_sample_without_a_reward(example, flaky_run):
    for batch in flaky_run.batches:
        for prompt, reward in zip(batch["prompts"], batch["rewards"], strict=True):
            assert (reward is None) == (prompt == example.CHEST)


def test_trl_masks_the_samples_without_a_reward_out_of_the_mean(flaky_run):
    for log, batch in zip(step_logs(flaky_run), flaky_run.batches, strict=True):
        scored = [r for r in batch["rewards"] if r is not None]
        assert len(scored) == 4
        assert log[MEAN] == pytest.approx(sum(scored) / 4, abs=1e-6)
        assert not math.isclose(log[MEAN], sum(scored) / 8)  # not counted as 0


def test_failures_are_logged_to_the_trainers_metrics(flaky_run):
    for log in step_logs(flaky_run):
        assert log["assay/failed_sample_rate"] == 0.5
        assert log["assay/withheld_sample_rate"] == 0.5
        assert log["assay/failed_calls_per_sample"] == 0.5  # one call of half the samples


def test_the_penalty_met_policy_counts_the_failed_penalty_as_met(example):
    run = example.main(["--seed", "0", "--flaky", "--on-failure", "penalty-met"])
    for batch in run.batches:
        for prompt, completion, reward in zip(batch["prompts"], batch["completions"],
                                              batch["rewards"], strict=True):
            if prompt == example.CHEST:
                assert reward == pytest.approx(expected_reward(completion.lower() + " double"))
    assert all(log["assay/withheld_sample_rate"] == 0 and log["assay/failed_sample_rate"] == 0.5
               for log in step_logs(run))


def test_the_same_seed_gives_the_same_run(example, run):
    again = example.main(["--seed", "0"])
    assert again.batches == run.batches
    assert all(torch.equal(a, b) for a, b in zip(again.trainer.model.parameters(),
                                                 run.trainer.model.parameters(), strict=True))

