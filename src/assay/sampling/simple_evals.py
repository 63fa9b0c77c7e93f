"""openai/simple-evals' samplers: how simple-evals asks the model under test, exactly.

simple-evals samples each model with the sampler its model table (``simple_evals.py``) gives it
(quoted with the samplers in ``tests/data/simple_evals/sampler_request.md``):

* ``ChatCompletionSampler``: its system message first (``_pack_message("system", ...)``), then
  the conversation as it is; ``chat.completions.create(model, messages, temperature,
  max_tokens)`` (temperature 0.5 and max_tokens 1024 by default, 2048 for most entries);
* ``OChatCompletionSampler`` (o1, o3-mini): the conversation alone; ``create(model, messages,
  reasoning_effort)``, the effort sent as ``null`` when the entry sets none;
* ``ResponsesSampler`` (o3, o4-mini, o1-pro): ``responses.create(model, input,
  reasoning={"effort": ...} or None)`` for a reasoning model, else ``(model, input,
  temperature, max_output_tokens)``, a system message going first as a ``developer`` message;
* ``ClaudeCompletionSampler``: ``messages.create(model, system, max_tokens, temperature,
  messages)`` (temperature 0.0, max_tokens 4096), user and assistant turns only.

With ``--protocol simple-evals`` (``assay sample``, ``assay eval``) the model under test is
asked as its table entry asks it, byte for byte (the body as the openai and anthropic SDKs write
it), and simple-evals' grader sees what the sampler sent: the sampler's system message, then the
conversation (``actual_queried_message_list``). A model is found by its table name or its API
model (the first entry of that model, in table order: the plain one, not ``-temp-1`` or
``_high``); a model the table lacks is asked as its usual entries are:
``ChatCompletionSampler(model, system_message=OPENAI_SYSTEM_MESSAGE_API)``, or the class
defaults of ``ClaudeCompletionSampler`` for an Anthropic endpoint.

Example:
    >>> name, sampler = sampler_for("gpt-4.1-2025-04-14")
    >>> name, sampler.kind, sampler.temperature, sampler.max_tokens, sampler.system_message
    ('gpt-4.1', 'chat', 0.5, 2048, 'You are a helpful assistant.')
    >>> sampler_for("o3")[1].request_fields()
    {'model': 'o3-2025-04-16', 'wire': 'openai-responses', 'temperature': None, 'max_tokens': None, 'extra_body': {'reasoning': None}}
    >>> sampler_for("my-local-model")[0] is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from assay.errors import ConfigError

Kind = Literal["chat", "o-chat", "responses", "claude"]

OPENAI_SYSTEM_MESSAGE_API = "You are a helpful assistant."
OPENAI_SYSTEM_MESSAGE_CHATGPT = (
    "You are ChatGPT, a large language model trained by OpenAI, based on the GPT-4 architecture."
    + "\nKnowledge cutoff: 2023-12\nCurrent date: 2024-04-01"
)
CLAUDE_SYSTEM_MESSAGE_LMSYS = (
    "The assistant is Claude, created by Anthropic. The current date is "
    "{currentDateTime}. Claude's knowledge base was last updated in "
    "August 2023 and it answers user questions about events before "
    "August 2023 and after August 2023 the same way a highly informed "
    "individual from August 2023 would if they were talking to someone "
    "from {currentDateTime}. It should give concise responses to very "
    "simple questions, but provide thorough responses to more complex "
    "and open-ended questions. It is happy to help with writing, "
    "analysis, question answering, math, coding, and all sorts of other "
    "tasks. It uses markdown for coding. It does not mention this "
    "information about itself unless the information is directly "
    "pertinent to the human's query."
).format(currentDateTime="2024-04-01")


@dataclass(frozen=True)
class Sampler:
    """One simple-evals sampler: its class (``kind``) and its constructor's arguments."""

    kind: Kind
    model: str
    system_message: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    reasoning_model: bool = False  # ResponsesSampler's

    @property
    def wire(self) -> str:
        """The API the sampler calls (a judge config's ``wire``)."""
        return {"responses": "openai-responses", "claude": "anthropic"}.get(self.kind, "openai")

    @property
    def system_role(self) -> str:
        """The role its system message goes in (``developer`` for the Responses API)."""
        return "developer" if self.kind == "responses" else "system"

    @property
    def sends_sampling(self) -> bool:
        """Whether its request carries temperature and a token limit (not an o-series one)."""
        return self.kind in ("chat", "claude") or (self.kind == "responses"
                                                    and not self.reasoning_model)

    def request_fields(self) -> dict[str, Any]:
        """The judge config fields that make Assay send this sampler's request: the body keys
        a sampler sends beyond the model and messages go in ``extra_body`` where the SDK writes
        them last (``reasoning_effort``, ``reasoning``), so the body's key order is the SDK's."""
        fields: dict[str, Any] = {"model": self.model, "wire": self.wire,
                                  "temperature": self.temperature if self.sends_sampling else None,
                                  "max_tokens": self.max_tokens if self.sends_sampling else None}
        if self.kind == "o-chat":
            fields["extra_body"] = {"reasoning_effort": self.reasoning_effort}
        elif self.kind == "responses" and self.reasoning_model:
            fields["extra_body"] = {"reasoning": {"effort": self.reasoning_effort}
                                    if self.reasoning_effort else None}
        else:
            fields["extra_body"] = {}
        return fields

    def queried(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The message list the sampler sends and hands to the grader
        (``actual_queried_message_list``): its system message first, if it has one."""
        if self.kind == "claude":
            roles = {m.get("role") for m in messages}
            if not roles <= {"user", "assistant"}:
                raise ConfigError("simple-evals' Claude sampler takes user and assistant "
                                  f"messages only, got roles {sorted(str(r) for r in roles)}")
        head = ([{"role": self.system_role, "content": self.system_message}]
                if self.system_message else [])
        return [*head, *(dict(m) for m in messages)]

    def with_overrides(self, *, temperature: float | None = None, max_tokens: int | None = None,
                       reasoning_effort: str | None = None) -> Sampler:
        """The sampler with the user's own settings (then not simple-evals' entry any more)."""
        changes: dict[str, Any] = {}
        if temperature is not None:
            changes["temperature"] = temperature
        if max_tokens is not None:
            changes["max_tokens"] = max_tokens
        if reasoning_effort is not None:
            changes["reasoning_effort"] = reasoning_effort
        return replace(self, **changes)


def _chat(model: str, system_message: str | None = None, temperature: float = 0.5,
          max_tokens: int = 1024) -> Sampler:
    return Sampler("chat", model, system_message, temperature, max_tokens)


def _o_chat(*, reasoning_effort: str | None = None, model: str = "o1-mini") -> Sampler:
    return Sampler("o-chat", model, reasoning_effort=reasoning_effort)


def _responses(model: str = "gpt-4.1", system_message: str | None = None,
               temperature: float = 0.5, max_tokens: int = 1024, reasoning_model: bool = False,
               reasoning_effort: str | None = None) -> Sampler:
    return Sampler("responses", model, system_message, temperature, max_tokens, reasoning_effort,
                   reasoning_model)


def _claude(model: str, system_message: str | None = None, temperature: float = 0.0,
            max_tokens: int = 4096) -> Sampler:
    return Sampler("claude", model, system_message, temperature, max_tokens)


API = OPENAI_SYSTEM_MESSAGE_API
# simple_evals.py's model table, entry for entry (the constructors take the same arguments)
MODELS: dict[str, Sampler] = {
    "o3": _responses(model="o3-2025-04-16", reasoning_model=True),
    "o3-temp-1": _responses(model="o3-2025-04-16", reasoning_model=True, temperature=1.0),
    "o3_high": _responses(model="o3-2025-04-16", reasoning_model=True, reasoning_effort="high"),
    "o3_low": _responses(model="o3-2025-04-16", reasoning_model=True, reasoning_effort="low"),
    "o4-mini": _responses(model="o4-mini-2025-04-16", reasoning_model=True),
    "o4-mini_high": _responses(model="o4-mini-2025-04-16", reasoning_model=True,
                               reasoning_effort="high"),
    "o4-mini_low": _responses(model="o4-mini-2025-04-16", reasoning_model=True,
                              reasoning_effort="low"),
    "o1-pro": _responses(model="o1-pro", reasoning_model=True),
    "o1": _o_chat(model="o1"),
    "o1_high": _o_chat(model="o1", reasoning_effort="high"),
    "o1_low": _o_chat(model="o1", reasoning_effort="low"),
    "o1-preview": _o_chat(model="o1-preview"),
    "o1-mini": _o_chat(model="o1-mini"),
    "o3-mini": _o_chat(model="o3-mini"),
    "o3-mini_high": _o_chat(model="o3-mini", reasoning_effort="high"),
    "o3-mini_low": _o_chat(model="o3-mini", reasoning_effort="low"),
    "gpt-4.1": _chat(model="gpt-4.1-2025-04-14", system_message=API, max_tokens=2048),
    "gpt-4.1-temp-1": _chat(model="gpt-4.1-2025-04-14", system_message=API, max_tokens=2048,
                            temperature=1.0),
    "gpt-4.1-mini": _chat(model="gpt-4.1-mini-2025-04-14", system_message=API, max_tokens=2048),
    "gpt-4.1-nano": _chat(model="gpt-4.1-nano-2025-04-14", system_message=API, max_tokens=2048),
    "gpt-4o": _chat(model="gpt-4o", system_message=API, max_tokens=2048),
    "gpt-4o-2024-11-20": _chat(model="gpt-4o-2024-11-20", system_message=API, max_tokens=2048),
    "gpt-4o-2024-08-06": _chat(model="gpt-4o-2024-08-06", system_message=API, max_tokens=2048),
    "gpt-4o-2024-08-06-temp-1": _chat(model="gpt-4o-2024-08-06", system_message=API,
                                      max_tokens=2048, temperature=1.0),
    "gpt-4o-2024-05-13": _chat(model="gpt-4o-2024-05-13", system_message=API, max_tokens=2048),
    "gpt-4o-mini": _chat(model="gpt-4o-mini-2024-07-18", system_message=API, max_tokens=2048),
    "gpt-4.5-preview": _chat(model="gpt-4.5-preview-2025-02-27", system_message=API,
                             max_tokens=2048),
    "gpt-4-turbo-2024-04-09": _chat(model="gpt-4-turbo-2024-04-09", system_message=API),
    "gpt-4-0613": _chat(model="gpt-4-0613", system_message=API),
    "gpt-3.5-turbo-0125": _chat(model="gpt-3.5-turbo-0125", system_message=API),
    "gpt-3.5-turbo-0125-temp-1": _chat(model="gpt-3.5-turbo-0125", system_message=API,
                                       temperature=1.0),
    "chatgpt-4o-latest": _chat(model="chatgpt-4o-latest",
                               system_message=OPENAI_SYSTEM_MESSAGE_CHATGPT, max_tokens=2048),
    "gpt-4-turbo-2024-04-09_chatgpt": _chat(model="gpt-4-turbo-2024-04-09",
                                            system_message=OPENAI_SYSTEM_MESSAGE_CHATGPT),
    "claude-3-opus-20240229_empty": _claude(model="claude-3-opus-20240229",
                                            system_message=CLAUDE_SYSTEM_MESSAGE_LMSYS),
    "claude-3-7-sonnet-20250219": _claude(model="claude-3-7-sonnet-20250219",
                                          system_message=CLAUDE_SYSTEM_MESSAGE_LMSYS),
    "claude-3-haiku-20240307": _claude(model="claude-3-haiku-20240307"),
}


def sampler_for(model: str, *, wire: str = "openai") -> tuple[str | None, Sampler]:
    """The table entry simple-evals samples ``model`` with: ``(its name, the sampler)``, or
    ``(None, the usual entry's sampler)`` for a model the table lacks (``wire``: the
    endpoint's, ``anthropic`` for Claude's defaults)."""
    if model in MODELS:
        return model, MODELS[model]
    for name, sampler in MODELS.items():  # table order: the plain entry of a model first
        if sampler.model == model:
            return name, sampler
    if wire == "anthropic":
        return None, _claude(model=model)
    return None, _chat(model=model, system_message=OPENAI_SYSTEM_MESSAGE_API)
