"""What the routed leaves need from a query's context: the health-memory entries behind them.

A leaf's ``requires`` names the data it checks (``lab:hba1c``, ``wearable:sleep``,
``medication``, ``profile:age``). For one query, the entries its routed (active) leaves need
are the entries meeting those requirements: a named one by meaning (HbA1c recorded as
"Hemoglobin A1c" or LOINC 4548-4); a bare kind (``lab``: "cites the user's relevant labs") the
entries of that kind on the query's clinical topics (:mod:`assay.vocabulary.topics`: for a
bedtime-insulin question the glycaemic labs, not the lipids), or all of them when the query is on
no topic. Entries the query itself restates ("my diabetes", "my insulin") are needed too, but
hiding them hides nothing: :attr:`Needs.hidden` leaves them out.

Without a routing the query stands in for it (``basis="query"``): the entries on its topics or
named in it, else its labs and wearables.

Example:
    >>> from assay.item import Item
    >>> item = Item(id="q", prompt="I take Lantus at bedtime for my diabetes. Should I change "
    ...     "the dose?", health_memory={"conditions": [{"name": "Type 2 diabetes"}],
    ...     "medications": [{"name": "Lantus", "dose": "20 units"}],
    ...     "labs": [{"name": "HbA1c", "value": 7.9, "unit": "%"},
    ...              {"name": "LDL-C", "value": 130, "unit": "mg/dL"}],
    ...     "wearables": [{"metric": "CGM average glucose", "unit": "mg/dL", "mean": 162}]})
    >>> needs = needs_of(item, ["lab", "wearable:cgm glucose", "medication:insulin"])
    >>> [e.label for e in needs.entries]
    ['medications[0] Lantus', 'labs[0] HbA1c', 'wearables[0] CGM average glucose']
    >>> [e.label for e in needs.hidden]
    ['labs[0] HbA1c', 'wearables[0] CGM average glucose']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.item import Item

SECTIONS = (("conditions", "condition", "name"), ("medications", "medication", "name"),
            ("labs", "lab", "name"), ("wearables", "wearable", "metric"))


@dataclass(frozen=True)
class EntryRef:
    """One entry of a health memory: its section, position and name (``profile`` fields have
    index -1)."""

    section: str
    index: int
    name: str

    @property
    def label(self) -> str:
        return f"profile.{self.name}" if self.section == "profile" else (
            f"{self.section}[{self.index}] {self.name}")


@dataclass(frozen=True)
class Needs:
    """The entries a query's routed leaves need (see the module docstring)."""

    basis: str
    requirements: tuple[str, ...]
    entries: tuple[EntryRef, ...]
    restated: tuple[EntryRef, ...]

    @property
    def hidden(self) -> tuple[EntryRef, ...]:
        """The needed entries the query does not itself restate."""
        return tuple(e for e in self.entries if e not in self.restated)

    def to_dict(self) -> dict[str, Any]:
        return {"basis": self.basis, "requirements": list(self.requirements),
                "entries": [e.label for e in self.entries],
                "restated_by_query": [e.label for e in self.restated]}


def requirements_of(leaf_ids: Sequence[str], catalogue: Any) -> list[str]:
    """The ``requires`` of the active leaves, in catalogue order, each once."""
    out: list[str] = []
    for leaf_id in leaf_ids:
        if leaf_id in catalogue:
            out += [r for r in catalogue[leaf_id].requires if r not in out]
    return out


def needs_of(item: Item, requirements: Sequence[str] | None) -> Needs:
    """The entries of ``item``'s health memory that ``requirements`` (the routed leaves')
    need; ``None``: no routing, the query decides (see the module docstring)."""
    from assay.vocabulary.topics import query_topics

    memory = item.health_memory
    query = _query(item)
    if memory is None or memory.is_empty:
        return Needs("query" if requirements is None else "routing", tuple(requirements or ()),
                     (), ())
    on_topic = _on_topics(item, query_topics(query))
    if requirements is None:
        chosen = on_topic or [r for r in _all(item) if r.section in ("labs", "wearables")]
        basis = "query"
    else:
        chosen = []
        for requirement in requirements:
            chosen += [r for r in _meeting(item, requirement, on_topic) if r not in chosen]
        basis = "routing"
    order = {r: i for i, r in enumerate(_all(item))}
    chosen = sorted(set(chosen), key=lambda r: order.get(r, -1))
    restated = tuple(r for r in chosen if _restated(item, r, query))
    return Needs(basis, tuple(requirements or ()), tuple(chosen), restated)


def _query(item: Item) -> str:
    users = [m.content for m in item.messages if m.role == "user"]
    return users[-1] if users else ""


def _all(item: Item) -> list[EntryRef]:
    memory = item.health_memory
    assert memory is not None
    out = [EntryRef("profile", -1, fact.split(" ")[0]) for fact in (
        memory.profile.facts() if memory.profile else [])]
    for section, _, field in SECTIONS:
        out += [EntryRef(section, i, getattr(e, field)) for i, e in
                enumerate(getattr(memory, section))]
    return out


def _concepts(item: Item, ref: EntryRef) -> set[tuple[str, str]]:
    from assay.vocabulary import vocabulary

    if ref.section == "profile":
        return set()
    kind = {s: k for s, k, _ in SECTIONS}[ref.section]
    entry = getattr(item.health_memory, ref.section)[ref.index]
    return {(kind, term) for term in vocabulary().resolve(kind, ref.name,
                                                          getattr(entry, "loinc", None))}


def _on_topics(item: Item, wanted: set[str]) -> list[EntryRef]:
    from assay.vocabulary.topics import topics_of

    return [r for r in _all(item) if any(topics_of(kind, term) & wanted
                                         for kind, term in _concepts(item, r))]


def _meeting(item: Item, requirement: str, on_topic: list[EntryRef]) -> list[EntryRef]:
    from assay.health_memory import HealthMemory

    memory = item.health_memory
    assert memory is not None
    kind, _, rest = requirement.strip().lower().partition(":")
    kind = kind.removesuffix("s")
    name = rest.partition(":")[0]
    everything = _all(item)
    if kind == "profile":
        return [r for r in everything if r.section == "profile" and (
            not name or r.name.startswith(name.split(" ")[0]))]
    section = next(s for s, k, _ in SECTIONS if k == kind)
    mine = [r for r in everything if r.section == section]
    if not name:
        topical = [r for r in mine if r in on_topic]
        return topical or mine
    out = []
    for ref in mine:
        entry = getattr(memory, section)[ref.index]
        alone = HealthMemory.model_validate({section: [entry.model_dump(mode="json")]})
        if alone.has(requirement):
            out.append(ref)
    return out


def _restated(item: Item, ref: EntryRef, query: str) -> bool:
    """The query names the entry's concept itself (or a broader or narrower one)."""
    from assay.vocabulary import vocabulary
    from assay.vocabulary.topics import concepts_in

    table = vocabulary()
    asked = concepts_in(query)
    for kind, term in _concepts(item, ref):
        for asked_kind, asked_term in asked:
            if asked_kind == kind and (term in table.narrower(kind, asked_term)
                                       or asked_term in table.narrower(kind, term)):
                return True
    return False
