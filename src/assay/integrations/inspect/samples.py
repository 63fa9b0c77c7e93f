"""An Inspect sample (a scorer's ``TaskState`` or a log's ``EvalSample``) as an Assay item.

============================================  ============================================
Inspect                                       Assay :class:`~assay.item.Item`
============================================  ============================================
``sample id`` (epoch 1); ``ID#E`` (epoch E)    ``Item.id`` (:func:`assay.runs.sources.sample_id`)
``metadata["conversation"]``, else ``input``  ``Item.messages`` (role and text of each)
``output.completion``                         ``Item.response``
``metadata["health_memory"]``                 ``Item.health_memory`` (what a router reads)
``metadata["rubrics"]`` + ``example_tags``    ``Item.rubric`` read as a HealthBench row
                                              (:func:`assay.io.healthbench.example_to_item`)
============================================  ============================================

``inspect_evals``' HealthBench task (``record_to_sample``) stores the row's rubrics in
``metadata["rubrics"]`` with the example's ``theme:`` and ``physician_agreed_category:`` tags
appended to every criterion's tags; those copies are taken off again, so the criteria are the
row's own (the same ids, axes and rubric hash as ``assay grade --healthbench`` reading the row).

Example:
    >>> item = item_from_sample("p1", 1, "Bee sting?", {"rubrics": [
    ...     {"criterion": "Says to scrape the stinger.", "points": 5,
    ...      "tags": ["axis:accuracy", "theme:emergency_referrals"]}],
    ...     "example_tags": ["theme:emergency_referrals"]}, "Scrape it out.")
    >>> item.id, item.messages[0].content, item.rubric.criteria[0].tags, item.tags
    ('p1', 'Bee sting?', ['axis:accuracy'], ['theme:emergency_referrals'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.item import Item

SAMPLE_LEVEL_TAGS = ("theme:", "physician_agreed_category:")  # what inspect_evals copies


def item_id(sample_id: Any, epoch: int | None) -> str:
    """The item id of a sample's epoch: its id for epoch 1, ``ID#E`` for a later one.

    >>> item_id(7, 1), item_id("p1", 3)
    ('7', 'p1#3')
    """
    from assay.runs.sources import sample_id as numbered

    return str(sample_id) if not epoch or epoch <= 1 else numbered(str(sample_id), epoch)


def is_healthbench_metadata(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a sample's metadata holds HealthBench rubrics (``inspect_evals``' task)."""
    rubrics = (metadata or {}).get("rubrics")
    return isinstance(rubrics, list) and bool(rubrics) and all(
        isinstance(r, Mapping) and "criterion" in r and "points" in r for r in rubrics)


def item_from_sample(sample_id: Any, epoch: int | None, input: Any,
                     metadata: Mapping[str, Any] | None, completion: str | None) -> Item:
    """The item of one sample (see the module docstring); a malformed HealthBench rubric in
    the metadata is an :class:`InputError` naming the sample and field."""
    metadata = metadata or {}
    identifier = item_id(sample_id, epoch)
    messages = _messages(metadata.get("conversation"), input)
    if not is_healthbench_metadata(metadata):
        tags = metadata.get("example_tags")
        try:  # the health memory a router's guard and prompts read (a taxonomy's leaves)
            return Item(id=identifier, messages=messages, response=completion or None,
                        tags=list(tags) if isinstance(tags, list) else [],
                        health_memory=metadata.get("health_memory"))
        except ValidationError as exc:
            raise InputError([Issue(f"sample[{identifier}]", None,
                                    "metadata." + ".".join(str(p) for p in e["loc"]), e["msg"])
                              for e in exc.errors()]) from None
    from assay.io.healthbench import example_to_item

    example_tags = [str(t) for t in metadata.get("example_tags") or []]
    copied = {t for t in example_tags if t.startswith(SAMPLE_LEVEL_TAGS)}
    row = {"prompt_id": identifier, "prompt": messages, "example_tags": example_tags,
           "rubrics": [{**r, "tags": [t for t in r.get("tags", []) if t not in copied]}
                       for r in metadata["rubrics"]]}
    try:
        item = example_to_item(row, source=f"sample[{sample_id}].metadata")
    except InputError as exc:
        raise InputError([Issue(f"sample[{identifier}]", None, i.field, i.message)
                          for i in exc.issues]) from None
    return item.model_copy(update={"response": completion or None})


def _messages(conversation: Any, input: Any) -> list[dict[str, str]]:
    """``metadata["conversation"]`` when it is a list of role/content messages, else the
    sample's input: a string (one user turn) or chat messages (role and text of each)."""
    if isinstance(conversation, list) and conversation and all(
            isinstance(m, Mapping) and "role" in m and "content" in m for m in conversation):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in conversation]
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    if isinstance(input, Sequence):
        return [{"role": str(m.role), "content": m.text} for m in input]
    raise InputError(Issue(None, None, "input", f"expected text or chat messages, got "
                           f"{type(input).__name__}"))
