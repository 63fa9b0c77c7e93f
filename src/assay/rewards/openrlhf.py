"""OpenRLHF's remote reward-model protocol (``--remote_rm_url http://HOST:PORT/get_reward``).

OpenRLHF POSTs ``{"query": [...], "prompts": [...], "labels": [...]}``: ``query`` is each
prompt followed by its response, after the chat template; ``prompts`` the templated prompts;
``labels`` the dataset's label column (``--label_key``). It reads ``rewards`` (used for the
advantages), ``scores`` (0–1, for dynamic filtering) and optional ``extra_logs`` from the JSON
reply. The response is ``query`` minus its ``prompt`` prefix; a query that does not start with
its prompt is an error (grading it whole would reward the prompt's text). The templated prompt
is graded as one user message (the chat template's markup stays in it). ``labels`` may carry
criteria (:mod:`assay.rewards.labels`).

Older OpenRLHF sent ``{"query": [...]}`` alone: each query is then split after its last
assistant-turn marker of a known chat template (:data:`ASSISTANT_MARKERS`: ChatML, Llama 2 and
3, Mistral, Gemma, Phi-3, Zephyr, DeepSeek); a query without one is an error.

OpenRLHF needs a number for every sample: one without a reward (a failed criterion call under
the default ``no-reward`` failure policy; no verdict or no criteria under any policy) gets
``missing_reward`` (0.0 by default, the floor of the default ``minmax`` reward) in
``rewards`` and ``scores``, and ``extra_logs`` says so per sample: ``reward_withheld`` (1.0
or 0.0), ``judge_failures`` (failed calls) and ``oversized`` (1.0 for a sample over grading's
size limits, never sent to a judge; the batch's other samples are scored), which OpenRLHF
logs with the batch.

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

#: Where the assistant's turn starts in the chat templates of common models (ChatML: Qwen and
#: others; Llama 3; Llama 2 and Mistral; Gemma; Phi-3 and Zephyr; DeepSeek V3).
ASSISTANT_MARKERS = ("<|im_start|>assistant\n", "<|start_header_id|>assistant<|end_header_id|>\n\n",
                     "[/INST]", "<start_of_turn>model\n", "<|assistant|>\n", "<|assistant|>",
                     "<\uff5cAssistant\uff5c>")


def openrlhf_items(scorer: RewardScorer, payload: Mapping[str, Any]) -> list[RewardItem]:
    """The reward items of one OpenRLHF request; :class:`InputError` names every bad field."""
    if not isinstance(payload, Mapping):
        raise InputError(Issue(None, None, None, 'expected {"query": [...], "prompts": [...], '
                               '"labels": [...]}'))
    queries = payload.get("query")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise InputError(Issue(None, None, "query", "expected a list of strings (prompt + response)"))
    prompts = payload.get("prompts")
    if prompts is None:  # OpenRLHF before prompts were sent: {"query": [...]} only
        prompts = [_templated_prompt(query) for query in queries]
        unsplit = [Issue(None, None, f"query[{i}]", "no prompts were sent and no assistant-turn "
                         "marker of a known chat template was found to split the query into "
                         "prompt and response: send prompts (current OpenRLHF does)")
                   for i, prompt in enumerate(prompts) if prompt is None]
        if unsplit:
            raise InputError(unsplit)
    labels = payload.get("labels")
    if labels is None:
        labels = [None] * len(queries)
    issues = [Issue(None, None, name, f"expected a list of {len(queries)} (one per query), got "
                    f"{len(value) if isinstance(value, list) else type(value).__name__}")
              for name, value in (("prompts", prompts), ("labels", labels))
              if not isinstance(value, list) or len(value) != len(queries)]
    if issues:
        raise InputError(issues)
    bank = scorer_bank(scorer)
    items = []
    for i, (query, prompt, label) in enumerate(zip(queries, prompts, labels)):
        if not isinstance(prompt, str) or not prompt:
            issues.append(Issue(None, None, f"prompts[{i}]", "expected a non-empty string"))
            continue
        if not query.startswith(prompt):  # grading the whole query would reward the prompt
            issues.append(Issue(None, None, f"query[{i}]", f"does not start with prompts[{i}]: "
                                "cannot tell the response from the prompt (padding or a BOS "
                                "token decoded before it?)"))
            continue
        try:
            criteria = criteria_from_label(label, bank, where=f"labels[{i}]")
        except InputError as exc:
            issues += exc.issues
            continue
        items.append(RewardItem.of(prompt, query[len(prompt):], criteria))
    if issues:
        raise InputError(issues)
    return items


def _templated_prompt(query: str) -> str | None:
    """The prompt part of a templated ``query`` (prompt + response): everything up to the end of
    the last assistant-turn marker of a known chat template (:data:`ASSISTANT_MARKERS`), or
    None when it has none.

    >>> _templated_prompt("<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\nHello")
    '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    cut = max((query.rfind(marker) + len(marker) for marker in ASSISTANT_MARKERS
               if marker in query), default=-1)
    return query[:cut] if cut >= 0 else None


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
    {'criteria': [1.0], 'judge_failures': [1.0], 'reward_withheld': [1.0], 'oversized': [0.0]}
    """
    rewards = [r.reward if r.reward is not None else missing_reward for r in results]
    return {"rewards": rewards,
            "scores": [min(1.0, max(0.0, r)) for r in rewards],
            "extra_logs": {"criteria": [float(len(r.criteria)) for r in results],
                           "judge_failures": [float(len(r.failed)) for r in results],
                           "reward_withheld": [float(r.reward is None) for r in results],
                           "oversized": [float("input" in r.failed) for r in results]}}
