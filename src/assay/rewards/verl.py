"""verl's custom reward function: ``compute_score(data_source, solution_str, ground_truth,
extra_info)``.

verl's reward managers call ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...)`` per sample (the naive manager) or ``compute_score(data_sources=...,
solution_strs=..., ground_truths=..., extra_infos=...)`` for a batch (the batch manager), and
read a float. ``solution_str`` is the decoded response only, so the prompt must travel in
``extra_info["prompt"]`` (a string or a list of messages: put it there when preparing the
parquet). ``ground_truth`` may carry the criteria (:mod:`assay.rewards.labels`) or be empty
(the scorer's bank or selector decides).

Two ways in:

* :func:`verl_reward_functions` wraps a :class:`RewardScorer` you built;
* the module-level :func:`compute_score` / :func:`compute_score_batch`, for verl's
  ``custom_reward_function.path`` (this file) and ``.name``, build their scorer once from the
  environment: ``ASSAY_REWARD_JUDGE`` (a judge spec, required), ``ASSAY_REWARD_BANK``
  (``health-score`` by default, or a bank file), ``ASSAY_REWARD_SELECT`` (``1``: per-prompt
  selection, cached in ``ASSAY_REWARD_STORE``, default ``assay-reward-calls.sqlite``), and
  ``ASSAY_REWARD_CACHE`` (a judge response cache file).

A sample that cannot be scored gets ``missing_reward`` (0.0).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.errors import ConfigError, InputError, Issue
from assay.judges.sync import run_sync
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem, RewardScorer
from assay.rewards.trl import scorer_bank


def verl_reward_functions(
    scorer: RewardScorer, *, missing_reward: float = 0.0
) -> tuple[Callable[..., float], Callable[..., list[float]]]:
    """``(compute_score, compute_score_batch)`` over ``scorer``."""

    def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                            ground_truths: Sequence[Any], extra_infos: Sequence[Any] | None = None,
                            **kwargs: Any) -> list[float]:
        extra = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
        bank = scorer_bank(scorer)
        items = [RewardItem.of(_prompt(info, i), solution,
                               criteria_from_label(truth, bank, where=f"ground_truth[{i}]"))
                 for i, (solution, truth, info) in enumerate(
                     zip(solution_strs, ground_truths, extra, strict=True))]
        results = run_sync(scorer.score(items))
        return [r.reward if r.reward is not None else missing_reward for r in results]

    def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                      extra_info: Any = None, **kwargs: Any) -> float:
        return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]

    return compute_score, compute_score_batch


def _prompt(extra_info: Any, index: int) -> Any:
    prompt = extra_info.get("prompt") if isinstance(extra_info, Mapping) else None
    if not prompt:
        raise InputError(Issue(None, None, f"extra_info[{index}].prompt", "verl passes only the "
                               "response: put the prompt (a string or messages) in extra_info"))
    return [dict(m) for m in prompt] if not isinstance(prompt, str) else prompt


_lock = threading.Lock()
_functions: tuple[Callable[..., float], Callable[..., list[float]]] | None = None
_scorer: RewardScorer | None = None


def reset() -> None:
    """Close the environment-built scorer's judge; the next call reads the environment again."""
    global _functions, _scorer
    with _lock:
        if _scorer is not None:
            run_sync(_scorer.aclose())
        _functions, _scorer = None, None


def _from_env() -> tuple[Callable[..., float], Callable[..., list[float]]]:
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
                cache=os.environ.get("ASSAY_REWARD_CACHE"))
            _functions, _scorer = verl_reward_functions(scorer), scorer
        return _functions


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: Any = None, **kwargs: Any) -> float:
    """verl's per-sample signature, configured from the environment (module docstring)."""
    return _from_env()[0](data_source, solution_str, ground_truth, extra_info)


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any], extra_infos: Sequence[Any] | None = None,
                        **kwargs: Any) -> list[float]:
    """verl's batch signature, configured from the environment (module docstring)."""
    return _from_env()[1](data_sources, solution_strs, ground_truths, extra_infos)
