"""A ``verifiers`` rubric backed by Assay's reward scorer: Health-SCORE rewards in a verifiers
environment, for GRPO (prime-rl, or verifiers' own trainers).

:class:`AssayRubric` is a ``vf.Rubric`` (reward functions with weights) whose reward function,
``health_score_reward`` (weight 1), scores a whole group of rollouts in one batch with a
:class:`~assay.rewards.RewardScorer`: the criteria of the Health-SCORE bank, or those its
relevance selector picks per prompt (selected once per prompt for the whole group), or the
dataset row's own rubric, in ``info["criteria"]`` (a HealthBench row's ``rubrics``, criteria,
or bank ids: :func:`~assay.rewards.criteria_from_label`). Only the final answer is graded (the
text after the last ``</think>``), and the reward is the paper's ±1 reward, normalised as the
scorer says (``minmax`` to [0, 1] by default): the ``assay score --formula reward`` of the same
verdicts. A second function, ``assay_reward_withheld`` (weight 0, a metric), is 1.0 for a
rollout left without a reward.

=================================  ==============================================
verifiers                          Assay
=================================  ==============================================
``prompt`` (messages or text)      the conversation the judge reads
``completion`` (last assistant)    the completion; its final answer is graded
``info["criteria"]``               the row's criteria (else the bank / selector)
``state["reward"]``                the reward (``RewardResult.reward``)
``state["assay_reward"]``          the full result: criteria, met, failed
``state["error"]``                 :class:`RewardWithheld` when a call failed
=================================  ==============================================

**A failed judge call withholds the reward, as verifiers marks a failed rollout.** verifiers
has no "no reward" value: its ``Rubric`` turns a reward function that raises into 0.0 and
sums floats, and a NaN would spread to every advantage of the group. What it does have is the
rollout's ``error`` field: ``Environment`` retries a rollout whose ``state["error"]`` is an
``InfraError`` (``maybe_retry``, with ``max_retries``), ``state_to_output`` carries it into
the rollout's output, and prime-rl's orchestrator reschedules any rollout whose ``error`` is
set and drops the group after its retries, so an errored rollout never reaches the loss. A
sample the scorer leaves without a reward (its ``on_failure`` policy, ``no-reward`` by default:
a criterion call that failed after the judges layer's retries, a call the budget refused, a
failed selection) therefore gets ``state["error"] = RewardWithheld(...)`` (an ``InfraError``),
the reward verifiers gives a failed reward function, 0.0, which is also the floor of the
``minmax`` reward (never its maximum), and ``assay_reward_withheld = 1.0``.

Example::

    import verifiers as vf
    from assay.integrations.verifiers import AssayRubric, healthbench_dataset
    from assay.rewards import build_scorer

    rubric = AssayRubric(build_scorer("openai:gpt-4.1-mini", bank="health-score", select=True))
    env = vf.SingleTurnEnv(dataset=healthbench_dataset("healthbench.jsonl"), rubric=rubric)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import verifiers as vf

from assay.rewards.failures import FailurePolicy, checked_failure_policy
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem, RewardResult, RewardScorer
from assay.rewards.trl import scorer_bank

WITHHELD = "assay_reward_withheld"


class RewardWithheld(vf.InfraError):
    """A rollout left without a reward by a failed judge call (see the module docstring)."""


class AssayRubric(vf.Rubric):
    """A verifiers rubric scoring rollouts with ``scorer`` (see the module docstring).

    ``criteria_key``: the ``info`` key holding a row's own criteria; ``on_failure`` overrides
    the scorer's failure policy; ``weight``: the reward function's weight.
    """

    def __init__(self, scorer: RewardScorer, *, criteria_key: str = "criteria",
                 on_failure: FailurePolicy | None = None, weight: float = 1.0,
                 parser: Any = None) -> None:
        super().__init__(funcs=[self.health_score_reward, self.assay_reward_withheld],
                         weights=[weight, 0.0], parser=parser)
        self.scorer = scorer
        self.criteria_key = criteria_key
        self.on_failure = None if on_failure is None else checked_failure_policy(on_failure)

    async def health_score_reward(self, prompts: list[Any], completions: list[Any],
                                  states: list[Any], infos: list[Any]) -> list[float]:
        """The group's rewards, scored in one batch; a withheld one is 0.0 with its rollout's
        ``error`` set (module docstring)."""
        bank = scorer_bank(self.scorer)
        items = []
        for i, (prompt, completion, info) in enumerate(zip(prompts, completions, infos,
                                                           strict=True)):
            label = info.get(self.criteria_key) if isinstance(info, Mapping) else None
            criteria = criteria_from_label(label, bank, where=f"info[{i}].{self.criteria_key}")
            items.append(RewardItem.of(messages_of(prompt), completion_text(completion),
                                       criteria))
        results = await self.scorer.score(items, on_failure=self.on_failure)
        rewards = []
        for state, result in zip(states, results):
            state["assay_reward"] = result.to_dict()
            if result.reward is None:
                state["error"] = RewardWithheld(_why(result))
            rewards.append(0.0 if result.reward is None else result.reward)
        return rewards

    async def assay_reward_withheld(self, states: list[Any]) -> list[float]:
        """1.0 for a rollout left without a reward (a metric: weight 0)."""
        return [float((s.get("assay_reward") or {}).get("reward") is None) for s in states]

    async def score_rollout(self, state: Any) -> None:
        """One rollout (``independent_scoring``): its group of one, through the same
        functions (verifiers' own ``score_rollout`` takes no group function)."""
        total, metrics = 0.0, {}
        for func, weight in zip(self.funcs, self.weights):
            [value] = await self._call_group_reward_func(func, [state])
            total += value * weight
            metrics[func.__name__] = value
        state["reward"], state["metrics"] = total, metrics

    async def teardown(self) -> None:
        await super().teardown()
        await self.scorer.aclose()


def _why(result: RewardResult) -> str:
    failed = "; ".join(f"{k}: {v}" for k, v in result.failed.items())
    return f"Assay withheld the reward: {failed or 'no criteria to score'}"


def messages_of(prompt: Any) -> list[dict[str, str]]:
    """A verifiers prompt (text, dict messages or ``vf.Message`` objects) as role/content
    messages.

    >>> messages_of("Bee sting?")
    [{'role': 'user', 'content': 'Bee sting?'}]
    """
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [{"role": str(_field(m, "role")), "content": text_of(_field(m, "content"))}
            for m in prompt]


def completion_text(completion: Any) -> str:
    """A completion's text: the string, or the last assistant message's content."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion or [])):
        if _field(message, "role") == "assistant":
            return text_of(_field(message, "content"))
    return ""


def text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of parts.

    >>> text_of([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}])
    'a\\nb'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = [_field(part, "text") for part in content]
    return "\n".join(t for t in texts if isinstance(t, str))


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def healthbench_dataset(path: str | Path) -> Any:
    """A HealthBench JSONL as a verifiers dataset (a ``datasets.Dataset``): ``prompt`` (the
    conversation), ``info["criteria"]`` (the row's rubrics, as JSON) and ``example_id``.
    Pair it with ``AssayRubric`` for instance-specific rewards."""
    from datasets import Dataset

    from assay.io.healthbench import read_examples

    rows = [{"prompt": [{"role": m["role"], "content": m["content"]} for m in row["prompt"]],
             "info": {"criteria": json.dumps(row["rubrics"]), "prompt_id": row["prompt_id"]},
             "example_id": i}
            for i, row in enumerate(read_examples(path))]
    return Dataset.from_list(rows)


__all__: Sequence[str] = ("AssayRubric", "RewardWithheld", "healthbench_dataset")
