"""The fake server playing the model under test: scripted free-text answers, by model name.

A real provider serves several models at one URL; so does the fake server. A request whose
``model`` is one of the server's ``models`` is answered as free text by that model's
:class:`ModelScript` (no verdict parsing, no JSON), while every other model name is the fake
judge. So one server plays both sides of ``assay eval``::

    FakeJudgeServer(policy="MET", models={"patient-bot": ModelScript(
        answers={"bee sting": "Scrape the stinger out and wash the area."},
        default="Please see a doctor."})
    # model under test: openai-compatible:patient-bot@URL; judge: openai-compatible:fake@URL

How an answer is chosen for a conversation: the first ``answers`` key that equals its last user
message, else the first key that the last user message contains, else ``default`` (a string,
or a callable given the messages), else an answer that quotes the question. A scripted answer
is a string, a mapping ``{"text", "reasoning", "finish_reason"}``, or a list of those: sample
``k`` of a request sent with a seed gets entry ``seed % len(list)`` (so K samples differ, as
``assay sample --n K --seed S`` sends seeds S..S+K-1), and without a seed the entries are taken
in turn.

Example:
    >>> script = ModelScript(answers={"stung": ["Scrape it out.", "Use tweezers."]})
    >>> script.answer([{"role": "user", "content": "I was stung by a bee"}], seed=1).text
    'Use tweezers.'
    >>> script.answer([{"role": "user", "content": "Hello?"}], seed=None).text
    'A fake answer to: Hello?'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError


@dataclass(frozen=True)
class ModelAnswer:
    """One free-text reply: the visible text, any thinking, and why it stopped."""

    text: str
    reasoning: str | None = None
    finish_reason: str = "stop"


@dataclass
class ModelScript:
    """Scripted answers of one fake model under test (see the module docstring)."""

    answers: Mapping[str, Any] = field(default_factory=dict)
    default: str | Callable[[Sequence[Mapping[str, Any]]], str] | None = None
    _turns: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def answer(self, messages: Sequence[Mapping[str, Any]], *, seed: int | None) -> ModelAnswer:
        question = _last_user_text(messages)
        key = next((k for k in self.answers if k == question), None)
        if key is None:
            key = next((k for k in self.answers if k and k in question), None)
        if key is None:
            if callable(self.default):
                return ModelAnswer(self.default(messages))
            if self.default is not None:
                return ModelAnswer(self.default)
            return ModelAnswer(f"A fake answer to: {question[:200]}")
        scripted = self.answers[key]
        if isinstance(scripted, list):
            if seed is None:
                turn = self._turns.get(key, 0)
                self._turns[key] = turn + 1
            else:
                turn = seed
            scripted = scripted[turn % len(scripted)]
        return _as_answer(scripted)


def as_model_scripts(models: Mapping[str, Any] | str | Path | None) -> dict[str, ModelScript]:
    """Model scripts by model name, from scripts, plain mappings ``{answers, default}``, or
    JSON/YAML files: one ``{MODEL: {answers: {...}, default: TEXT}}`` for all, or one script
    file per model."""
    if models is None:
        return {}
    if isinstance(models, (str, Path)):
        models = _load_mapping(models)
    scripts: dict[str, ModelScript] = {}
    for name, script in models.items():
        if isinstance(script, (str, Path)):
            script = _load_mapping(script)
        if isinstance(script, ModelScript):
            scripts[name] = script
        elif isinstance(script, Mapping) and set(script) <= {"answers", "default"}:
            scripts[name] = ModelScript(answers=dict(script.get("answers") or {}),
                                        default=script.get("default"))
        else:
            raise ConfigError(f"model {name!r}: a script is a ModelScript or a mapping with "
                              "'answers' and/or 'default'")
    return scripts


def _load_mapping(path: str | Path) -> dict[str, Any]:
    from assay.io.yaml_json import load_document

    loaded = load_document(path)
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: expected a mapping")
    return loaded


def _as_answer(scripted: Any) -> ModelAnswer:
    if isinstance(scripted, str):
        return ModelAnswer(scripted)
    if isinstance(scripted, Mapping):
        return ModelAnswer(str(scripted.get("text", "")), scripted.get("reasoning"),
                           str(scripted.get("finish_reason", "stop")))
    raise ConfigError(f"a scripted answer is a string or a mapping, not {type(scripted).__name__}")


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""
