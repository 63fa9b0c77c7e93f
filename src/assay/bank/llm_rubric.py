"""Health-SCORE's LLM-Generated baseline (seed 004 §4.2, Table 2): a model writes a rubric for
each prompt, and that rubric is the reward's criteria (the paper used GPT-4.1, ~7.8 criteria).

The paper gives no generation prompt; :data:`PROMPT` is Assay's, following the only thing the
paper says: the model is asked "to generate a list of appropriate rubrics in natural language"
for the user prompt. Each criterion is desirable (weight +1) or undesirable (−1: met means
the response did the bad thing); the paper gives no polarity or points. Every generation is a
traced call (stage ``llm_rubric``) in a :class:`~assay.jobs.CallStore`, so a prompt's rubric
is written once: ``assay bank llm-rubrics`` can write them before training or an eval, and
``assay serve --bank llm-generated --store S`` reuses them at reward time. A reply with no
usable criterion is an error (the prompt gets no reward), never an empty rubric.

Example::

    writer = LlmRubricWriter(StageCaller(make_judge("openai:gpt-4.1"), CallStore.open("s.sqlite")))
    scorer = RewardScorer(judge, criteria=writer)        # or build_scorer(..., bank="llm-generated")
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from assay.bank.selection import CriteriaSelection, prompt_key
from assay.errors import AssayError
from assay.in_flight import shared
from assay.jobs import StageCaller, messages_of
from assay.rubric import Criterion, Provenance, Rubric

STAGE = "llm_rubric"
MAX_CRITERIA = 20

SYSTEM = "You write grading rubrics for responses to health conversations."
PROMPT = """Generate a list of appropriate rubrics in natural language for judging the assistant's next response to the conversation below.

Each rubric item is one criterion, specific to this conversation and checkable from the response alone. Mark it desirable if a good response should satisfy it, or undesirable if it describes something a response should not do. Write between 5 and 10 items.

<conversation>
{conversation}
</conversation>

Reply with a JSON object: {{"rubrics": [{{"criterion": "...", "desirable": true}}, ...]}}."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"rubrics": {"type": "array", "maxItems": 20, "items": {  # asked: 5 to 10
        "type": "object",
        "properties": {"criterion": {"type": "string"}, "desirable": {"type": "boolean"}},
        "required": ["criterion", "desirable"], "additionalProperties": False}}},
    "required": ["rubrics"], "additionalProperties": False,
}
VERSION = "llm-rubric:" + hashlib.sha256((SYSTEM + PROMPT).encode()).hexdigest()[:12]


class EmptyRubric(AssayError):
    """The generated rubric has no usable criterion."""


def generation_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The generation call for one conversation (the prompt, without any response).

    >>> text = generation_messages([{"role": "user", "content": "Is 168 LDL bad?"}])[1]["content"]
    >>> "user: Is 168 LDL bad?" in text, text.endswith('"desirable": true}, ...]}.')
    (True, True)
    """
    conversation = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
    return messages_of(SYSTEM, PROMPT.format(conversation=conversation))


def criteria_of(reply: Mapping[str, Any], *, max_criteria: int = MAX_CRITERIA) -> list[Criterion]:
    """The criteria of a generation reply: blank and repeated texts dropped, at most
    ``max_criteria``; ids ``llm-01``, ``llm-02``, ... in the reply's order.

    >>> [(c.id, c.text, c.weight) for c in criteria_of({"rubrics": [
    ...     {"criterion": "Advises seeing a doctor.", "desirable": True},
    ...     {"criterion": " ", "desirable": True},
    ...     {"criterion": "Gives a definitive diagnosis.", "desirable": False}]})]
    [('llm-01', 'Advises seeing a doctor.', 1.0), ('llm-02', 'Gives a definitive diagnosis.', -1.0)]
    """
    out: list[Criterion] = []
    seen: set[str] = set()
    for entry in reply.get("rubrics") or []:
        text = " ".join(str(entry.get("criterion") or "").split())
        if not text or text.lower() in seen or len(out) == max_criteria:
            continue
        seen.add(text.lower())
        out.append(Criterion(id=f"llm-{len(out) + 1:02d}", text=text,
                             weight=1.0 if entry.get("desirable", True) else -1.0,
                             provenance=Provenance(source="generated", stage=STAGE,
                                                   note="Health-SCORE LLM-Generated baseline")))
    return out


class LlmRubricWriter:
    """A criteria source for :class:`~assay.rewards.RewardScorer`: one generated rubric per
    distinct prompt (module docstring), kept in memory and in the caller's call store."""

    bank = None  # no bank: every prompt's criteria are its own

    def __init__(self, caller: StageCaller, *, max_criteria: int = MAX_CRITERIA):
        self.caller = caller
        self.max_criteria = max_criteria
        self._done: dict[str, CriteriaSelection] = {}
        self._pending: dict[str, asyncio.Future[CriteriaSelection]] = {}
        self.calls_saved = 0

    @property
    def settings_key(self) -> str:
        """A digest of what a generated rubric depends on besides the prompt."""
        payload = f"{VERSION}\x00{self.caller.model}\x00{self.max_criteria}"
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    async def select(self, messages: Sequence[Mapping[str, Any]], *,
                     key: str | None = None) -> CriteriaSelection:
        """The generated rubric of one conversation; raises on a failed or empty generation."""
        pkey = key or prompt_key(messages)
        if pkey in self._done:
            self.calls_saved += 1
            return self._done[pkey]
        if pkey in self._pending:  # the same prompt is being written right now (a GRPO group)
            self.calls_saved += 1
        selection = await shared(self._pending, pkey, lambda: self._write(messages, pkey))
        self._done[pkey] = selection
        return selection

    async def _write(self, messages: Sequence[Mapping[str, Any]], pkey: str) -> CriteriaSelection:
        reply = await self.caller.ask(STAGE, generation_messages(messages), SCHEMA,
                                      item_id=pkey, template_version=VERSION)
        criteria = criteria_of(reply, max_criteria=self.max_criteria)
        if not criteria:
            raise EmptyRubric(f"prompt {pkey}: the generated rubric has no criterion")
        return CriteriaSelection(pkey, tuple(criteria), {}, threshold=0)


def generated_rubric(item_id: str, selection: CriteriaSelection, model: str) -> Rubric:
    """An item's generated rubric, for ``assay eval`` / ``assay grade`` (items with their own);
    a rubric of undesirable criteria only is refused (nothing to pass), as any rubric's is."""
    return Rubric(id=f"llm-generated:{item_id}", criteria=list(selection.criteria),
                  version=VERSION, metadata={"generated": {"method": "llm-generated",
                                                           "model": model}})
