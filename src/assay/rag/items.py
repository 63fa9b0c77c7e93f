"""RAG conversation items: who said what, what was retrieved for each answer, and the scope.

A :class:`RagItem` is one conversation between a patient (``user``) and a RAG assistant. Each
assistant turn carries the passages retrieved for it (``context``). ``scope`` says whether the
patient's concern lies inside the assistant's knowledge scope (``pathway``, e.g. "cataract
surgery follow-up"); seed 002 §5 makes scope a property of the deployment, not of the question.
``hazard`` names the §5 operating context the item exercises, ``labels`` hold optional human
labels (perceived faithfulness, CF/CR/RA, clinicians' harm / helpfulness / inappropriateness).

The single-turn form of the paper is accepted as shorthand: ``question``, ``answer`` and
``context`` become a two-turn conversation.

Example:
    >>> item = RagItem.model_validate({"id": "19", "scope": "in_scope",
    ...     "question": "when can I start driving", "answer": "When you can read a number plate.",
    ...     "context": ["The DVLA says you can drive again when ..."]})
    >>> [t.role for t in item.conversation], item.graded_turns("last")
    (['user', 'assistant'], [1])
    >>> item.exchange(1).question
    'when can I start driving'
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from assay.errors import InputError, Issue
from assay.judges.pricing import chars_each

Scope = Literal["in_scope", "out_of_scope"]
TurnSelection = Literal["last", "all"]

HAZARD_CONTEXTS: dict[str, str] = {
    "clinical_kb_has_info": "Clinical, in scope, the knowledge source has the information",
    "clinical_kb_lacks_info": "Clinical, in scope, the knowledge source lacks the information",
    "clinical_out_of_scope": "Clinical, out of scope",
    "admin_kb_has_info": "Administrative, the knowledge source has the information",
    "admin_kb_lacks_info": "Administrative, the knowledge source lacks the information",
    "emergency_in_pathway": "Emergency within the pathway's scope",
    "emergency_out_of_pathway": "Emergency outside the pathway's scope",
    "off_topic": "Non-clinical, off-topic discussion",
    "mistranscription": "Question not clear: voice mistranscription",
    "multiple_questions": "Several questions asked at once",
}
"""Seed 002 §5 (Figure 10): the operating contexts a clinical QA agent meets."""

Hazard = Literal[
    "clinical_kb_has_info", "clinical_kb_lacks_info", "clinical_out_of_scope",
    "admin_kb_has_info", "admin_kb_lacks_info", "emergency_in_pathway",
    "emergency_out_of_pathway", "off_topic", "mistranscription", "multiple_questions",
]


class Turn(BaseModel):
    """One turn. Assistant turns carry the passages retrieved for them; a user turn may set the
    ``scope`` and ``should_refuse`` of its question (default: the item's), so one conversation
    can hold in- and out-of-scope questions."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)
    context: list[str] = Field(default_factory=list)
    scope: Scope | None = None
    should_refuse: bool | None = None

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise PydanticCustomError("blank_text", "only whitespace: there is nothing to grade")
        return value

    @field_validator("context")
    @classmethod
    def _no_blank_passage(cls, value: list[str]) -> list[str]:
        blank = [i for i, passage in enumerate(value) if not passage.strip()]
        if blank:
            raise PydanticCustomError("blank_text", "passage {index} is empty or only whitespace",
                                      {"index": blank[0]})
        return value


class HumanLabels(BaseModel):
    """Optional human labels (seed 002 §7): all may be missing."""

    model_config = ConfigDict(extra="forbid")

    pf: bool | None = Field(None, description="Perceived faithfulness (faithful = true).")
    cf: float | None = Field(None, ge=0, le=1, description="Human-applied CF.")
    rf: float | None = Field(None, ge=0, le=1, description="Human-applied RAGAS faithfulness.")
    cr: bool | None = Field(None, description="Context relevant.")
    ra: bool | None = Field(None, description="The assistant refused.")
    harmful: bool | None = None
    helpful: bool | None = None
    inappropriate: Literal["no", "slightly", "yes"] | None = None


class RagItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    scope: Scope
    pathway: str | None = Field(None, description="The assistant's knowledge scope.")
    hazard: Hazard | None = None
    should_refuse: bool | None = Field(
        None, description="Whether a refusal is the safe answer (default: out of scope).")
    conversation: list[Turn] = Field(min_length=2)
    labels: HumanLabels = Field(default_factory=HumanLabels)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _single_turn_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and "conversation" not in data and (
                "question" in data or "answer" in data):
            data = dict(data)
            question, answer = data.pop("question", None), data.pop("answer", None)
            context = data.pop("context", [])
            if isinstance(context, str):
                context = [context]
            data["conversation"] = [{"role": "user", "content": question},
                                    {"role": "assistant", "content": answer, "context": context}]
        return data

    @model_validator(mode="after")
    def _turns_alternate(self) -> RagItem:
        for index, turn in enumerate(self.conversation):
            for name in ("scope", "should_refuse"):
                if turn.role == "assistant" and getattr(turn, name) is not None:
                    raise PydanticCustomError(
                        "rag_turn", "a question's {name} goes on its user turn",
                        {"name": name, "loc": ("conversation", index, name)})
            if turn.role == "user" and turn.context:
                raise PydanticCustomError("rag_turn", "only assistant turns carry retrieved "
                                          "context", {"loc": ("conversation", index, "context")})
            if turn.role == "assistant" and (index == 0 or
                                             self.conversation[index - 1].role != "user"):
                raise PydanticCustomError("rag_turn", "an assistant turn must answer a user turn",
                                          {"loc": ("conversation", index, "role")})
        if self.conversation[-1].role != "assistant":
            raise PydanticCustomError("rag_turn", "the conversation must end with the assistant's "
                                      "answer", {"loc": ("conversation", len(self.conversation) - 1,
                                                         "role")})
        return self

    @property
    def refusal_expected(self) -> bool:
        """Whether refusing is the safe behaviour: ``should_refuse``, else out of scope."""
        return self.should_refuse if self.should_refuse is not None else self.scope == "out_of_scope"

    def turn_scope(self, turn: int) -> Scope:
        """The scope of the question the assistant answers at ``turn`` (its own, else the
        item's)."""
        return self.conversation[turn - 1].scope or self.scope

    def turn_refusal_expected(self, turn: int) -> bool:
        """Whether refusing is safe at ``turn``: the question's ``should_refuse``, else the
        item's, else whether the question is out of scope."""
        question = self.conversation[turn - 1]
        if question.should_refuse is not None:
            return question.should_refuse
        if question.scope is not None:
            return question.scope == "out_of_scope"
        return self.refusal_expected

    def graded_turns(self, selection: TurnSelection = "last") -> list[int]:
        """Indices of the assistant turns to grade: the last one, or all of them."""
        answers = [i for i, t in enumerate(self.conversation) if t.role == "assistant"]
        return answers if selection == "all" else answers[-1:]

    def exchange(self, turn: int, context_tokens: int | None = None) -> Exchange:
        """The patient's message, the answer at ``turn``, its passages, and what came before;
        with ``context_tokens``, the passages together cut to about that many tokens (shared
        equally, about 4 characters a token), for a judge with a small context.

        >>> item = RagItem(id="x", scope="in_scope", conversation=[
        ...     {"role": "user", "content": "Can I drive?"},
        ...     {"role": "assistant", "content": "Wait.", "context": ["a" * 90, "b" * 90]}])
        >>> [len(p) for p in item.exchange(1, context_tokens=20).passages]
        [40, 40]
        """
        answer = self.conversation[turn]
        passages = list(answer.context)
        if context_tokens is not None and passages:
            share = chars_each(context_tokens, len(passages))
            passages = [p[:share] for p in passages]
        return Exchange(question=self.conversation[turn - 1].content, answer=answer.content,
                        passages=passages, history=list(self.conversation[:turn - 1]))


@dataclass(frozen=True)
class Exchange:
    """One graded exchange: the question, the answer, its passages and the earlier turns."""

    question: str
    answer: str
    passages: list[str]
    history: list[Turn]

    @property
    def context(self) -> str:
        """The retrieved passages as one context string (the paper passes the top 3 together)."""
        return "\n\n".join(self.passages)

    def earlier(self) -> list[tuple[str, str]]:
        """The earlier turns as (role, text) pairs."""
        return [(t.role, t.content) for t in self.history]

    def transcript(self) -> str:
        """The earlier turns as ``Patient: ...`` / ``Assistant: ...`` lines ('' if none)."""
        names = {"user": "Patient", "assistant": "Assistant"}
        return "\n".join(f"{names[t.role]}: {t.content}" for t in self.history)


def iter_rag_items(path: str | Path, issues: list[Issue]) -> Iterator[RagItem]:
    """Stream the valid items of a JSONL file; each bad line adds its issues (file, line,
    field) to ``issues``, as do duplicate ids."""
    from pydantic import ValidationError

    from assay.io.errors import issues_from
    from assay.io.jsonl import iter_jsonl

    seen: dict[str, int] = {}
    for line, record in iter_jsonl(path, source=str(path)):
        if isinstance(record, Issue):
            issues.append(record)
            continue
        try:
            item = RagItem.model_validate(record)
        except ValidationError as exc:
            shorthand = isinstance(record, dict) and "conversation" not in record
            issues.extend(issues_from(exc, source=str(path), line=line,
                                      rename=_shorthand_names if shorthand else None))
            continue
        if item.id in seen:
            issues.append(Issue(str(path), line, "id", f"duplicate id {item.id!r} "
                                                      f"(first on line {seen[item.id]})"))
            continue
        seen[item.id] = line
        yield item


_SHORTHAND = {(0, "content"): "question", (1, "content"): "answer", (1, "context"): "context"}


def _shorthand_names(loc: tuple) -> tuple:
    """Name a shorthand item's fields as the file does (``answer``, not ``conversation[1]``)."""
    if len(loc) >= 3 and loc[0] == "conversation" and (loc[1], loc[2]) in _SHORTHAND:
        return (_SHORTHAND[(loc[1], loc[2])], *loc[3:])
    return loc


def read_rag_items(path: str | Path) -> list[RagItem]:
    """Every item of a RAG JSONL file; raises one :class:`InputError` listing all problems.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rag.jsonl"
    >>> _ = p.write_text('{"id": "a", "scope": "inside", "question": "q", "answer": "a"}\\n')
    >>> read_rag_items(p)
    Traceback (most recent call last):
    ...
    assay.errors.InputError: ...rag.jsonl:1: scope: unknown scope "inside", expected 'in_scope' or 'out_of_scope'
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such file"))
    issues: list[Issue] = []
    items = list(iter_rag_items(path, issues))
    if issues:
        raise InputError(issues)
    if not items:
        raise InputError(Issue(str(path), None, None, "no items in the file"))
    return items


def write_rag_items(items: list[RagItem], path: str | Path) -> int:
    """Write items as JSONL (defaults left out). Returns the number written."""
    from assay.io.jsonl import write_jsonl

    return write_jsonl((i.model_dump(mode="json", exclude_defaults=True) for i in items), path)
