"""Write Autorubric dataset files from Assay items and label (verdict) files.

The inverse of :mod:`assay.io.autorubric_dataset`: items read from a dataset carry what
is needed in ``item.metadata["autorubric"]``, so reading a dataset and writing it back gives the
same JSON document. Items that never were a dataset work too:

- an item with a single user message becomes a plain-text submission (the response) with that
  message as its prompt (the dataset's prompt when every item shares it);
- any other conversation becomes a JSON-encoded chat list ending with the response, with the
  last user message as the item's prompt (Autorubric needs one);
- each item's labels (one per criterion, in rubric order) become its ``ground_truth``:
  ``MET``/``UNMET``/``CANNOT_ASSESS`` for binary criteria, the option label for multi-choice.
  An item without any label gets none; an item labelled on only some criteria is an error, as
  is an (item, criterion) labelled by several raters (pass one rater's labels).

Example:
    >>> from assay.item import Item
    >>> from assay.rubric import Rubric
    >>> from assay.verdict import Verdict
    >>> rubric = Rubric(id="bee", criteria=[{"id": "scrape", "text": "Scrape it.", "weight": 5}])
    >>> item = Item(id="q1", prompt="Bee sting?", response="Scrape it out.")
    >>> doc = dataset_document([item], [Verdict(item_id="q1", criterion_id="scrape",
    ...                                         verdict="MET")], rubric=rubric, name="bee")
    >>> doc["prompt"], doc["items"]
    ('Bee sting?', [{'submission': 'Scrape it out.', 'description': '', 'ground_truth': ['MET']}])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.io import autorubric
from assay.io.autorubric_dataset import META, chat_messages, encode_chat, named_entry
from assay.item import Item, Message
from assay.rubric.rubric import Rubric
from assay.verdict import Verdict


def write_dataset(items: Iterable[Item], labels: Iterable[Verdict], path: str | Path, *,
                  rubric: Rubric | None = None, name: str | None = None) -> int:
    """Write the dataset JSON; returns the number of items. Raises :class:`InputError`."""
    from assay.io.yaml_json import dump_document

    document = dataset_document(items, labels, rubric=rubric, name=name or Path(path).stem)
    dump_document(document, path)
    return len(document["items"])


def dataset_document(items: Iterable[Item], labels: Iterable[Verdict], *,
                     rubric: Rubric | None = None, name: str | None = None) -> dict[str, Any]:
    """The dataset as a JSON-ready dict (see the module docstring)."""
    items = list(items)
    if not items:
        raise InputError("no items: a dataset needs at least one")
    issues: list[Issue] = []
    by_item = _labels_by_item(labels, issues)
    header = next((i.metadata[META]["dataset"] for i in items if _meta(i).get("dataset")
                   is not None), None)
    shared = rubric if rubric is not None else _shared_rubric(items)
    if header is None:
        header = {"name": name} if name else {}
        prompts = {i.prompt for i in items if not _is_chat(i)}
        if len(prompts) == 1 and all(not _is_chat(i) for i in items):
            header["prompt"] = prompts.pop()
    out: dict[str, Any] = {k: v for k, v in header.items() if k not in ("rubric", "items")}
    out_items = [_item_entry(item, shared, header, by_item.pop(item.id, {}), issues)
                 for item in items]
    for item_id in by_item:
        issues.append(Issue("labels", None, item_id, "labels of an item that is not in the items"))
    if issues:
        raise InputError(issues)
    document: dict[str, Any] = {}
    for key in ("name", "prompt"):
        if key in out:
            document[key] = out.pop(key)
    document["rubric"] = rubric_entries(shared) if shared is not None else None
    document.update(out)
    document["items"] = out_items
    return document


def rubric_entries(rubric: Rubric) -> list[dict[str, Any]] | dict[str, Any]:
    """Autorubric's rubric form: a list of criteria, ``{guidelines, criteria}`` with guidelines.

    A criterion read from a dataset is written exactly as it was read, unless it was changed.
    """
    entries = [_criterion_entry(c, n) for n, c in enumerate(rubric.criteria)]
    return entries if rubric.guidelines is None else {"guidelines": rubric.guidelines,
                                                       "criteria": entries}


# -- internals --------------------------------------------------------------------------------

def _meta(item: Item) -> dict[str, Any]:
    return item.metadata.get(META) or {}


def _is_chat(item: Item) -> bool:
    meta = _meta(item)
    if "chat" in meta or "dataset" in meta:
        return bool(meta.get("chat"))
    return not (len(item.messages) == 1 and item.messages[0].role == "user")


def _criterion_entry(criterion, index: int) -> dict[str, Any]:
    original = (criterion.metadata.get(META) or {}).get("entry")
    plain = criterion.model_copy(update={"metadata": {
        k: v for k, v in criterion.metadata.items() if k != META}})
    if original is not None:
        try:
            same = autorubric.criterion_from_entry(named_entry(original, index)) == plain
        except ValueError:
            same = False
        if same:
            return original
    return autorubric.criterion_entry(plain)


def _bare(rubric: Rubric | None) -> Any:
    return None if rubric is None else rubric.model_dump(mode="json", exclude={"id"})


def _shared_rubric(items: Sequence[Item]) -> Rubric | None:
    """The rubric items not flagged with their own share, when they all share one."""
    candidates = [i for i in items if not _meta(i).get("own_rubric")]
    if not candidates:  # every item was read with its own rubric: the dataset had none
        return None
    first = candidates[0].rubric
    if first is None or any(_bare(i.rubric) != _bare(first) for i in candidates):
        return None
    return first


def _labels_by_item(labels: Iterable[Verdict], issues: list[Issue]) -> dict[str, dict[str, Verdict]]:
    out: dict[str, dict[str, Verdict]] = defaultdict(dict)
    raters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for label in labels:
        key = (label.item_id, label.criterion_id)
        raters[key].add(label.judge)
        earlier = out[label.item_id].get(label.criterion_id)
        if earlier is not None and (earlier.decision, earlier.option) != (label.decision, label.option):
            who = ", ".join(sorted(raters[key]))
            issues.append(Issue("labels", None, f"{label.item_id}/{label.criterion_id}",
                                f"several different labels (raters: {who}); a dataset holds one "
                                "label per criterion: pass one rater's labels"))
        out[label.item_id].setdefault(label.criterion_id, label)
    return out


def _item_entry(item: Item, shared: Rubric | None, header: dict[str, Any],
                labels: dict[str, Verdict], issues: list[Issue]) -> dict[str, Any]:
    meta = _meta(item)
    rubric = item.rubric or shared
    if rubric is None:
        issues.append(Issue("items", None, item.id, "no rubric: give --rubric or items that "
                                                    "carry their own"))
        return {}
    if item.response is None:
        issues.append(Issue("items", None, item.id, "no response: a dataset item needs a "
                                                    "submission"))
        return {}
    entry: dict[str, Any] = {"submission": _submission(item, meta)}
    if "description" in meta or "dataset" not in meta:
        entry["description"] = meta.get("description", "")
    ground_truth = _ground_truth(item, rubric, labels, issues)
    if ground_truth is not None or "ground_truth" in meta:
        entry["ground_truth"] = ground_truth
    if item.rubric is not None and (meta.get("own_rubric") or _bare(item.rubric) != _bare(shared)):
        entry["rubric"] = rubric_entries(item.rubric)
    reference = meta.get("reference_submission", header.get("reference_submission"))
    if "reference_submission" in meta or item.reference != reference:
        entry["reference_submission"] = item.reference
    prompt = _item_prompt(item, meta, header)
    if prompt is not None:
        entry["prompt"] = prompt
    entry.update(meta.get("extra") or {})
    return entry


def _item_prompt(item: Item, meta: dict[str, Any], header: dict[str, Any]) -> str | None:
    """The item-level prompt to write, if any: a plain-text item's user message when it is not
    the dataset's prompt (or was given per item); a chat item's own prompt."""
    if not _is_chat(item):
        return item.prompt if "prompt" in meta or item.prompt != header.get("prompt") else None
    if "dataset" in meta:
        return meta.get("prompt")
    return item.prompt


def _submission(item: Item, meta: dict[str, Any]) -> str:
    if not _is_chat(item):
        return item.response or ""
    chat = [*item.messages, Message(role="assistant", content=item.response or "")]
    raw = meta.get("submission")
    if raw is not None and chat_messages(raw) == chat:
        return raw
    return encode_chat(chat)


def _ground_truth(item: Item, rubric: Rubric, labels: dict[str, Verdict],
                  issues: list[Issue]) -> list[str] | None:
    if not labels:
        return None
    missing = [c.id for c in rubric.criteria if c.id not in labels]
    unknown = sorted(set(labels) - {c.id for c in rubric.criteria})
    if missing or unknown:
        what = (f"no label for criteria {', '.join(missing)}" if missing else
                f"labels for criteria not in its rubric: {', '.join(unknown)}")
        issues.append(Issue("labels", None, item.id, f"{what}; a dataset item is labelled on "
                                                     "every criterion or on none"))
        return None
    values = []
    for criterion in rubric.criteria:
        label = labels[criterion.id]
        if criterion.is_multi_choice and label.option is None and not label.abstained:
            issues.append(Issue("labels", None, f"{item.id}/{criterion.id}",
                                f"expected an option label, got {label.decision}"))
        values.append(label.option if label.option is not None else str(label.decision))  # StrEnum
    return values
