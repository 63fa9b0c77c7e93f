"""OpenRLHF's remote reward-model protocol (``--remote_rm_url http://HOST:PORT/get_reward``).

OpenRLHF POSTs ``{"query": [...], "prompts": [...], "labels": [...]}``: ``query`` is each
prompt followed by its response, after the chat template; ``prompts`` the templated prompts;
``labels`` the dataset's label column (``--label_key``). It reads ``rewards`` (used for the
advantages), ``scores`` (0–1, for dynamic filtering) and optional ``extra_logs`` from the JSON
reply. The response is ``query`` minus its ``prompt`` prefix; the templated prompt is graded as
one user message (the chat template's markup stays in it). ``labels`` may carry criteria
(:mod:`assay.rewards.labels`).

OpenRLHF needs a number for every sample: one without a reward (a failed criterion call under
the default ``no-reward`` failure policy; no verdict or no criteria under any policy) gets
``missing_reward`` (0.0 by default, the floor of the default ``minmax`` reward) in
``rewards`` and ``scores``, and ``extra_logs`` says so per sample: ``reward_withheld`` (1.0
or 0.0) and ``judge_failures`` (failed calls), which OpenRLHF logs with the batch.

Example::

    payload = {"query": ["Q? A."], "prompts": ["Q?"], "labels": [""]}
    await openrlhf_rewards(scorer, payload)   # {"rewards": [...], "scores": [...], ...}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.errors import InputError, Issue
from assay.rewards.failures import FailurePolicy
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem, RewardResult, RewardScorer
from assay.rewards.trl import scorer_bank


def openrlhf_items(scorer: RewardScorer, payload: Mapping[str, Any]) -> list[RewardItem]:
    """The reward items of one OpenRLHF request; :class:`InputError` names the bad field."""
    queries = payload.get("query")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise InputError(Issue(None, None, "query", "expected a list of strings (prompt + response)"))
    prompts = payload.get("prompts")
    if prompts is None:
        raise InputError(Issue(None, None, "prompts", "required: the templated prompts, to split "
                               "each query into prompt and response"))
    labels = payload.get("labels") or [None] * len(queries)
    if len(prompts) != len(queries) or len(labels) != len(queries):
        raise InputError(Issue(None, None, "prompts", f"{len(queries)} queries but "
                               f"{len(prompts)} prompts and {len(labels)} labels"))
    bank = scorer_bank(scorer)
    items = []
    for i, (query, prompt, label) in enumerate(zip(queries, prompts, labels)):
        if not isinstance(prompt, str):
            raise InputError(Issue(None, None, f"prompts[{i}]", "expected a string"))
        response = query.removeprefix(prompt)
        items.append(RewardItem.of(prompt, response,
                                   criteria_from_label(label, bank, where=f"labels[{i}]")))
    return items


async def openrlhf_rewards(scorer: RewardScorer, payload: Mapping[str, Any], *,
                           missing_reward: float = 0.0,
                           on_failure: FailurePolicy | None = None) -> dict[str, Any]:
    """The JSON reply to one OpenRLHF request; ``on_failure`` overrides the scorer's policy."""
    results = await scorer.score(openrlhf_items(scorer, payload), on_failure=on_failure)
    return openrlhf_reply(results, missing_reward)


def openrlhf_reply(results: Sequence[RewardResult], missing_reward: float = 0.0) -> dict[str, Any]:
    """OpenRLHF's reply for scored results: ``rewards``, ``scores`` (clipped to 0-1) and
    ``extra_logs`` (module docstring).

    >>> openrlhf_reply([RewardResult(None, 0.0, "", ["a"], failed={"a": "500"})])["extra_logs"]
    {'criteria': [1.0], 'judge_failures': [1.0], 'reward_withheld': [1.0]}
    """
    rewards = [r.reward if r.reward is not None else missing_reward for r in results]
    return {"rewards": rewards,
            "scores": [min(1.0, max(0.0, r)) for r in rewards],
            "extra_logs": {"criteria": [float(len(r.criteria)) for r in results],
                           "judge_failures": [float(len(r.failed)) for r in results],
                           "reward_withheld": [float(r.reward is None) for r in results]}}
