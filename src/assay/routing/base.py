"""The router interface: which criteria of a catalogue apply to a query, and why.

A :class:`Catalogue` is the flat list of candidates a router chooses from: the leaves of a
:class:`~assay.rubric.Taxonomy` (each with its taxonomy path, trigger condition and optional
health-memory ``requires``), or any list of criteria (a criterion bank, seed 004). A
:class:`Router` maps one query (an :class:`~assay.item.Item`: its conversation and health
memory, never its response) to a :class:`Routing`: the active entries, each with a reason, plus
the entries the health-memory guard excluded and the number of model calls made.

Every router first applies the same guard: an entry whose ``requires`` names data the item's
health memory does not hold (e.g. ``lab:LDL``) is not eligible, whatever a model would say.

Example:
    >>> from assay.item import Item
    >>> catalogue = Catalogue.from_criteria([
    ...     {"id": "ldl", "text": "Mentions the user's LDL-C.", "trigger": "lipid questions",
    ...      "metadata": {"requires": ["lab:ldl"]}},
    ...     {"id": "er", "text": "Advises emergency care.", "trigger": "red-flag symptoms"}])
    >>> class Everything(Router):
    ...     kind = "everything"
    ...     async def select(self, query, eligible, trace):
    ...         return [Selection(id=e.id, reason="always") for e in eligible]
    >>> import asyncio
    >>> routing = asyncio.run(Everything(catalogue).route(Item(id="q", prompt="Is my LDL ok?")))
    >>> routing.ids, routing.excluded
    (['er'], {'ldl': 'health memory has no lab:ldl'})
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import ConfigError
from assay.health_memory import HealthMemory
from assay.item import Item
from assay.jobs.caller import stable_json
from assay.rubric import Criterion, Taxonomy


@dataclass(frozen=True)
class Entry:
    """One candidate criterion: id, text, taxonomy path (level names), trigger, requirements."""

    id: str
    text: str
    path: tuple[str, ...] = ()
    trigger: str | None = None
    requires: tuple[str, ...] = ()

    def description(self) -> str:
        """Path, criterion and trigger in one line (what the embedding router compares)."""
        parts = [" > ".join(self.path)] if self.path else []
        parts.append(self.text)
        if self.trigger:
            parts.append(f"Applies when: {self.trigger}")
        return ". ".join(parts)

    def missing(self, memory: HealthMemory | None) -> str | None:
        """The first requirement the memory does not meet, or None when eligible."""
        for requirement in self.requires:
            if memory is None or not memory.has(requirement):
                return requirement
        return None


class Catalogue:
    """Candidates in a fixed order; built from a taxonomy or from criteria."""

    def __init__(self, entries: Sequence[Entry], *, taxonomy: Taxonomy | None = None,
                 version: str = "1", name: str = "catalogue"):
        ids = [e.id for e in entries]
        if len(set(ids)) != len(ids):
            raise ValueError("catalogue entry ids must be unique")
        self.entries = list(entries)
        self.taxonomy = taxonomy
        self.version = version
        self.name = name
        self._by_id = {e.id: e for e in self.entries}

    @classmethod
    def from_taxonomy(cls, taxonomy: Taxonomy) -> Catalogue:
        entries = []
        for node, path in taxonomy.walk():
            if node.criterion is not None:
                c = node.criterion
                entries.append(Entry(c.id, c.text, tuple(a.name for a in path[1:]) + (node.name,),
                                     c.trigger, _requires(c)))
        return cls(entries, taxonomy=taxonomy, version=taxonomy.version, name=taxonomy.id)

    @classmethod
    def from_criteria(cls, criteria: Iterable[Criterion | dict[str, Any]], *,
                      name: str = "criteria", version: str = "1") -> Catalogue:
        parsed = [c if isinstance(c, Criterion) else Criterion.model_validate(c) for c in criteria]
        return cls([Entry(c.id, c.text, (), c.trigger, _requires(c)) for c in parsed],
                   name=name, version=version)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def __getitem__(self, entry_id: str) -> Entry:
        return self._by_id[entry_id]

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.entries]

    def digest(self) -> str:
        """A hash of everything a router reads, so a changed catalogue never reuses routings."""
        payload = [[e.id, e.text, list(e.path), e.trigger, list(e.requires)] for e in self.entries]
        return hashlib.sha256(stable_json(payload).encode()).hexdigest()[:16]


def _requires(criterion: Criterion) -> tuple[str, ...]:
    """A leaf's ``metadata.requires``, checked now so a typo fails before any call."""
    value = criterion.metadata.get("requires", ())
    requires = (value,) if isinstance(value, str) else value
    if not isinstance(requires, list | tuple) or not all(isinstance(r, str) for r in requires):
        raise ConfigError(f"criterion {criterion.id!r}: metadata.requires: expected a "
                          f"requirement such as 'lab:ldl' or a list of them, got {value!r}")
    for requirement in requires:
        try:
            HealthMemory.check_requirement(requirement)
        except ValueError as exc:
            raise ConfigError(f"criterion {criterion.id!r}: metadata.requires: {exc}") from None
    return tuple(requires)


class Selection(BaseModel):
    """An active entry and why it was chosen (``score``: the router's relevance, if any)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    reason: str = ""
    score: float | None = None


class Routing(BaseModel):
    """What one router chose for one query."""

    model_config = ConfigDict(extra="forbid")

    router: str
    active: list[Selection] = Field(default_factory=list)
    excluded: dict[str, str] = Field(default_factory=dict, description="id -> why not eligible")
    calls: int = 0
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.active]


def query_text(item: Item) -> str:
    """The query a router reads: the one user message, or the whole conversation."""
    if len(item.messages) == 1:
        return item.messages[0].content
    return "\n\n".join(f"{m.role}: {m.content}" for m in item.messages)


def memory_text(item: Item) -> str:
    """The rendered health memory ('' when the item has none)."""
    memory = item.health_memory
    return "" if memory is None or memory.is_empty else memory.render()


@dataclass
class Trace:
    """What routing one query cost and found along the way (calls, per-router details)."""

    calls: int = 0
    details: dict[str, Any] = field(default_factory=dict)


class Router(ABC):
    """Chooses the entries of a catalogue that apply to a query; see the module docstring.

    Subclasses set ``kind`` and implement :meth:`select` over the eligible entries; routers
    that call a model take a :class:`~assay.jobs.StageCaller` and count each call in the
    query's :class:`Trace` (several queries are routed concurrently by one router).
    """

    kind: ClassVar[str] = "router"

    def __init__(self, catalogue: Catalogue):
        self.catalogue = catalogue

    def config(self) -> dict[str, Any]:
        """What determines this router's decisions (its routings are cached under it): with
        health-memory requirements, the health vocabulary and negation rules that decide them
        too."""
        config: dict[str, Any] = {"kind": self.kind, "catalogue": self.catalogue.digest()}
        if any(e.requires for e in self.catalogue.entries):
            from assay.vocabulary import vocabulary
            from assay.vocabulary.context import rules_version

            config["health_vocabulary"] = f"{vocabulary().version}; context {rules_version()}"
        return config

    @abstractmethod
    async def select(self, query: Item, eligible: list[Entry], trace: Trace) -> list[Selection]:
        """The active entries among ``eligible`` for ``query``."""

    async def route(self, query: Item) -> Routing:
        """Apply the health-memory guard, then :meth:`select`; never looks at the response."""
        excluded: dict[str, str] = {}
        eligible = []
        for entry in self.catalogue.entries:
            missing = entry.missing(query.health_memory)
            if missing is None:
                eligible.append(entry)
            else:
                excluded[entry.id] = f"health memory has no {missing}"
        trace = Trace()
        chosen = await self.select(query, eligible, trace) if eligible else []
        order = {e.id: i for i, e in enumerate(self.catalogue.entries)}
        unique = {s.id: s for s in chosen if s.id in order and s.id not in excluded}
        active = sorted(unique.values(), key=lambda s: order[s.id])
        return Routing(router=self.kind, active=active, excluded=excluded, calls=trace.calls,
                       details=trace.details)


def query_key(router: Router, item: Item) -> str:
    """The cache key of a routing: router config, catalogue, conversation and health memory."""
    payload = {"router": router.config(),
               "messages": [m.model_dump() for m in item.messages],
               "health_memory": item.health_memory.model_dump(mode="json")
               if item.health_memory is not None else None}
    return hashlib.sha256(stable_json(payload).encode()).hexdigest()[:24]
