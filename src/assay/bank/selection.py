"""Per-prompt selection of bank criteria (the paper's §2.4 and Appendix G).

:class:`RelevanceSelector` asks the judge, once per (conversation, criterion), how relevant the
criterion is on the paper's 1–5 scale, and keeps the criteria scoring at least ``threshold``
(default 4, i.e. "exceeds 3": the paper does not give its value; spec §7.1). Selection depends
on the prompt only, never on the response, so it is cached by prompt: in memory for the
selector's life, and in the :class:`~assay.jobs.CallStore` for ever (a restarted process asks
nothing again). When no criterion reaches the threshold, ``fallback`` decides: ``best`` (the
criteria with the highest score given; default), ``all`` or ``none``.

:class:`CriterionSelector` is the small interface any per-prompt selector offers (a router over
a taxonomy can implement it too): ``await selector.select(messages) -> Selection``.

Example::

    caller = StageCaller(make_judge("openai:gpt-4.1-mini"), CallStore.open("sel.sqlite"))
    selector = RelevanceSelector(caller, load_health_score(), threshold=4)
    selection = await selector.select([{"role": "user", "content": "Summarise these labs: ..."}])
    [c.id for c in selection.criteria], selection.scores["hs-12"]
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import orjson

from assay.bank.relevance_prompt import SCHEMA, STAGE, VERSION, render_relevance_prompt
from assay.errors import ConfigError
from assay.jobs import StageCaller, StageError
from assay.rubric import Criterion, Rubric

Fallback = Literal["best", "all", "none"]
FALLBACKS = ("best", "all", "none")


@dataclass(frozen=True)
class Selection:
    """The criteria kept for one prompt, with every relevance score and why."""

    prompt_key: str
    criteria: tuple[Criterion, ...]
    scores: Mapping[str, int]
    justifications: Mapping[str, str] = field(default_factory=dict)
    failed: Mapping[str, str] = field(default_factory=dict)
    threshold: int = 4
    fallback_used: bool = False

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.criteria]

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_key": self.prompt_key, "selected": self.ids, "scores": dict(self.scores),
                "justifications": dict(self.justifications), "failed": dict(self.failed),
                "threshold": self.threshold, "fallback_used": self.fallback_used}


@runtime_checkable
class CriterionSelector(Protocol):
    """Anything that picks the criteria relevant to one prompt."""

    async def select(self, messages: Sequence[Mapping[str, Any]], *,
                     key: str | None = None) -> Selection: ...


def prompt_key(messages: Sequence[Mapping[str, Any]]) -> str:
    """A stable key of a conversation (roles and contents only)."""
    turns = [[str(m.get("role")), str(m.get("content"))] for m in messages]
    return hashlib.sha256(orjson.dumps(turns)).hexdigest()[:16]


def relevance_messages(messages: Sequence[Mapping[str, Any]], criterion: Criterion) -> list[dict]:
    """The one-message prompt asking for the relevance of ``criterion`` to ``messages``."""
    return [{"role": "user", "content": render_relevance_prompt(messages, criterion.text)}]


def apply_threshold(bank: Sequence[Criterion], scores: Mapping[str, int], threshold: int,
                    fallback: Fallback) -> tuple[list[Criterion], bool]:
    """The criteria (bank order) with a score >= ``threshold``; the fallback when none is.

    >>> bank = [Criterion(id=i, text=i) for i in "abc"]
    >>> [c.id for c in apply_threshold(bank, {"a": 5, "b": 3, "c": 4}, 4, "best")[0]]
    ['a', 'c']
    >>> [c.id for c in apply_threshold(bank, {"a": 2, "b": 3, "c": 3}, 4, "best")[0]]
    ['b', 'c']
    """
    kept = [c for c in bank if scores.get(c.id, 0) >= threshold]
    if kept or not scores:
        return kept, False
    if fallback == "all":
        return list(bank), True
    if fallback == "none":
        return [], True
    best = max(scores.values())
    return [c for c in bank if scores.get(c.id) == best], True


class RelevanceSelector:
    """The paper's LLM relevance selector over one bank (see the module docstring)."""

    def __init__(self, caller: StageCaller, bank: Rubric, *, threshold: int = 4,
                 fallback: Fallback = "best", cache_size: int = 100_000):
        if not 1 <= threshold <= 5:
            raise ConfigError(f"relevance threshold {threshold} is outside the 1-5 scale")
        if fallback not in FALLBACKS:
            raise ConfigError(f"unknown fallback {fallback!r}; use {', '.join(FALLBACKS)}")
        self.caller = caller
        self.bank = bank
        self.threshold = threshold
        self.fallback: Fallback = fallback
        self._cache: OrderedDict[str, Selection] = OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}
        self._cache_size = cache_size
        self.calls_saved = 0

    async def select(self, messages: Sequence[Mapping[str, Any]], *,
                     key: str | None = None) -> Selection:
        """The selection for one conversation (the prompt, without the response)."""
        pkey = key or prompt_key(messages)
        cached = self._cache.get(pkey)
        if cached is not None:
            self._cache.move_to_end(pkey)
            self.calls_saved += len(self.bank.criteria)
            return cached
        pending = self._pending.get(pkey)
        if pending is not None:  # the same prompt is being selected right now (GRPO groups)
            self.calls_saved += len(self.bank.criteria)
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._pending[pkey] = future
        try:
            selection = await self._select(messages, pkey)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._pending.pop(pkey, None)
        future.set_result(selection)
        self._cache[pkey] = selection
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return selection

    async def _select(self, messages: Sequence[Mapping[str, Any]], pkey: str) -> Selection:
        conversation = [{"role": m["role"], "content": m["content"]} for m in messages]

        async def score(criterion: Criterion) -> tuple[str, dict | StageError]:
            try:
                data = await self.caller.ask(
                    STAGE, relevance_messages(conversation, criterion), SCHEMA,
                    item_id=f"{pkey}/{criterion.id}", template_version=VERSION)
            except StageError as exc:
                return criterion.id, exc
            return criterion.id, data

        replies = await asyncio.gather(*(score(c) for c in self.bank.criteria))
        scores = {cid: int(r["score"]) for cid, r in replies if isinstance(r, dict)}
        why = {cid: str(r.get("justification_short", "")) for cid, r in replies
               if isinstance(r, dict)}
        failed = {cid: r.reason for cid, r in replies if isinstance(r, StageError)}
        if not scores:
            raise StageError(STAGE, pkey, f"every relevance call failed ({next(iter(failed.values()))})")
        kept, fell_back = apply_threshold(self.bank.criteria, scores, self.threshold, self.fallback)
        return Selection(pkey, tuple(kept), scores, why, failed, self.threshold, fell_back)
