"""A reward function for TRL's ``GRPOTrainer(reward_funcs=[...])``.

TRL calls each reward function as ``reward_func(prompts=..., completions=..., **columns)``
(plus ``completion_ids``, ``trainer_state`` and friends in recent versions) and expects one
float per completion, ``None`` meaning "not applicable" (turned into NaN). Both dataset
formats work:

* standard: ``prompts`` and ``completions`` are strings;
* conversational: ``prompts`` are lists of ``{"role", "content"}`` messages and each completion
  is ``[{"role": "assistant", "content": ...}]``.

The dataset column named ``criteria_column`` (default ``criteria``), when present, gives each
row's criteria (see :mod:`assay.rewards.labels`); otherwise the scorer's bank or selector does.

Failures (:mod:`assay.rewards.scorer`): under the default ``no-reward`` policy a sample with a
failed criterion call gets ``None``, which TRL masks (NaN, left out of the group's mean). Each
batch's failures go to TRL's ``log_metric`` (averaged per logging step, next to ``kl``):
``assay/failed_sample_rate``, ``assay/withheld_sample_rate``,
``assay/failed_calls_per_sample``; and to ``log_extra``: the completions table gets an
``assay_failed`` column (what failed, per sample; empty when nothing did).

Example::

    scorer = RewardScorer(make_judge("openai:gpt-4.1-mini"), criteria=selector)
    trainer = GRPOTrainer(model=..., reward_funcs=[trl_reward_function(scorer)], ...)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.judges.sync import run_sync
from assay.rewards.failures import FailurePolicy, batch_failures, checked_failure_policy
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem, RewardResult, RewardScorer


def trl_reward_function(
    scorer: RewardScorer,
    *,
    criteria_column: str = "criteria",
    name: str = "health_score_reward",
    on_failure: FailurePolicy | None = None,
) -> Callable[..., list[float | None]]:
    """``reward_func(prompts, completions, **kwargs) -> list[float | None]`` over ``scorer``;
    ``on_failure`` overrides the scorer's failure policy (module docstring)."""
    policy = None if on_failure is None else checked_failure_policy(on_failure)

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        column = kwargs.get(criteria_column)
        bank = scorer_bank(scorer)
        items = []
        for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
            label = column[i] if column is not None else None
            criteria = criteria_from_label(label, bank, where=f"{criteria_column}[{i}]")
            items.append(RewardItem.of(prompt, completion_text(completion), criteria))
        results = run_sync(scorer.score(items, on_failure=policy))
        report_failures(results, kwargs.get("log_metric"), kwargs.get("log_extra"))
        return [r.reward for r in results]

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


def report_failures(results: Sequence[RewardResult], log_metric: Any, log_extra: Any) -> None:
    """Hand a batch's failures to TRL's ``log_metric(name, value)`` and
    ``log_extra(column, values)`` (recent TRL, e.g. 1.16, passes them to every reward function;
    without them nothing is logged there)."""
    if callable(log_metric):
        for metric, value in batch_failures(results).items():
            log_metric(f"assay/{metric}", value)
    if callable(log_extra):
        log_extra("assay_failed", ["; ".join(f"{k}: {v}" for k, v in r.failed.items())
                                   for r in results])


def completion_text(completion: str | Sequence[Mapping[str, Any]]) -> str:
    """A completion's text: the string itself, or the last assistant message's content."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion)):
        if message.get("role", "assistant") == "assistant":
            return str(message.get("content") or "")
    return ""


def scorer_bank(scorer: RewardScorer):
    if scorer.fixed is not None:
        return scorer.fixed
    selector_bank = getattr(scorer.selector, "bank", None)
    return tuple(selector_bank.criteria) if selector_bank is not None else None
