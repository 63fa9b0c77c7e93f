"""verl's custom reward function: ``compute_score(data_source, solution_str, ground_truth,
extra_info)``.

verl's reward managers call ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...)`` per sample (the naive manager) or ``compute_score(data_sources=...,
solution_strs=..., ground_truths=..., extra_infos=...)`` for a batch (the batch manager), and
read a float or a dict with the reward under ``"score"`` (the other keys go to verl's
``reward_extra_info``, logged with the batch). ``solution_str`` is the decoded response only, so the prompt must travel in
``extra_info["prompt"]`` (a string or a list of messages: put it there when preparing the
parquet). ``ground_truth`` may carry the criteria (:mod:`assay.rewards.labels`) or be empty
(the scorer's bank or selector decides).

Two ways in:

* :func:`verl_reward_functions` wraps a :class:`RewardScorer` you built;
* the module-level :func:`compute_score` / :func:`compute_score_batch`, for verl's
  ``custom_reward_function.path`` (this file) and ``.name``, build their scorer once from the
  environment: ``ASSAY_REWARD_JUDGE`` (a judge spec, required), ``ASSAY_REWARD_BANK``
  (``health-score`` by default, or a bank file), ``ASSAY_REWARD_SELECT`` (``1``: per-prompt
  selection, cached in ``ASSAY_REWARD_STORE``, default ``assay-reward-calls.sqlite``),
  ``ASSAY_REWARD_CACHE`` (a judge response cache file) and ``ASSAY_REWARD_ON_FAILURE`` (the
  failure policy, default ``no-reward``).

Each sample's score is a dict (verl's reward managers take ``"score"`` and log the rest)::

    {"score": 0.75, "reward_withheld": 0.0, "judge_failures": 0.0, "criteria": 4.0}

verl needs a number for every sample, so a sample without a reward (under the default
``no-reward`` policy, any failed criterion call; under every policy, no verdict at all or no
criteria) scores ``missing_reward`` (0.0 by default: the floor of the default ``minmax``
reward, so a failure never pays more than the worst answer) with ``reward_withheld: 1.0``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.errors import ConfigError, InputError, Issue
from assay.judges.sync import run_sync
from assay.rewards.failures import FailurePolicy, checked_failure_policy
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem, RewardResult, RewardScorer
from assay.rewards.trl import scorer_bank

Score = dict[str, float]


def verl_reward_functions(
    scorer: RewardScorer, *, missing_reward: float = 0.0,
    on_failure: FailurePolicy | None = None,
) -> tuple[Callable[..., Score], Callable[..., list[Score]]]:
    """``(compute_score, compute_score_batch)`` over ``scorer``; ``on_failure`` overrides the
    scorer's failure policy, ``missing_reward`` is the score of a sample without a reward."""
    policy = None if on_failure is None else checked_failure_policy(on_failure)

    def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                            ground_truths: Sequence[Any], extra_infos: Sequence[Any] | None = None,
                            **kwargs: Any) -> list[Score]:
        extra = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
        bank = scorer_bank(scorer)
        items = [RewardItem.of(_prompt(info, i), solution,
                               criteria_from_label(truth, bank, where=f"ground_truth[{i}]"))
                 for i, (solution, truth, info) in enumerate(
                     zip(solution_strs, ground_truths, extra, strict=True))]
        results = run_sync(scorer.score(items, on_failure=policy))
        return [verl_score(r, missing_reward) for r in results]

    def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                      extra_info: Any = None, **kwargs: Any) -> Score:
        return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]

    return compute_score, compute_score_batch


def verl_score(result: RewardResult, missing_reward: float = 0.0) -> Score:
    """One sample's dict for verl (module docstring).

    >>> verl_score(RewardResult(None, 0.0, "", ["a", "b"], failed={"b": "server_error"}))
    {'score': 0.0, 'reward_withheld': 1.0, 'judge_failures': 1.0, 'criteria': 2.0}
    """
    return {"score": result.reward if result.reward is not None else missing_reward,
            "reward_withheld": float(result.reward is None),
            "judge_failures": float(len(result.failed)),
            "criteria": float(len(result.criteria))}


def _prompt(extra_info: Any, index: int) -> Any:
    prompt = extra_info.get("prompt") if isinstance(extra_info, Mapping) else None
    if not prompt:
        raise InputError(Issue(None, None, f"extra_info[{index}].prompt", "verl passes only the "
                               "response: put the prompt (a string or messages) in extra_info"))
    return [dict(m) for m in prompt] if not isinstance(prompt, str) else prompt


_lock = threading.Lock()
_functions: tuple[Callable[..., Score], Callable[..., list[Score]]] | None = None
_scorer: RewardScorer | None = None


def reset() -> None:
    """Close the environment-built scorer's judge; the next call reads the environment again."""
    global _functions, _scorer
    with _lock:
        if _scorer is not None:
            run_sync(_scorer.aclose())
        _functions, _scorer = None, None


def _from_env() -> tuple[Callable[..., Score], Callable[..., list[Score]]]:
    global _functions, _scorer
    with _lock:
        if _functions is None:
            spec = os.environ.get("ASSAY_REWARD_JUDGE")
            if not spec:
                raise ConfigError("set ASSAY_REWARD_JUDGE to a judge spec (e.g. "
                                  "vllm:Qwen/Qwen3-8B) to use assay.rewards.verl.compute_score")
            from assay.rewards.setup import build_scorer

            scorer = build_scorer(
                spec, bank=os.environ.get("ASSAY_REWARD_BANK", "health-score"),
                select=os.environ.get("ASSAY_REWARD_SELECT", "0") == "1",
                store=os.environ.get("ASSAY_REWARD_STORE", "assay-reward-calls.sqlite"),
                cache=os.environ.get("ASSAY_REWARD_CACHE"),
                on_failure=os.environ.get("ASSAY_REWARD_ON_FAILURE", "no-reward"))
            _functions, _scorer = verl_reward_functions(scorer), scorer
        return _functions


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: Any = None, **kwargs: Any) -> Score:
    """verl's per-sample signature, configured from the environment (module docstring)."""
    return _from_env()[0](data_source, solution_str, ground_truth, extra_info)


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any], extra_infos: Sequence[Any] | None = None,
                        **kwargs: Any) -> list[Score]:
    """verl's batch signature, configured from the environment (module docstring)."""
    return _from_env()[1](data_sources, solution_strs, ground_truths, extra_infos)
