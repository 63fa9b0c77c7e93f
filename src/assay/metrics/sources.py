"""Where metrics read their inputs: verdict / label sources and rubrics.

A source of verdicts is a verdict JSONL file (read by :func:`assay.io.read_verdicts`) or a run
directory (read through its run store). Rubrics come from a rubric file by the one rule of
:func:`assay.io.read_rubric_file` (a rubric, Autorubric list or taxonomy applied to every item,
or an item file such as HealthBench JSONL whose items carry their own rubrics), or from a run
directory's stored rubrics.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "v.jsonl"
    >>> _ = path.write_text('{"item_id": "q1", "criterion_id": "c", "verdict": "MET"}\\n')
    >>> [v.decision.value for v in verdicts_of(path)]
    ['MET']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import InputError, Issue
from assay.metrics.labels import CriterionInfo
from assay.rubric.criterion import Criterion
from assay.rubric.rubric import Rubric
from assay.scoring.rubrics import ItemRubrics
from assay.verdict import Verdict

if TYPE_CHECKING:
    from assay.runs.store import RunStore


def verdicts_of(source: str | Path) -> list[Verdict]:
    """All verdicts of a source: a run directory's stored votes, else a verdict JSONL file
    (bad lines reported together as ``file:line: field: message``)."""
    source = Path(source)
    if source.is_dir():
        return run_verdicts(source)
    from assay.io.verdicts import read_verdicts

    return read_verdicts(source)


def open_run(path: str | Path) -> RunStore:
    """The store of a run directory, read-only; an :class:`InputError` naming ``path`` when it
    cannot be opened (close it when done)."""
    from assay.errors import ConfigError
    from assay.runs.store import RunStore

    try:
        return RunStore.open(path)
    except ConfigError as exc:
        raise InputError(Issue(str(path), None, None, str(exc))) from None


def run_verdicts(path: Path) -> list[Verdict]:
    """Every judge's stored verdicts in a run directory (``assay grade --run-dir``)."""
    store = open_run(path)
    try:
        return [v for _, batch in store.iter_votes() for v in batch]
    finally:
        store.close()


def run_labels(source: str | Path) -> list[Verdict]:
    """The human labels stored in a run directory by ``assay review`` (``RUN/labels.sqlite``);
    an :class:`InputError` saying what to do when there are none."""
    from assay.review.labels import RunLabels

    source = Path(source)
    if not source.is_dir() or not RunLabels.exists(source):
        raise InputError(Issue(str(source), None, "--labels",
                               "no human labels: give --labels FILE, or label the run with "
                               "assay review"))
    with RunLabels.open(source) as labels:
        found = labels.verdicts()
    if not found:
        raise InputError(Issue(str(source), None, "--labels", "the run's label store is empty"))
    return found


def run_rubrics(path: Path) -> Rubrics:
    """The rubric of every item of a run directory, as stored when it was graded."""
    from assay.runs.store import RunStore

    store = RunStore.open(path)
    try:
        cache: dict[str, Rubric] = {}
        per_item = {}
        for _, item, digest in store.iter_items():
            if digest not in cache:
                cache[digest] = store.rubric(digest)
            per_item[item.id] = cache[digest]
        return Rubrics(per_item=per_item)
    finally:
        store.close()


def read_source(path: str | Path, rubric: str | Path | None = None) -> tuple[list[Verdict], Rubrics | None]:
    """Verdicts of SOURCE (verdict JSONL or run directory) and the rubrics that apply:
    ``rubric`` when given, else a run directory's own rubrics, else None (to be inferred)."""
    path = Path(path)
    verdicts = verdicts_of(path)
    if rubric is not None:
        return verdicts, read_rubrics(rubric)
    return verdicts, (run_rubrics(path) if path.is_dir() else None)


class Rubrics(ItemRubrics):
    """The criteria of each item (the one lookup, :class:`assay.scoring.ItemRubrics`), with
    the metrics' per-verdict criterion lookup."""

    def lookup(self, verdicts: Iterable[Verdict]) -> dict[tuple[str, str], CriterionInfo]:
        """(item, criterion) → CriterionInfo for every verdict whose criterion is known."""
        cache: dict[int, dict[str, CriterionInfo]] = {}
        out: dict[tuple[str, str], CriterionInfo] = {}
        for v in verdicts:
            rubric = self.rubric(v.item_id)
            if rubric is None:
                continue
            infos = cache.get(id(rubric))
            if infos is None:
                infos = {c.id: CriterionInfo.from_criterion(c) for c in rubric.criteria}
                cache[id(rubric)] = infos
            if v.criterion_id in infos:
                out[(v.item_id, v.criterion_id)] = infos[v.criterion_id]
        return out


def read_rubrics(path: str | Path) -> Rubrics:
    """The rubrics of a rubric file (:func:`assay.io.read_rubric_file`: a rubric shared by all
    items, or an item file with per-item rubrics) as a lookup."""
    from assay.io.rubric_files import read_rubric_file

    found = read_rubric_file(path)
    return Rubrics(shared=found.shared, per_item=found.per_item)


def inferred_rubrics(verdicts: Iterable[Verdict]) -> Rubrics:
    """Without a rubric: each item's binary criteria seen in ``verdicts``, weight 1 each.

    Scores then are pass rates (the share of criteria MET). Option verdicts cannot be scored
    without their option values and are left out.
    """
    ids: dict[str, list[str]] = {}
    for v in verdicts:
        if v.option is None:
            ids.setdefault(v.item_id, [])
            if v.criterion_id not in ids[v.item_id]:
                ids[v.item_id].append(v.criterion_id)
    return Rubrics(per_item={
        item: Rubric(id=item, criteria=[Criterion(id=c, text=c) for c in cids])
        for item, cids in ids.items()
    })


def judges_of(verdicts: Iterable[Verdict]) -> list[str]:
    return sorted({v.judge for v in verdicts})


def by_judge(verdicts: Iterable[Verdict]) -> Mapping[str, list[Verdict]]:
    out: dict[str, list[Verdict]] = {}
    for v in verdicts:
        out.setdefault(v.judge, []).append(v)
    return out
