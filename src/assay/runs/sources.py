"""Where a run's items come from: a file (streamed) or Python objects, plus HealthBench responses.

In HealthBench mode the items are HealthBench examples and the responses to grade come from a
JSONL of ``{"prompt_id": ..., "response": ...}`` lines, or are the examples' ideal completions
(``ideal=True``; examples without one are left out, as simple-evals does, and each is named
in :attr:`ItemSource.issues`: the run is then incomplete).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.item import Item
from assay.rubric import Rubric
from assay.verdict import Verdict


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def count_records(path: str | Path) -> int | None:
    """Non-blank lines of a JSONL file (for the progress bar); None for other formats."""
    if Path(path).suffix.lower() != ".jsonl":
        return None
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def sample_id(prompt_id: str, sample: int) -> str:
    """The item id of sample ``sample`` of a prompt (``assay sample --n``), as ``--responses``
    keys it and grading names it.

    >>> sample_id("q1", 2)
    'q1#2'
    """
    return f"{prompt_id}#{sample}"


def split_sample_id(item_id: str) -> tuple[str, int | None]:
    """A sample's item id as (prompt id, sample number); any other id as (itself, None).

    >>> split_sample_id("q1#2"), split_sample_id("q1")
    (('q1', 2), ('q1', None))
    """
    prompt_id, hash_, number = item_id.rpartition("#")
    return (prompt_id, int(number)) if hash_ and number.isdigit() else (item_id, None)


def read_responses(path: str | Path) -> dict[str, str]:
    """``prompt_id`` (or ``item_id``/``id``/``index``) → ``response`` (or ``completion``/
    ``reference_response``) from a JSONL.

    Seed 000's released ``reference_responses.jsonl`` (``{"index": 0, "reference_response":
    ...}``) is read as it is: an integer index is the id, and an empty reference (12 of its
    254) is no response, so its item is left out of the run and counted as such.

    A line with ``"sample": K`` (``assay sample --n``) is sample K of its prompt, keyed
    ``PROMPT_ID#K`` (:func:`sample_id`); each sample is graded as its own item."""
    from assay.io.jsonl import iter_jsonl

    responses: dict[str, str] = {}
    sampled: dict[str, bool] = {}  # prompt id -> whether its lines carry a sample number
    issues: list[Issue] = []
    for number, record in iter_jsonl(path, source=str(path)):
        if isinstance(record, Issue):
            issues.append(record)
            continue
        if not isinstance(record, dict):
            issues.append(Issue(str(path), number, None, "expected a JSON object"))
            continue
        key = next((k for k in ("prompt_id", "item_id", "id", "index") if k in record), None)
        text_key = next((k for k in ("response", "completion", "reference_response")
                         if k in record), None)
        if key == "index" and type(record[key]) is int:
            record = {**record, key: str(record[key])}
        if key is None:
            issues.append(Issue(str(path), number, "prompt_id", "missing"))
        elif text_key is None or not isinstance(record[text_key], str):
            issues.append(Issue(str(path), number, "response", "missing or not a string"))
        elif text_key == "reference_response" and not record[text_key].strip():
            continue  # a released empty reference: no response, the item is left out
        elif "sample" in record and (type(record["sample"]) is not int or record["sample"] < 0):
            issues.append(Issue(str(path), number, "sample", "expected a whole number >= 0"))
        else:
            sample = record.get("sample")
            rid = record[key] if sample is None else sample_id(record[key], sample)
            if rid in responses:
                issues.append(Issue(str(path), number, key, f"duplicate id {rid!r}"))
            elif sampled.get(record[key], sample is not None) != (sample is not None):
                issues.append(Issue(str(path), number, "sample", f"{record[key]!r} has lines "
                                    "with and without a sample number"))
            else:
                responses[rid] = record[text_key]
                sampled[record[key]] = sample is not None
    if issues:
        raise InputError(issues)
    return responses


@dataclass
class ItemSource:
    """Items to grade, streamed; bad records are collected in ``issues`` and skipped."""

    path: Path | None = None
    items: list[Item] | None = None
    responses: dict[str, str] | None = None
    responses_path: str | None = None
    """Where ``responses`` came from (stored with the run so ``--resume`` can re-read them)."""
    ideal: bool = False
    issues: list[Issue] = field(default_factory=list)
    skipped_without_response: int = 0
    reviewed: dict[str, Rubric] | None = None
    """Reviewed rubric versions by rubric id (``assay grade --rubric RUN/reviewed-rubrics``): an
    item whose own rubric has one is graded with it."""
    may_be_empty: bool = False
    """Items are held back elsewhere (a taxonomy run's failed routings): an empty source is then
    a run with nothing graded yet, whose caller settles its status, not an empty input."""
    _dataset_read: bool = field(default=False, init=False, repr=False)
    _dataset_cache: Any = field(default=None, init=False, repr=False)
    _sample_index: dict[str, list[int]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.items is not None:
            _refuse_repeated_ids(self.items)

    def fingerprint(self) -> str:
        if self.path is not None and self.reviewed:  # the same file under other rubrics
            digest = hashlib.sha256(file_sha256(self.path).encode())
            for rubric_id in sorted(self.reviewed):
                digest.update(self.reviewed[rubric_id].model_dump_json().encode())
            return digest.hexdigest()
        if self.path is not None:
            return file_sha256(self.path)
        digest = hashlib.sha256()
        for item in self.items or []:
            digest.update(item.model_dump_json().encode())
        return digest.hexdigest()

    def total(self) -> int | None:
        if self.items is not None:
            return len(self.items)
        if self.responses is not None and not self.ideal:
            return len(self.responses)
        if self.path is None:
            return None
        dataset = self._dataset()
        return len(dataset.entries) if dataset is not None else count_records(self.path)

    def __iter__(self) -> Iterator[Item]:
        return self._with_responses(self._with_reviewed(self._raw()))

    def _with_reviewed(self, items: Iterable[Item]) -> Iterable[Item]:
        if not self.reviewed:
            return items
        reviewed = self.reviewed
        return (item.model_copy(update={"rubric": reviewed[item.rubric.id]})
                if item.rubric is not None and item.rubric.id in reviewed else item
                for item in items)

    def human_labels(self) -> list[Verdict]:
        """Labels the item file carries itself (an Autorubric dataset's ground truth)."""
        dataset = self._dataset()
        return dataset.labels if dataset is not None else []

    def _dataset(self) -> Any:
        """The Autorubric dataset the items come from, or None (looked up once)."""
        if self._dataset_read:
            return self._dataset_cache
        self._dataset_read = True
        if self.path is not None and Path(self.path).suffix.lower() in (".json", ".yaml", ".yml"):
            from assay.io.autorubric_dataset import KIND, read_dataset
            from assay.io.formats import detect_format

            if detect_format(self.path).kind == KIND:
                self._dataset_cache = read_dataset(self.path, strict=False)
        return self._dataset_cache

    def _raw(self) -> Iterable[Item]:
        if self.items is not None:
            return iter(self.items)
        from assay.io import iter_items

        assert self.path is not None  # a source has its items or a path
        return iter_items(self.path, issues=self.issues)

    def _with_responses(self, items: Iterable[Item]) -> Iterator[Item]:
        """The items with the responses to grade. Under ``ideal`` an item without an ideal
        completion is a skipped record (named in :attr:`issues`); with ``responses``, an item
        that has none is not part of the run (counted), and a response whose id matches no
        item is a skipped record, named once the items are read through."""
        where = str(self.path) if self.path is not None else "items"
        matched: set[str] = set()
        for item in items:
            if self.ideal:
                if not item.reference:
                    self.issues.append(Issue(where, None, f"item[{item.id}]",
                                             "no ideal completion (ideal_completions_data."
                                             "ideal_completion) to grade under --ideal: "
                                             "left out"))
                    continue
                item = item.model_copy(update={"response": item.reference})
            elif self.responses is not None:
                response = self.responses.get(item.id)
                if response is None:
                    samples = self._samples().get(item.id)
                    if not samples:
                        self.skipped_without_response += 1
                        continue
                    for sample in samples:
                        key = sample_id(item.id, sample)
                        matched.add(key)
                        yield item.model_copy(update={
                            "id": key, "response": self.responses[key],
                            "metadata": {**item.metadata, "prompt_id": item.id, "sample": sample}})
                    continue
                matched.add(item.id)
                item = item.model_copy(update={"response": response})
            yield item
        if self.responses is not None and not self.ideal:
            self.issues.extend(
                Issue(self.responses_path or "responses", None, "prompt_id",
                      f"{key!r} matches no item of {where}: not graded")
                for key in self.responses if key not in matched)

    def _samples(self) -> dict[str, list[int]]:
        """Sample numbers by prompt id, from the ``PROMPT_ID#K`` keys of :attr:`responses`."""
        if self._sample_index is None:
            index: dict[str, list[int]] = {}
            for key in self.responses or {}:
                prompt_id, number = split_sample_id(key)
                if number is not None:
                    index.setdefault(prompt_id, []).append(number)
            self._sample_index = {k: sorted(v) for k, v in index.items()}
        return self._sample_index


def _refuse_repeated_ids(items: list[Item]) -> None:
    """Items given as objects must have distinct ids, as a file's must: a run keys everything
    (calls, verdicts, scores) by item id."""
    first: dict[str, int] = {}
    issues = []
    for position, item in enumerate(items):
        if item.id in first:
            issues.append(Issue("items", None, f"items[{position}].id",
                                f"duplicate id {item.id!r} (first at items[{first[item.id]}])"))
        else:
            first[item.id] = position
    if issues:
        raise InputError(issues)
