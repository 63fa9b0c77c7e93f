"""Distilling one general criterion per cluster with an LLM (the paper's §2.2 step 4, which
it leaves to "a Health-SCORE rubric is proposed for each cluster").

One call per cluster through :class:`assay.jobs.StageCaller` (stage ``bank_distil``): the judge
sees the cluster's member criteria (nearest to the medoid first, with their points) and returns
``{"criterion": ..., "polarity": "positive"|"negative"}``.

Example:
    >>> messages = distil_messages(["Mentions the dose.", "States the dosage."], [5, 3])
    >>> "- [5] Mentions the dose." in messages[-1]["content"]
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.jobs import StageCaller

STAGE = "bank_distil"
VERSION = "bank-distil-1"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "criterion": {"type": "string", "minLength": 1},
        "polarity": {"type": "string", "enum": ["positive", "negative"]},
    },
    "required": ["criterion", "polarity"],
}

SYSTEM = ("You write general grading criteria for health conversations. You do not provide "
          "medical advice.")

PROMPT = """The criteria below were written by physicians for different conversations and were \
grouped together because they check the same kind of thing. Write ONE general criterion that \
captures what they have in common, so that it can grade answers to other conversations too.

Rules:
- One or two sentences, phrased like the members ("The response ...").
- Keep the shared evaluative dimension; drop conversation-specific details (names, doses, \
conditions) unless every member shares them.
- polarity: "positive" if meeting the criterion is desirable, "negative" if it describes an \
undesirable behaviour (the members' points are negative for undesirable behaviours).

# Member criteria ([points] text)
{members}

Return only a JSON object: {{"criterion": "<the general criterion>", "polarity": "positive" or \
"negative"}}"""


def distil_messages(texts: Sequence[str], points: Sequence[float]) -> list[dict[str, str]]:
    members = "\n".join(f"- [{_num(p)}] {' '.join(t.split())}" for t, p in zip(texts, points))
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": PROMPT.format(members=members)}]


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class LLMDistiller:
    """Asks ``caller`` for one criterion per cluster; ``max_members`` bounds the prompt."""

    def __init__(self, caller: StageCaller, *, max_members: int = 20):
        self.caller = caller
        self.max_members = max_members

    async def __call__(self, cluster_id: str, texts: Sequence[str],
                       points: Sequence[float]) -> tuple[str, str]:
        messages = distil_messages(texts[: self.max_members], points[: self.max_members])
        data = await self.caller.ask(STAGE, messages, SCHEMA, item_id=cluster_id,
                                     template_version=VERSION)
        return " ".join(str(data["criterion"]).split()), str(data["polarity"])
