"""Per-prompt selection of bank criteria (the paper's §2.4 and Appendix G), for rewards and
system prompts.

The relevance rating itself is :class:`assay.routing.relevance.RelevanceRouter` (router (d) of
the routing layer: the paper's 1–5 prompt, one call per (conversation, criterion), stage
``route_relevance``, criteria rated ``>= threshold`` kept; default 4, i.e. "exceeds 3" — the
paper gives no value, spec §7.1). :class:`RelevanceSelector` adds what RL needs on top:

* **cached by prompt**: selection never depends on the response, so all rollouts of a prompt
  (and every epoch) share one routing — in memory for the selector's life (concurrent requests
  for the same prompt wait for the first), and through the :class:`~assay.jobs.CallStore` for
  ever (a restarted process asks nothing again);
* **a fallback** when no criterion reaches the threshold: ``best`` (those with the highest
  score; default), ``all`` or ``none`` (spec §3.2 leaves it open);
* a :class:`CriteriaSelection` with the criteria themselves (polarity included) and every score.

Any object with ``async select(messages, *, key=None) -> CriteriaSelection`` can stand in
(:class:`CriterionSelector`), e.g. another router wrapped the same way.

Example::

    caller = StageCaller(make_judge("openai:gpt-4.1-mini"), CallStore.open("sel.sqlite"))
    selector = RelevanceSelector(caller, load_health_score(), threshold=4)
    selection = await selector.select([{"role": "user", "content": "Summarise these labs: ..."}])
    selection.ids, selection.scores["hs-12"]
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeGuard, get_args, runtime_checkable

import orjson

from assay.errors import ConfigError, InputError, Issue
from assay.in_flight import shared
from assay.item import Item
from assay.jobs import StageCaller
from assay.limits import MAX_PROMPT_CHARS, prompt_chars
from assay.routing.base import Catalogue
from assay.routing.relevance import RelevanceRouter
from assay.rubric import Criterion, Rubric

Fallback = Literal["best", "all", "none"]
FALLBACKS: tuple[Fallback, ...] = get_args(Fallback)


def checked_fallback(value: str) -> Fallback:
    """``value`` as a selection fallback; a ConfigError names the choices.

    >>> checked_fallback("all")
    'all'
    """
    if not _is_fallback(value):
        raise ConfigError(f"unknown fallback {value!r}; use {', '.join(FALLBACKS)}")
    return value


def _is_fallback(value: str) -> TypeGuard[Fallback]:
    return value in FALLBACKS


@dataclass(frozen=True)
class CriteriaSelection:
    """The criteria kept for one prompt, with every relevance score and why."""

    prompt_key: str
    criteria: tuple[Criterion, ...]
    scores: Mapping[str, int]
    justifications: Mapping[str, str] = field(default_factory=dict)
    threshold: int = 4
    fallback_used: bool = False

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.criteria]

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_key": self.prompt_key, "selected": self.ids, "scores": dict(self.scores),
                "justifications": dict(self.justifications), "threshold": self.threshold,
                "fallback_used": self.fallback_used}


@runtime_checkable
class CriterionSelector(Protocol):
    """Anything that picks the criteria relevant to one prompt."""

    async def select(self, messages: Sequence[Mapping[str, Any]], *,
                     key: str | None = None) -> CriteriaSelection: ...


def prompt_key(messages: Sequence[Mapping[str, Any]]) -> str:
    """A stable key of a conversation (roles and contents only)."""
    turns = [[str(m.get("role")), str(m.get("content"))] for m in messages]
    return hashlib.sha256(orjson.dumps(turns)).hexdigest()[:16]


def apply_threshold(bank: Sequence[Criterion], scores: Mapping[str, int], threshold: int,
                    fallback: Fallback) -> tuple[list[Criterion], bool]:
    """The criteria (bank order) scoring >= ``threshold``; the fallback when none does.

    >>> bank = [Criterion(id=i, text=i) for i in "abc"]
    >>> [c.id for c in apply_threshold(bank, {"a": 5, "b": 3, "c": 4}, 4, "best")[0]]
    ['a', 'c']
    >>> [c.id for c in apply_threshold(bank, {"a": 2, "b": 3, "c": 3}, 4, "best")[0]]
    ['b', 'c']
    >>> apply_threshold(bank, {"a": 2, "b": 3, "c": 3}, 4, "none")
    ([], True)
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
    """The paper's relevance selection over one bank, cached by prompt (module docstring)."""

    def __init__(self, caller: StageCaller, bank: Rubric, *, threshold: int = 4,
                 fallback: Fallback = "best", cache_size: int = 100_000):
        if not 1 <= threshold <= 5:
            raise ConfigError(f"relevance threshold {threshold} is outside the 1-5 scale")
        self.bank = bank
        self.threshold = threshold
        self.fallback: Fallback = checked_fallback(fallback)
        catalogue = Catalogue.from_criteria(bank.criteria, name=bank.id, version=bank.version)
        # The router keeps ratings >= 1 so that every score comes back for the fallback.
        self.router = RelevanceRouter(catalogue, caller, threshold=1)
        self._cache: OrderedDict[str, CriteriaSelection] = OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}
        self._cache_size = cache_size
        self.calls_saved = 0

    @property
    def settings_key(self) -> str:
        """A digest of everything a selection depends on besides the prompt: the bank's
        criteria (ids, texts, weights), the threshold, the fallback and the rating model. A
        store's selections are reused only under the same key (``assay bank select --store``).
        """
        settings = {"criteria": [[c.id, c.text, c.weight] for c in self.bank.criteria],
                    "threshold": self.threshold, "fallback": self.fallback,
                    "model": self.router.caller.model}
        return hashlib.sha256(orjson.dumps(settings)).hexdigest()[:16]

    async def select(self, messages: Sequence[Mapping[str, Any]], *,
                     key: str | None = None) -> CriteriaSelection:
        """The selection for one conversation (the prompt, without the response)."""
        pkey = key or prompt_key(messages)
        cached = self._cache.get(pkey)
        if cached is not None:
            self._cache.move_to_end(pkey)
            self.calls_saved += len(self.bank.criteria)
            return cached
        if pkey in self._pending:  # the same prompt is being selected right now (a GRPO group)
            self.calls_saved += len(self.bank.criteria)
        selection = await shared(self._pending, pkey, lambda: self._select(messages, pkey))
        self._cache[pkey] = selection
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return selection

    async def _select(self, messages: Sequence[Mapping[str, Any]], pkey: str) -> CriteriaSelection:
        size = prompt_chars(messages)
        if size > MAX_PROMPT_CHARS:  # never rate a 10 MB prompt once per criterion
            raise InputError(Issue(None, None, "prompt", f"{size:,} characters, over the judge "
                                   f"prompt limit of {MAX_PROMPT_CHARS:,}: not sent to a judge"))
        item = Item(id=pkey, messages=[{"role": m["role"], "content": m["content"]}
                                       for m in messages])
        routing = await self.router.route(item)
        scores = {s.id: int(s.score or 0) for s in routing.active}
        why = {s.id: s.reason for s in routing.active}
        kept, fell_back = apply_threshold(self.bank.criteria, scores, self.threshold, self.fallback)
        return CriteriaSelection(pkey, tuple(kept), scores, why, self.threshold, fell_back)
