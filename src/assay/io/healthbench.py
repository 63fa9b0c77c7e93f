"""HealthBench JSONL <-> :class:`~assay.item.Item`, losslessly.

A HealthBench line (openai/simple-evals) holds ``prompt`` (messages), ``prompt_id``, ``rubrics``
(``{criterion, points, tags}``), ``example_tags``, ``ideal_completions_data`` and ``canary``.
It maps onto one :class:`Item` carrying its own :class:`Rubric`:

=============================================  ==========================================
HealthBench                                    Assay
=============================================  ==========================================
``prompt_id``                                  ``Item.id`` and ``Item.rubric.id``
``prompt``                                     ``Item.messages``
``ideal_completions_data.ideal_completion``    ``Item.reference``
``example_tags``                               ``Item.tags`` (verbatim, in order)
``rubrics[i].criterion`` / ``points``          ``Criterion.text`` / ``weight``
``rubrics[i].tags``                            ``Criterion.tags``; ``axis`` = the ``axis:`` tag
=============================================  ==========================================

Criterion ids are derived from the text; a criterion the rubric states twice (the official
file has such examples) keeps both copies, the repeat taking a positional id (``c-…-2``, see
:class:`~assay.rubric.Rubric`), and both are graded and counted as in simple-evals. Whatever else a line holds (``ideal_completions_data``,
``canary``, unknown keys, integer vs float points) is kept in ``metadata["healthbench"]`` so that
:func:`item_to_example` gives back the same JSON object. As an Assay extension a rubric entry
may also carry ``id``, ``kind`` and ``options`` (multi-choice criteria) and ``provenance``
(generated criteria: stage, evidence, model); they are written back when present.

Example:
    >>> example = {"prompt_id": "p1", "prompt": [{"role": "user", "content": "Bee sting?"}],
    ...            "rubrics": [{"criterion": "Says to scrape the stinger out.", "points": 5,
    ...                         "tags": ["axis:accuracy"]}], "example_tags": ["theme:hedging"]}
    >>> item = example_to_item(example)
    >>> item.rubric.criteria[0].axis, item.rubric.criteria[0].weight, item.tags
    ('accuracy', 5.0, ['theme:hedging'])
    >>> item_to_example(item) == example
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr, ValidationError
from pydantic_core import PydanticCustomError

from assay.errors import InputError, Issue
from assay.io.errors import Loc, issues_from
from assay.io.jsonl import iter_jsonl
from assay.item import Item
from assay.rubric.criterion import CriterionKind, positional_criterion_ids

KEY_ORDER = ("example_tags", "ideal_completions_data", "prompt", "prompt_id", "rubrics", "canary")
ENTRY_KEYS = ("criterion", "points", "tags")
EXTENSION_KEYS = ("id", "kind", "options", "provenance")


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("number_type", "expected a number")
    return value


class HealthBenchMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: StrictStr
    content: StrictStr


class HealthBenchRubricEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    criterion: StrictStr
    points: Annotated[Any, AfterValidator(_number)]
    tags: list[StrictStr]


class HealthBenchExample(BaseModel):
    """The shape of one HealthBench line (used for structural checks and ``assay schema``)."""

    model_config = ConfigDict(extra="allow")
    prompt: list[HealthBenchMessage]
    prompt_id: StrictStr
    rubrics: list[HealthBenchRubricEntry]
    example_tags: list[StrictStr]
    ideal_completions_data: dict[str, Any] | None = None
    canary: StrictStr | None = None


def is_healthbench(obj: Any) -> bool:
    """Whether a parsed JSON line looks like a HealthBench example rather than an Assay item."""
    return isinstance(obj, dict) and ("prompt_id" in obj or "rubrics" in obj)


def example_to_item(obj: Any, *, source: str | None = None, line: int | None = None) -> Item:
    """One HealthBench example (a parsed JSON object) as an :class:`Item`.

    Raises :class:`InputError` listing every problem, with HealthBench field names.
    """
    if not _well_formed(obj):  # the model names every problem (a well-formed row skips it)
        try:
            HealthBenchExample.model_validate(obj)
        except ValidationError as exc:
            raise InputError(issues_from(exc, source=source, line=line)) from None
    try:
        return Item.model_validate(_item_fields(obj))
    except ValidationError as exc:
        issues = issues_from(exc, source=source, line=line, rename=lambda loc: _rename(loc, obj))
        raise InputError(issues) from None


def _well_formed(obj: Any) -> bool:
    """Whether ``obj`` certainly has the shape :class:`HealthBenchExample` checks, by plain type
    tests (several times faster than the model). False means "ask the model", which accepts or
    names each problem, so the outcome is the model's either way."""
    if type(obj) is not dict or type(obj.get("prompt_id")) is not str:
        return False
    prompt, rubrics, ideal = obj.get("prompt"), obj.get("rubrics"), obj.get("ideal_completions_data")
    if type(prompt) is not list or type(rubrics) is not list or not _strings(obj.get("example_tags")):
        return False
    if ideal is not None and (type(ideal) is not dict or not all(type(k) is str for k in ideal)):
        return False
    canary = obj.get("canary")
    if canary is not None and type(canary) is not str:
        return False
    for message in prompt:
        if (type(message) is not dict or type(message.get("role")) is not str
                or type(message.get("content")) is not str):
            return False
    for entry in rubrics:
        if (type(entry) is not dict or type(entry.get("criterion")) is not str
                or type(entry.get("points")) not in (int, float) or not _strings(entry.get("tags"))):
            return False
    return True


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def item_to_example(item: Item) -> dict[str, Any]:
    """The HealthBench JSON object for an item (the exact original when read from HealthBench)."""
    kept: dict[str, Any] = item.metadata.get("healthbench", {})
    example: dict[str, Any] = {
        "example_tags": list(item.tags),
        "ideal_completions_data": _ideal_completions(item, kept),
        "prompt": [_message(m, kept, i) for i, m in enumerate(item.messages)],
        "prompt_id": item.id,
        "rubrics": _entries(item.rubric.criteria) if item.rubric else [],
    }
    if "canary" in kept:
        example["canary"] = kept["canary"]
    if "ideal_completions_data" in kept.get("absent", ()) and item.reference is None:
        del example["ideal_completions_data"]
    example.update(kept.get("extra", {}))
    return example


def read_conversations(path: str | Path) -> list[Item] | None:
    """The rows of a HealthBench file as conversations alone (``Item(id=prompt_id,
    messages=prompt)``, no rubric built: what sampling a model needs, at a fraction of the
    cost of :func:`example_to_item`), or None if any row is not plainly well formed (the full
    reader then names each problem)."""
    items = []
    for _, row in iter_jsonl(path):
        if isinstance(row, Issue) or not _well_formed(row):
            return None
        try:
            items.append(Item(id=row["prompt_id"], messages=row["prompt"]))
        except ValidationError:  # e.g. a message with keys of its own: the full reader keeps them
            return None
    return items


def read_examples(path: str | Path) -> Iterator[dict[str, Any]]:
    """Stream the raw HealthBench JSON objects of a file; a malformed line raises InputError."""
    for _, value in iter_jsonl(path):
        if isinstance(value, Issue):
            raise InputError(value)
        yield value


# -- reading ----------------------------------------------------------------------------------


def _item_fields(obj: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    if "ideal_completions_data" in obj:
        kept["ideal_completions_data"] = obj["ideal_completions_data"]
    else:
        kept["absent"] = ["ideal_completions_data"]
    if "canary" in obj:
        kept["canary"] = obj["canary"]
    extra = {k: v for k, v in obj.items() if k not in KEY_ORDER}
    if extra:
        kept["extra"] = extra
    messages, message_extra = [], {}
    for index, message in enumerate(obj["prompt"]):
        messages.append({"role": message["role"], "content": message["content"]})
        if len(message) > 2:
            message_extra[str(index)] = {k: v for k, v in message.items()
                                         if k not in ("role", "content")}
    if message_extra:
        kept["message_extra"] = message_extra
    ideal = obj.get("ideal_completions_data")
    reference = ideal.get("ideal_completion") if isinstance(ideal, dict) else None
    fields: dict[str, Any] = {
        "id": obj["prompt_id"],
        "messages": messages,
        "tags": obj["example_tags"],
        "metadata": {"healthbench": kept} if kept else {},
        "rubric": {"id": obj["prompt_id"],
                   "criteria": [_criterion_fields(e) for e in obj["rubrics"]]},
    }
    if isinstance(reference, str):
        fields["reference"] = reference
    return fields


def _criterion_fields(entry: dict[str, Any]) -> dict[str, Any]:
    points = entry["points"]
    axis = None
    for tag in entry["tags"]:
        if tag.startswith("axis:"):
            axis = tag[5:]
            break
    fields: dict[str, Any] = {"text": entry["criterion"], "weight": points, "tags": entry["tags"],
                              "axis": axis, "provenance": {"source": "physician"}}
    if type(points) is int and len(entry) == len(ENTRY_KEYS):  # the usual entry: nothing to keep
        return fields
    kept: dict[str, Any] = {}
    if isinstance(points, float) and points.is_integer():
        kept["float_points"] = True
    extension = [k for k in EXTENSION_KEYS if k in entry]
    for key in extension:
        fields[key] = entry[key]
    if extension:
        kept["extension_keys"] = extension
    extra = {k: v for k, v in entry.items() if k not in ENTRY_KEYS + EXTENSION_KEYS}
    if extra:
        kept["extra"] = extra
    if kept:
        fields["metadata"] = {"healthbench": kept}
    return fields


def _rename(loc: Loc, obj: dict[str, Any]) -> Loc:
    """An :class:`Item` location in HealthBench's field names."""
    head, rest = loc[0] if loc else None, loc[1:]
    if head == "id":
        return ("prompt_id",)
    if head == "messages":
        return ("prompt", *rest)
    if head == "tags":
        return ("example_tags", *rest)
    if head == "reference":
        return ("ideal_completions_data", "ideal_completion")
    if head != "rubric":
        return loc
    if not rest or rest[0] != "criteria":
        return ("rubrics",) if not rest or rest[0] != "id" else ("prompt_id",)
    if len(rest) < 3:
        return ("rubrics", *rest[1:])
    index, field = rest[1], rest[2]
    entry = obj["rubrics"][index] if isinstance(index, int) else {}
    names: dict[str | int, str] = {"text": "criterion", "weight": "points"}
    if field == "id" and "id" not in entry:
        field = "criterion"  # the id was derived from the criterion text
    return ("rubrics", index, names.get(field, field), *rest[3:])


# -- writing ----------------------------------------------------------------------------------


def _ideal_completions(item: Item, kept: dict[str, Any]) -> Any:
    if "ideal_completions_data" not in kept:
        return {"ideal_completion": item.reference} if item.reference is not None else None
    data = kept["ideal_completions_data"]
    if isinstance(data, dict) and data.get("ideal_completion") != item.reference:
        data = {**data, "ideal_completion": item.reference}
    elif data is None and item.reference is not None:
        data = {"ideal_completion": item.reference}
    return data


def _message(message: Any, kept: dict[str, Any], index: int) -> dict[str, Any]:
    out = {"content": message.content, "role": message.role}  # HealthBench's key order
    out.update(kept.get("message_extra", {}).get(str(index), {}))
    return out


def _entries(criteria: list[Any]) -> list[dict[str, Any]]:
    # An id is written only where reading the entry back would not give it anyway.
    derived = positional_criterion_ids([c.text for c in criteria])
    return [_entry(c, derived_id) for c, derived_id in zip(criteria, derived, strict=True)]


def _entry(criterion: Any, derived_id: str) -> dict[str, Any]:
    kept: dict[str, Any] = criterion.metadata.get("healthbench", {})
    weight = criterion.weight
    points: int | float = weight if kept.get("float_points") or not weight.is_integer() else int(
        weight)
    tags = list(criterion.tags)
    if criterion.axis is not None and f"axis:{criterion.axis}" not in tags:
        tags.append(f"axis:{criterion.axis}")
    entry: dict[str, Any] = {"criterion": criterion.text, "points": points, "tags": tags}
    extension = kept.get("extension_keys")
    if extension is None:  # not read from HealthBench: write what carries information
        extension = [k for k, needed in (
            ("id", criterion.id != derived_id),
            ("kind", criterion.kind is not CriterionKind.BINARY),
            ("options", bool(criterion.options)),
            ("provenance", criterion.provenance is not None
             and criterion.provenance.source != "physician")) if needed]
    for key in extension:
        if key == "id":
            entry["id"] = criterion.id
        elif key == "kind":
            entry["kind"] = criterion.kind.value
        elif key == "provenance":
            entry["provenance"] = (criterion.provenance.model_dump(exclude_none=True)
                                   if criterion.provenance is not None else None)
        else:
            entry["options"] = [o.model_dump(exclude_defaults=True) for o in criterion.options]
    entry.update(kept.get("extra", {}))
    return entry
