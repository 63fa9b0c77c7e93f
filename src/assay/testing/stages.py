"""Scripted replies for the stages of model pipelines (generation, routing, RAG metrics, ...).

A grading request is answered by a verdict :mod:`policy <assay.testing.policies>`; every other
kind of call — a generation stage, a router, a CIA verifier, a RAG metric — is answered from a
:class:`StageScript`. A request belongs to stage ``NAME`` when its structured-output schema is
named ``NAME`` (OpenAI ``response_format.json_schema.name``, Anthropic ``tools[0].name``), which
is how :class:`assay.judges.JudgeRequest` sends its ``schema_name``.

A stage's reply can be:

* a ``dict`` (sent as its JSON) or a ``str`` (sent verbatim: use it for malformed replies);
* a ``list`` of replies, used in turn; the last one repeats (e.g. ``["not json", {...}]`` to
  test a re-ask);
* ``{"by_prompt": [[SUBSTRING, REPLY], ...], "default": REPLY}``: the first entry whose
  substring occurs in the prompt text, else the default (handy in fixture files);
* a callable ``(StageRequest) -> dict | str``;
* ``{"rate_unlisted": VALUE, ...}`` around any of these, for the tree router's ``route_tree``
  stage: the reply rates the nodes it lists, and every other node the prompt lists
  (``ID:x, Taxonomy: ...`` rows) is rated ``VALUE`` — a fixture's way of writing a model that
  rates every node it is shown while naming only the relevant ones.

Example:
    >>> script = StageScript({"route": {"queries": ["aspirin dose"]},
    ...                       "facts": lambda req: {"n": len(req.text)}})
    >>> script.answer(StageRequest("route", "prompt", None, {}, 0))
    '{"queries":["aspirin dose"]}'
    >>> script.answer(StageRequest("facts", "four", None, {}, 0))
    '{"n":4}'
    >>> "missing" in script
    False
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from assay.errors import InputError, Issue

Reply = Any  # dict | str | list | {"by_prompt": ..., "default": ...} | Callable[[StageRequest], Any]


@dataclass(frozen=True)
class StageRequest:
    """What a scripted stage reply sees of one request."""

    stage: str
    text: str
    schema: dict[str, Any] | None
    body: dict[str, Any] = field(repr=False)
    n: int
    """How many earlier requests this stage has answered (0 for the first)."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])


class StageScript:
    """Replies per stage name. Thread-safe; counts the requests of each stage."""

    def __init__(self, replies: Mapping[str, Reply] | None = None):
        self._replies: dict[str, Reply] = dict(replies or {})
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path) -> StageScript:
        """Read a JSON or YAML mapping ``{stage: reply}`` (no callables, of course)."""
        from assay.io.yaml_json import load_document

        data = load_document(path)
        if not isinstance(data, dict):
            raise InputError(Issue(str(path), None, None, "a stage script is a mapping {stage: reply}"))
        return cls(data)

    def __contains__(self, stage: object) -> bool:
        return stage in self._replies

    def __setitem__(self, stage: str, reply: Reply) -> None:
        self._replies[stage] = reply

    @property
    def stages(self) -> list[str]:
        return list(self._replies)

    def count(self, stage: str) -> int:
        """How many requests of ``stage`` have been answered."""
        return self._counts.get(stage, 0)

    def next_request_number(self, stage: str) -> int:
        with self._lock:
            n = self._counts.get(stage, 0)
            self._counts[stage] = n + 1
        return n

    def answer(self, request: StageRequest) -> str:
        """The reply text for ``request``."""
        reply = _resolve(self._replies[request.stage], request)
        return reply if isinstance(reply, str) else orjson.dumps(reply).decode()


def _resolve(reply: Reply, request: StageRequest) -> Any:
    if isinstance(reply, dict) and "rate_unlisted" in reply:
        inner = {k: v for k, v in reply.items() if k != "rate_unlisted"}
        return _rate_unlisted(_resolve(inner, request), request.text, reply["rate_unlisted"])
    if callable(reply):
        return _resolve(reply(request), request)
    if isinstance(reply, list):
        if not reply:
            return {}
        return _resolve(reply[min(request.n, len(reply) - 1)], request)
    if isinstance(reply, dict) and "by_prompt" in reply:
        for substring, choice in reply["by_prompt"]:
            if substring in request.text:
                return _resolve(choice, request)
        return _resolve(reply.get("default", {}), request)
    return reply


_LISTED_NODE = re.compile(r"^ID:(\S+), Taxonomy:", flags=re.MULTILINE)


def _rate_unlisted(reply: Any, prompt: str, relevance: float) -> Any:
    if not isinstance(reply, dict):
        return reply
    nodes = list(reply.get("nodes") or [])
    rated = {str(n.get("id")) for n in nodes if isinstance(n, dict)}
    nodes += [{"id": i, "relevance": relevance, "reason": "not relevant"}
              for i in _LISTED_NODE.findall(prompt) if i not in rated]
    return {**reply, "nodes": nodes}


def as_stage_script(value: StageScript | Mapping[str, Reply] | str | Path | None) -> StageScript:
    """A :class:`StageScript` from a script, a mapping or a fixture file path."""
    if value is None:
        return StageScript()
    if isinstance(value, StageScript):
        return value
    if isinstance(value, (str, Path)):
        return StageScript.from_file(value)
    return StageScript(value)


StageCallable = Callable[[StageRequest], Any]
