"""Rubric rewards for RL (Health-SCORE, seed 004): one batched scorer, thin adapters.

* :class:`RewardScorer` — batches of (prompt, completion) → the paper's ±1 reward, through the
  judges layer (cache, limits, retries, budget), criteria from a bank, a per-prompt selector or
  the sample itself.
* :func:`trl_reward_function` — TRL ``GRPOTrainer`` ``reward_funcs``.
* :func:`verl_reward_functions` / :mod:`assay.rewards.verl` — verl's ``compute_score``.
* :mod:`assay.rewards.server` — ``assay serve``: HTTP rewards, including OpenRLHF's remote
  reward-model protocol (``POST /get_reward``).

A sample with a failed criterion call gets no reward unless another ``on_failure`` policy is
chosen (:data:`FAILURE_POLICIES`; see :mod:`assay.rewards.scorer`).

Example::

    scorer = build_scorer("vllm:Qwen/Qwen3-8B", bank="health-score", select=True)
    reward = trl_reward_function(scorer)
    reward(prompts=["Summarise these labs: ..."], completions=["<think>…</think>Summary: …"])
"""

from assay.rewards.failures import FAILURE_POLICIES, FailurePolicy
from assay.rewards.labels import criteria_from_label
from assay.rewards.openrlhf import openrlhf_rewards
from assay.rewards.scorer import RewardItem, RewardResult, RewardScorer, final_answer
from assay.rewards.setup import build_scorer
from assay.rewards.trl import trl_reward_function
from assay.rewards.verl import verl_reward_functions

__all__ = [
    "FAILURE_POLICIES",
    "FailurePolicy",
    "RewardItem",
    "RewardResult",
    "RewardScorer",
    "build_scorer",
    "criteria_from_label",
    "final_answer",
    "openrlhf_rewards",
    "trl_reward_function",
    "verl_reward_functions",
]
