"""Autorubric dataset files: ``{name, prompt, rubric, items: [{submission, ground_truth}]}``.

Autorubric (delip/autorubric) keeps a labelled evaluation set as one JSON document, its
``RubricDataset``: a task ``prompt``, a ``rubric`` (a list of criteria, or
``{guidelines, criteria}``), and ``items``, each with a ``submission``, a ``description`` and
optionally ``ground_truth`` (one label per criterion, in rubric order: ``MET`` / ``UNMET`` /
``CANNOT_ASSESS`` for binary criteria, an option label for ordinal and nominal ones, matched
case- and space-insensitively), a per-item ``rubric``, ``prompt`` or ``reference_submission``.

Reading one gives Assay items and human labels:

- a ``submission`` that is a JSON-encoded list of chat messages (CHARM-100) becomes the item's
  conversation, and its last assistant turn (which must end the chat) the response; the
  dataset prompt, an instruction about the whole set there, is kept in the item's metadata;
- any other ``submission`` is the response as plain text, answering the item's (or the
  dataset's) prompt, which becomes the user message;
- the rubric (the item's own, else the dataset's) is attached to every item, criterion ids are
  the criteria's ``name`` (``C1``, ``C2``... when unnamed, as Autorubric labels them);
- ``ground_truth`` becomes one :class:`~assay.verdict.Verdict` per criterion, rater
  :data:`GROUND_TRUTH`.

Everything needed to write the same document back (:mod:`.autorubric_dataset_write`) is kept
in ``item.metadata["autorubric"]``, so a dataset survives a round trip through items and label
files unchanged.

Example:
    >>> doc = {"name": "bee", "prompt": "Bee sting: what now?",
    ...        "rubric": [{"name": "scrape", "weight": 5, "requirement": "Says to scrape."}],
    ...        "items": [{"submission": "Scrape it out.", "description": "good",
    ...                   "ground_truth": ["MET"]}]}
    >>> data = parse_dataset(doc, source="bee.json")
    >>> [(i.id, i.prompt, i.response) for i in data.items]
    [('item-000', 'Bee sting: what now?', 'Scrape it out.')]
    >>> [(v.criterion_id, v.decision.value, v.judge) for v in data.labels]
    [('scrape', 'MET', 'ground_truth')]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.io import autorubric
from assay.io.errors import Loc, field_path, show
from assay.item import Item, Message
from assay.rubric.rubric import Rubric
from assay.verdict import Decision, Verdict

KIND = "autorubric-dataset"
GROUND_TRUTH = "ground_truth"
META = "autorubric"
BINARY_LABELS = tuple(v.value for v in Decision)
ITEM_FIELDS = ("submission", "description", "ground_truth", "rubric", "reference_submission",
               "prompt")
DATASET_FIELDS = ("name", "prompt", "rubric", "reference_submission", "items")
LineOf = Callable[[Loc], "int | None"]


def is_autorubric_dataset(document: Any) -> bool:
    """A JSON object with a list of ``items`` and a ``rubric`` key, or items with a
    ``submission`` (Autorubric's ``RubricDataset.to_json`` form)."""
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        return False
    items = document["items"]
    return "rubric" in document or (bool(items) and isinstance(items[0], dict)
                                    and "submission" in items[0])


@dataclass
class DatasetEntry:
    """One dataset item: the Assay item and its labels, or the problems that stopped it."""

    index: int
    item: Item | None
    labels: list[Verdict] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


@dataclass
class Dataset:
    """An Autorubric dataset read as Assay items and human labels (``issues`` if any)."""

    name: str | None
    rubric: Rubric | None
    entries: list[DatasetEntry]
    issues: list[Issue] = field(default_factory=list)  # dataset-level problems

    @property
    def items(self) -> list[Item]:
        return [e.item for e in self.entries if e.item is not None and not e.issues]

    @property
    def labels(self) -> list[Verdict]:
        return [v for e in self.entries if e.item is not None and not e.issues for v in e.labels]

    @property
    def all_issues(self) -> list[Issue]:
        return [*self.issues, *(i for e in self.entries for i in e.issues)]


def read_dataset(path: str | Path, *, strict: bool = True) -> Dataset:
    """The dataset in ``path``; with ``strict`` any problem raises one :class:`InputError`."""
    from assay.io.yaml_json import line_finder, load_document

    document = load_document(path)
    data = parse_dataset(document, source=str(path), line_of=line_finder(path),
                         default_name=Path(path).stem)
    if strict and data.all_issues:
        raise InputError(data.all_issues)
    return data


def item_id(index: int, count: int) -> str:
    """``item-007``: the item's position, zero-padded to the width the dataset needs."""
    return f"item-{index:0{max(3, len(str(max(count - 1, 0))))}d}"


def parse_dataset(
    document: Any, *, source: str | None = None, line_of: LineOf | None = None,
    default_name: str = "dataset",
) -> Dataset:
    """Items, labels and every problem of a parsed dataset document (never raises)."""
    where = _Where(source, line_of)
    if not is_autorubric_dataset(document):
        return Dataset(None, None, [], [where.issue((), "expected an Autorubric dataset: an "
                                                    "object with rubric and items")])
    name = document.get("name")
    issues: list[Issue] = []
    rubric = None
    if document.get("rubric") is not None:
        rubric, rubric_issues = _rubric(document["rubric"], str(name or default_name),
                                        ("rubric",), where)
        issues += rubric_issues
    header = {k: document[k] for k in document if k not in ("rubric", "items")}
    for key in ("prompt", "reference_submission"):
        if header.get(key) is not None and not isinstance(header[key], str):
            issues.append(where.issue((key,), f"expected a string, got {show(header[key])}"))
    raw_items = document["items"]
    shared_broken = document.get("rubric") is not None and rubric is None
    entries = [_entry(i, entry, len(raw_items), header, rubric, shared_broken, where)
               for i, entry in enumerate(raw_items)]
    return Dataset(name, rubric, entries, issues)


# -- internals --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Where:
    source: str | None
    line_of: LineOf | None

    def issue(self, loc: Loc, message: str) -> Issue:
        line = self.line_of(loc) if self.line_of is not None else None
        return Issue(self.source, line, field_path(loc) or None, message)


def _rubric(entries: Any, rubric_id: str, loc: Loc, where: _Where) -> tuple[Rubric | None, list[Issue]]:
    guidelines = None
    criteria_loc = loc
    if isinstance(entries, dict) and "criteria" in entries:
        guidelines, entries, criteria_loc = entries.get("guidelines"), entries["criteria"], (*loc, "criteria")
    if not isinstance(entries, list):
        return None, [where.issue(loc, "expected a list of criteria")]
    named = [named_entry(e, n) for n, e in enumerate(entries)]
    try:
        line_of = where.line_of
        rubric = autorubric.to_rubric(
            named, id=rubric_id, source=where.source,
            line_of=(lambda sub: line_of((*criteria_loc, *sub))) if line_of else None)
    except InputError as exc:
        prefix = field_path(criteria_loc)
        return None, [replace(i, field=prefix + (i.field or "")) for i in exc.issues]
    criteria = []
    for criterion, original in zip(rubric.criteria, entries):
        if autorubric.criterion_entry(criterion) != original:  # keep the exact form for the round trip
            meta = {**criterion.metadata, META: {"entry": original}}
            criterion = criterion.model_copy(update={"metadata": meta})
        criteria.append(criterion)
    update: dict[str, Any] = {"criteria": criteria}
    if guidelines is not None:
        update["guidelines"] = guidelines
    return rubric.model_copy(update=update), []


def named_entry(entry: Any, index: int) -> Any:
    if isinstance(entry, dict) and not entry.get("name"):
        return {**entry, "name": f"C{index + 1}"}
    return entry


def _entry(index: int, raw: Any, count: int, header: dict[str, Any], shared: Rubric | None,
           shared_broken: bool, where: _Where) -> DatasetEntry:
    loc: Loc = ("items", index)
    entry = DatasetEntry(index, None)
    if not isinstance(raw, dict):
        entry.issues.append(where.issue(loc, f"expected an object, got {show(raw)}"))
        return entry
    issues = entry.issues
    submission = raw.get("submission")
    if not isinstance(submission, str):
        message = ("required field is missing" if submission is None
                   else f"expected a string, got {show(submission)}")
        issues.append(where.issue((*loc, "submission"), message))
    for key in ("description", "prompt", "reference_submission"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            issues.append(where.issue((*loc, key), f"expected a string, got {show(raw[key])}"))
    own_rubric = None
    if raw.get("rubric") is not None:
        own_rubric, problems = _rubric(raw["rubric"], f"{header.get('name') or 'dataset'}-{index}",
                                       (*loc, "rubric"), where)
        issues += problems
    rubric = own_rubric or shared
    if rubric is None and raw.get("rubric") is None and shared_broken:
        return entry  # the shared rubric's problems are reported once, for the dataset
    if rubric is None and not issues and raw.get("rubric") is None:
        issues.append(where.issue((*loc, "rubric"),
                                  "no rubric: neither the item nor the dataset has one"))
    prompt = raw.get("prompt") if raw.get("prompt") is not None else header.get("prompt")
    if prompt is None or prompt == "":
        issues.append(where.issue((*loc, "prompt"),
                                  "no prompt: neither the item nor the dataset has one"))
    if issues:
        return entry
    # What the checks above guarantee when they found nothing:
    assert isinstance(submission, str) and isinstance(prompt, str) and rubric is not None
    the_id = item_id(index, count)
    meta = _metadata(index, raw, header, own_rubric is not None)
    chat = chat_messages(submission)
    if chat is not None:
        messages, response = chat[:-1], chat[-1].content
        meta["chat"] = True
        if encode_chat(chat) != submission:
            meta["submission"] = submission  # an encoding we do not reproduce byte for byte
    else:
        messages, response = [Message(role="user", content=prompt)], submission
    reference = raw.get("reference_submission", header.get("reference_submission"))
    try:
        entry.item = Item(id=the_id, messages=messages, response=response, reference=reference,
                          rubric=rubric, metadata={META: meta})
    except ValidationError as exc:  # pragma: no cover - the fields were checked above
        issues.append(where.issue(loc, str(exc)))
        return entry
    entry.labels = _labels(raw.get("ground_truth"), the_id, rubric, (*loc, "ground_truth"),
                           where, issues)
    return entry


def _metadata(index: int, raw: dict[str, Any], header: dict[str, Any], own_rubric: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"index": index, "dataset": header}
    for key in ("description", "prompt", "reference_submission"):
        if key in raw:
            meta[key] = raw[key]
    if own_rubric:
        meta["own_rubric"] = True
    if "ground_truth" in raw and raw["ground_truth"] is None:
        meta["ground_truth"] = None
    extra = {k: v for k, v in raw.items() if k not in ITEM_FIELDS}
    if extra:
        meta["extra"] = extra
    return meta


def chat_messages(submission: str) -> list[Message] | None:
    """The messages of a JSON-encoded chat ending with an assistant turn, else None."""
    text = submission.lstrip()
    if not text.startswith("["):
        return None
    try:
        value = json.loads(submission)
    except ValueError:
        return None
    if not (isinstance(value, list) and len(value) >= 2 and all(isinstance(m, dict) for m in value)):
        return None
    try:
        messages = [Message.model_validate(m) for m in value]
    except ValidationError:
        return None
    if messages[-1].role != "assistant":
        return None
    return messages


def encode_chat(messages: list[Message]) -> str:
    """A chat as Autorubric's examples encode it: ``json.dumps`` of role/content objects."""
    return json.dumps([{"role": m.role, "content": m.content} for m in messages])


def _labels(values: Any, the_id: str, rubric: Rubric, loc: Loc, where: _Where,
            issues: list[Issue]) -> list[Verdict]:
    if values is None:
        return []
    if not isinstance(values, list):
        issues.append(where.issue(loc, f"expected a list of labels, got {show(values)}"))
        return []
    criteria = rubric.criteria
    if len(values) != len(criteria):
        issues.append(where.issue(loc, f"{len(values)} labels for the {len(criteria)} criteria "
                                       f"of the rubric (one per criterion, in rubric order)"))
        return []
    labels = []
    for j, (value, criterion) in enumerate(zip(values, criteria)):
        at = (*loc, j)
        if criterion.is_multi_choice:
            options = ", ".join(json.dumps(o.label, ensure_ascii=False) for o in criterion.options)
            try:
                if not isinstance(value, str):
                    raise KeyError(value)
                criterion.option(value)
            except KeyError:
                issues.append(where.issue(at, f"{show(value)} is not an option of "
                                              f"{criterion.kind.value} criterion {criterion.id!r} "
                                              f"(options: {options})"))
                continue
            labels.append(Verdict(item_id=the_id, criterion_id=criterion.id,
                                  judge=GROUND_TRUTH, option=value))
        elif value in BINARY_LABELS:
            labels.append(Verdict(item_id=the_id, criterion_id=criterion.id,
                                  judge=GROUND_TRUTH, decision=value))
        else:
            issues.append(where.issue(at, f"{show(value)} is not a verdict of binary criterion "
                                          f"{criterion.id!r} (MET, UNMET or CANNOT_ASSESS)"))
    return labels
