"""``assay convert`` for Autorubric datasets: dataset JSON <-> items + a label file (+ a rubric).

- dataset -> items: the items (each with its rubric, unless ``--rubric FILE`` takes the shared
  rubric out into that file) and the ground truth as a verdict JSONL label file (``--labels``,
  default ``TARGET.labels.jsonl`` next to the items), rater ``ground_truth``;
- items (+ labels, + rubric) -> dataset: the inverse; labels may be a verdict JSONL or another
  dataset (:func:`assay.io.labels.read_labels`), or verdicts already read (``assay convert``
  reads a run directory's judge verdicts through the run store).

Reading a dataset and converting it back gives the same JSON document.

Example:
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> doc = {"name": "bee", "prompt": "Bee sting?", "rubric": [
    ...     {"name": "scrape", "weight": 5.0, "requirement": "Says to scrape."}],
    ...     "items": [{"submission": "Scrape it.", "description": "", "ground_truth": ["MET"]}]}
    >>> _ = (folder / "bee.json").write_text(json.dumps(doc))
    >>> from assay.io.convert import convert_file
    >>> convert_file(folder / "bee.json", folder / "items.jsonl", None)  # doctest: +ELLIPSIS
    'wrote 1 items to .../items.jsonl; 1 labels to .../items.labels.jsonl'
    >>> convert_file(folder / "items.jsonl", folder / "back.json", "autorubric-dataset",
    ...              labels=folder / "items.labels.jsonl")  # doctest: +ELLIPSIS
    'wrote an Autorubric dataset of 1 items (1 labelled) to .../back.json'
    >>> json.loads((folder / "back.json").read_text()) == doc
    True
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.io.autorubric_dataset import KIND, META, read_dataset
from assay.io.autorubric_dataset_write import write_dataset
from assay.io.formats import Kind
from assay.io.labels import read_labels
from assay.verdict import Verdict


def default_labels_path(target: Path) -> Path:
    return target.with_name(f"{target.stem}.labels.jsonl")


def convert_dataset(source: Path, kind: Kind, target: Path, to: Kind, *,
                    labels: str | Path | list[Verdict] | None, rubric: str | Path | None,
                    atomic: Callable[..., Any]) -> str:
    """See the module docstring; ``atomic(target, write, issues)`` writes all or nothing."""
    if kind == KIND and to != KIND:
        return _to_items(source, target, to, labels, rubric, atomic)
    from assay.io import load_items, read_rubric

    if kind == KIND:
        data = read_dataset(source)
        items, found = data.items, data.labels
    else:
        items, found = load_items(source, format=kind), []
    if labels is not None:
        found = labels if isinstance(labels, list) else read_labels(labels).labels
    shared = read_rubric(rubric) if rubric is not None else None
    count = atomic(target, lambda tmp: write_dataset(items, found, tmp, rubric=shared,
                                                     name=target.stem), [])
    labelled = len({v.item_id for v in found} & {i.id for i in items})
    return f"wrote an Autorubric dataset of {count} items ({labelled} labelled) to {target}"


def _to_items(source: Path, target: Path, to: Kind, labels: str | Path | list[Verdict] | None,
              rubric: str | Path | None, atomic: Callable[..., Any]) -> str:
    from assay.io import write_items, write_rubric
    from assay.io.verdicts import write_verdicts

    if isinstance(labels, list):
        raise InputError(Issue(None, None, "--labels", "names the label file to write when "
                               "converting a dataset to items, not a run directory"))

    data = read_dataset(source)
    items = data.items
    notes = []
    if rubric is not None:
        if data.rubric is None:
            raise InputError(Issue(str(source), None, "rubric",
                                   "the dataset has no shared rubric to write to --rubric"))
        atomic(Path(rubric), lambda tmp: write_rubric(data.rubric, tmp), [])
        items = [i if (i.metadata.get(META) or {}).get("own_rubric")
                 else i.model_copy(update={"rubric": None}) for i in items]
        notes.append(f"the shared rubric to {rubric}")
    count = atomic(target, lambda tmp: write_items(items, tmp, format=to), [])
    if data.labels:
        labels_path = Path(labels) if labels is not None else default_labels_path(target)
        n = atomic(labels_path, lambda tmp: write_verdicts(data.labels, tmp), [])
        notes.append(f"{n} labels to {labels_path}")
    what = "HealthBench examples" if to == "healthbench" else "items"
    return "; ".join([f"wrote {count} {what} to {target}", *notes])
