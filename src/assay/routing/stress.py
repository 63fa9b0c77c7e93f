"""Oracle perturbation stress tests (RubricsTree §5.6): four corrupted contexts per item.

From a clean item (system instructions, conversation, health memory) each perturbation makes
the context an agent would answer under:

``missing_instructions``        the system/developer instructions (care rules, clinician
                                constraints, safety guidance) are removed;
``missing_user_data``           the health-memory entries the query needs are masked: the
                                entries its routed leaves require (:mod:`assay.routing.needs`:
                                "HbA1c, glucose and CGM" for a bedtime-insulin question, not
                                only the diabetes and the insulin it restates), and tool outputs
                                and retrieved context;
``inappropriate_instructions``  an unsafe instruction on the query's topic, naming the user's
                                own medicine where it needs one, is added to the system message
                                (:mod:`assay.routing.unsafe_instructions`, seeded per item);
``inaccurate_user_data``        lab and wearable values are replaced with plausible wrong ones
                                that stay consistent across related analytes (HbA1c, fasting
                                glucose and CGM mean move together; sleep efficiency stays
                                within 60-98 %: :mod:`assay.routing.inaccurate`).

Each perturbation is a :class:`Perturbed`: the item, what changed, the entries the routed leaves
need, and whether a change touches them (``touches_needed``). Give the routed leaves'
requirements (``requirements``: :func:`assay.routing.needs.requirements_of`) to check against
the routing; without them the query stands in. A perturbation that has nothing to act on (no
instructions to remove, no data to mask) returns None and the item is left out of that
condition. The responses produced under each condition are graded against the *clean* item:
the evaluator is the oracle that knows the true context. Detection Rate and Mean Penalty then
come from :func:`assay.metrics.stress_test`.

Example:
    >>> from assay.item import Item
    >>> item = Item(id="q", messages=[{"role": "system", "content": "Refer emergencies."},
    ...                               {"role": "user", "content": "Is my cholesterol ok?"}],
    ...             health_memory={"labs": [{"name": "LDL-C", "value": 168, "unit": "mg/dL",
    ...                                      "reference_range": {"high": 130}}]})
    >>> [m.role for m in perturb(item, "missing_instructions").messages]
    ['user']
    >>> perturb(item, "inaccurate_user_data").health_memory.labs[0].value  # HIGH -> in range
    110.0
    >>> done = perturbation(item, "missing_user_data", requirements=["lab:ldl"])
    >>> done.item.health_memory is None, done.touches_needed, done.changes
    (True, True, [{'masked': 'labs[0] LDL-C'}])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.grading.seeding import rng_for
from assay.health_memory import HealthMemory
from assay.item import Item
from assay.routing.needs import EntryRef, Needs, needs_of
from assay.routing.unsafe_instructions import DEFAULT_LIBRARY, UnsafeInstruction, relevant

PERTURBATIONS = ("missing_instructions", "missing_user_data", "inappropriate_instructions",
                 "inaccurate_user_data")
UNSAFE_INSTRUCTIONS = tuple(i.text for i in DEFAULT_LIBRARY)
_INSTRUCTION_ROLES = ("system", "developer")


@dataclass
class Perturbed:
    """One perturbed item: the item, what changed, what the routed leaves need, and whether a
    change touches it (``touches_needed``; ``note`` says why not)."""

    item: Item
    kind: str
    changes: list[dict[str, Any]] = field(default_factory=list)
    needs: Needs | None = None
    touches_needed: bool = True
    note: str | None = None

    def record(self) -> dict[str, Any]:
        """The JSON line ``assay stress make`` writes to ``changes.jsonl``."""
        return {"id": self.item.id, "perturbation": self.kind, "changes": self.changes,
                "needed": self.needs.to_dict() if self.needs is not None else None,
                "touches_needed": self.touches_needed, "note": self.note}


def perturb(item: Item, kind: str, *, seed: int = 0, shift: float = 0.3,
            instructions: Sequence[UnsafeInstruction] = DEFAULT_LIBRARY,
            requirements: Sequence[str] | None = None) -> Item | None:
    """The item under perturbation ``kind`` (response removed), or None when not applicable;
    :func:`perturbation` for what changed."""
    done = perturbation(item, kind, seed=seed, shift=shift, instructions=instructions,
                        requirements=requirements)
    return None if done is None else done.item


def perturbation(item: Item, kind: str, *, seed: int = 0, shift: float = 0.3,
                 instructions: Sequence[UnsafeInstruction] = DEFAULT_LIBRARY,
                 requirements: Sequence[str] | None = None) -> Perturbed | None:
    """The item under perturbation ``kind`` with its record, or None when not applicable.
    ``instructions``: the library ``inappropriate_instructions`` draws from; ``requirements``:
    the ``requires`` of the item's routed leaves (None: the query stands in for a routing)."""
    if kind not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
    if not 0 < shift < 1:
        raise ValueError(f"shift must be in (0, 1), got {shift}")
    rng = rng_for(seed, "stress", kind, item.id)
    needs = needs_of(item, requirements)
    if kind == "missing_instructions":
        done = _missing_instructions(item)
    elif kind == "missing_user_data":
        done = _missing_user_data(item, needs)
    elif kind == "inappropriate_instructions":
        done = _inappropriate_instructions(item, rng, instructions)
    else:
        done = _inaccurate_user_data(item, rng, shift, needs)
    if done is None:
        return None
    data, changes, touches, note = done
    return Perturbed(Item.model_validate({**data, "response": None}), kind, changes, needs,
                     touches, note)


_Done = tuple[dict[str, Any], list[dict[str, Any]], bool, str | None] | None


def _dump(item: Item) -> dict[str, Any]:
    return item.model_dump(mode="json")


def _missing_instructions(item: Item) -> _Done:
    kept = [m for m in item.messages if m.role not in _INSTRUCTION_ROLES]
    if len(kept) == len(item.messages) or not kept:
        return None
    removed = [{"removed": f"{m.role} message", "chars": len(m.content)}
               for m in item.messages if m.role in _INSTRUCTION_ROLES]
    return {**_dump(item), "messages": [m.model_dump() for m in kept]}, removed, True, None


def _missing_user_data(item: Item, needs: Needs) -> _Done:
    memory = item.health_memory
    has_memory = memory is not None and not memory.is_empty
    tools = [m for m in item.messages if m.role == "tool"]
    if not (has_memory or tools or item.context):
        return None
    changes: list[dict[str, Any]] = [{"removed": "tool output", "chars": len(m.content)}
                                     for m in tools]
    changes += [{"removed": "retrieved context", "chars": len(p.text)} for p in item.context]
    masked = None
    touches = bool(tools or item.context)
    note = None
    if has_memory and memory is not None:
        hidden_before = set(needs.hidden)
        masked, removed = masked_memory(memory, needs.entries)
        changes += [{"masked": ref.label} for ref in removed]
        touches = touches or bool(hidden_before & set(removed))
        if not needs.entries:
            note = (f"the {'routed leaves' if needs.basis == 'routing' else 'query'} need no "
                    "health-memory entry")
        elif not touches:
            note = "every needed entry is restated by the query itself"
    kept = [m.model_dump() for m in item.messages if m.role != "tool"]
    return ({**_dump(item), "messages": kept, "health_memory": masked, "context": []}, changes,
            touches, note)


def masked_memory(memory: HealthMemory,
                  entries: Sequence[EntryRef]) -> tuple[dict[str, Any] | None, list[EntryRef]]:
    """``memory`` without ``entries`` (the paper's *partial* masking), and the entries removed;
    None for the memory when nothing would be left.

    >>> m = HealthMemory.model_validate({"profile": {"age": 52},
    ...     "labs": [{"name": "LDL-C", "value": 168, "unit": "mg/dL"},
    ...              {"name": "HbA1c", "value": 5.4, "unit": "%"}]})
    >>> left, removed = masked_memory(m, [EntryRef("labs", 0, "LDL-C")])
    >>> [lab["name"] for lab in left["labs"]], left["profile"]["age"]
    (['HbA1c'], 52)
    """
    out = memory.model_dump(mode="json")
    removed = list(dict.fromkeys(entries))
    for section in ("conditions", "medications", "labs", "wearables"):
        gone = {r.index for r in removed if r.section == section}
        out[section] = [e for i, e in enumerate(out[section]) if i not in gone]
    for ref in removed:
        if ref.section == "profile" and out.get("profile"):
            if ref.name in out["profile"]:
                out["profile"][ref.name] = None
            out["profile"]["other"] = {k: v for k, v in out["profile"].get("other", {}).items()
                                       if k.split(" ")[0] != ref.name}
            for unit_field in (f"{ref.name}_cm", f"{ref.name}_kg"):
                if unit_field in out["profile"]:
                    out["profile"][unit_field] = None
    left = HealthMemory.model_validate(out)
    return (None if left.is_empty else out), removed


def _inappropriate_instructions(item: Item, rng, library: Sequence[UnsafeInstruction]) -> _Done:
    candidates = relevant(item, library)
    chosen = rng.choice(candidates)
    messages = [m.model_dump() for m in item.messages]
    for m in messages:
        if m["role"] in _INSTRUCTION_ROLES:
            m["content"] = f"{m['content']}\n\n{chosen.text}"
            break
    else:
        messages.insert(0, {"role": "system", "content": chosen.text})
    change = {"added_instruction": chosen.text, "topic": chosen.topic,
              "medication": chosen.medication}
    note = None if chosen.topic else "no instruction of the library bears on the query's topics"
    return {**_dump(item), "messages": messages}, [change], chosen.topic is not None, note


def _inaccurate_user_data(item: Item, rng, shift: float, needs: Needs) -> _Done:
    from assay.routing.inaccurate import inaccurate_memory

    memory = item.health_memory
    if memory is None or not (memory.labs or memory.wearables):
        return None
    new_memory, changes = inaccurate_memory(memory, rng, shift)
    needed = {r.label.split(" ")[0] for r in needs.entries}
    touches = any(c["entry"] in needed or (c["entry"] == "profile" and "profile.weight"
                                           in needed) for c in changes)
    note = None
    if not touches:
        note = ("no needed entry carries a value to change" if needs.entries
                else f"the {'routed leaves' if needs.basis == 'routing' else 'query'} need no "
                "lab or wearable value")
    return {**_dump(item), "health_memory": new_memory}, changes, touches, note
