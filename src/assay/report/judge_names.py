"""Judges by their short names: the model a judge id names, the whole id where two judges of
a run would share one (the report and the review app show the whole id on hover).

>>> names = short_judge_names(["openai:gpt-4.1-mini", "openai-compatible:judge0@http://127.0.0.1:9/v1",
...                            "vllm:qwen@http://a:1/v1", "ollama:qwen@http://b:2/v1", "mine"])
>>> [names[j] for j in sorted(names)]
['mine', 'ollama:qwen', 'judge0', 'gpt-4.1-mini', 'vllm:qwen']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_URL = re.compile(r"@(?=https?://)")


def short_judge_names(judges: Iterable[str]) -> dict[str, str]:
    """Each judge id → its shortest name that no other judge of ``judges`` shares: the model,
    then ``provider:model``, then the id itself."""
    ids = sorted(set(judges))
    candidates = {judge: _candidates(judge) for judge in ids}
    names: dict[str, str] = {}
    for level in range(3):
        counts = Counter(candidates[j][level] for j in ids if j not in names)
        for judge in ids:
            if judge not in names and (counts[candidates[judge][level]] == 1 or level == 2):
                names[judge] = candidates[judge][level]
    return names


def _candidates(judge: str) -> tuple[str, str, str]:
    provider, sep, rest = judge.partition(":")
    if not sep or not rest:
        return judge, judge, judge
    model = _URL.split(rest, maxsplit=1)[0]
    return model, f"{provider}:{model}", judge
