"""An item to grade: the conversation, the response, and what the judge may compare against.

``messages`` hold the conversation that led to the response; a single ``prompt`` string is
accepted as shorthand for one user message. ``context`` holds retrieved passages (RAG), and
``reference`` an ideal answer, ``health_memory`` the user's own health data (see
:mod:`assay.health_memory`). ``rubric`` is set when the item carries its own rubric, as
every HealthBench example does.

Example:
    >>> item = Item(id="q1", prompt="I was stung by a bee. What now?", response="Scrape it out.")
    >>> item.messages[0].role, item.prompt
    ('user', 'I was stung by a bee. What now?')
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.health_memory import HealthMemory
from assay.rubric.rubric import Rubric

Role = Literal["system", "developer", "user", "assistant", "tool"]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str


class Passage(BaseModel):
    """A retrieved context passage."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    id: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    response: str | None = Field(default=None, description="The answer to grade.")
    context: list[Passage] = Field(default_factory=list)
    reference: str | None = Field(default=None, description="An ideal answer.")
    rubric: Rubric | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    health_memory: HealthMemory | None = Field(
        default=None, description="The user's profile, conditions, medications, labs, wearables.")

    @model_validator(mode="before")
    @classmethod
    def _prompt_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and "prompt" in data and "messages" not in data:
            data = dict(data)
            prompt = data.pop("prompt")
            data["messages"] = (
                [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
            )
        return data

    @property
    def prompt(self) -> str:
        """The last user message: what the response answers."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return self.messages[-1].content
