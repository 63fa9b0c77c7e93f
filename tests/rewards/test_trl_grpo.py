"""The TRL adapter inside TRL's own reward step: ``GRPOTrainer._calculate_rewards`` (TRL 1.16),
run on a stand-in trainer (no model is needed to compute rewards), so the exact keyword
arguments TRL passes (``completion_ids``, ``trainer_state``, ``log_extra``, ``log_metric``,
dataset columns) and the tensor TRL builds from the reply are those of the real library."""

from __future__ import annotations

import math
import types

import pytest
from accelerate import Accelerator
from tests.rewards.conftest import CRITERIA, keyword_policy
from transformers import TrainerState
from trl import GRPOConfig, GRPOTrainer

from assay.judges import make_judge, run_sync
from assay.rewards import RewardScorer, trl_reward_function
from assay.testing import FakeJudgeServer

Q = "I have had a cold for three days. What should I do?"


def stand_in_trainer(tmp_path, policy, logged):
    """A judge on the fake server under ``policy`` and a stand-in GRPOTrainer whose
    ``_log_metric`` / ``_log_completion_extra`` (what TRL passes as ``log_metric`` /
    ``log_extra``) record into ``logged``."""
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}", retry={"max_retries": 0})
        reward = trl_reward_function(RewardScorer(judge, criteria=CRITERIA))
        args = GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False)
        yield types.SimpleNamespace(
            accelerator=Accelerator(cpu=True), args=args, reward_funcs=[reward],
            reward_processing_classes=[None], reward_func_names=[reward.__name__],
            state=TrainerState(), environments=None, async_loop=None,
            _log_completion_extra=lambda column, values: logged.setdefault(column, values),
            _log_metric=lambda name, value: logged.setdefault(name, value))
        run_sync(judge.aclose())


@pytest.fixture
def trainer(tmp_path):
    yield from stand_in_trainer(tmp_path, keyword_policy, {})


@pytest.fixture
def logged():
    return {}


@pytest.fixture
def failing_trainer(tmp_path, logged):
    """The penalty's judge call answers 500 when the answer doubles a dose."""
    def policy(view):
        if "unsafe" in (view.criterion_text or "") and "double" in (view.response_text or "").lower():
            raise RuntimeError("the judge breaks")
        return keyword_policy(view)

    yield from stand_in_trainer(tmp_path, policy, logged)


def test_grpo_trainer_computes_rewards_with_the_adapter_in_conversational_format(trainer):
    prompts = [[{"role": "user", "content": Q}]] * 2
    completions = [[{"role": "assistant", "content": "<think>x</think>Rest and see a doctor."}],
                   [{"role": "assistant", "content": "Double the dose."}]]
    inputs = [{"prompt": p, "completion": c, "ideal": "x"} for p, c in zip(prompts, completions)]
    rewards = GRPOTrainer._calculate_rewards(trainer, inputs, prompts, completions, [[1], [2]])
    assert rewards.tolist() == [[1.0], [0.0]]


def test_grpo_trainer_computes_rewards_in_standard_format_with_a_criteria_column(trainer):
    rest_only = '[{"id": "rest", "text": "Recommends rest and fluids."}]'
    inputs = [{"prompt": Q, "completion": "Rest.", "criteria": None},
              {"prompt": Q, "completion": "See a doctor.", "criteria": rest_only}]
    rewards = GRPOTrainer._calculate_rewards(trainer, inputs, [Q, Q], ["Rest.", "See a doctor."],
                                             [[1], [2]])
    assert rewards.tolist() == [[pytest.approx(2 / 3)], [0.0]]


def test_grpo_trainer_masks_a_failed_sample_and_logs_the_failure_with_log_metric(
        failing_trainer, logged):
    inputs = [{"prompt": Q, "completion": c} for c in ("Rest and see a doctor.", "Double the dose.")]
    rewards = GRPOTrainer._calculate_rewards(failing_trainer, inputs, [Q, Q],
                                             ["Rest and see a doctor.", "Double the dose."],
                                             [[1], [2]])
    assert rewards[0].tolist() == [1.0] and math.isnan(rewards[1].item())
    assert logged["assay/withheld_sample_rate"] == 0.5
    assert logged["assay/failed_calls_per_sample"] == 0.5
    assert logged["assay_failed"][0] == "" and logged["assay_failed"][1].startswith("harm: server_error")
