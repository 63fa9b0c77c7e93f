"""One side of ``assay compare``: the verdicts it scores, their rubrics and how they score.

A run directory gives the aggregated verdict of each criterion of each finished item, combined
from the judges' votes by the run's own aggregation (``judge`` set: that judge's votes alone),
scored by the run's own formula and abstention, with the human labels stored in the run (an
item with a criterion not graded, by a failed or skipped call, is left out and named). A
verdict file gives its verdicts as they are (``judge`` set: that rater's lines alone), scored by
the default formula unless one is given. So ``assay compare`` and ``assay report`` see the same
verdicts, formula and labels for the same pair of runs.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "v.jsonl"
    >>> _ = path.write_text('{"item_id": "q1", "criterion_id": "c", "verdict": "MET"}\\n')
    >>> side = verdict_set(path)
    >>> len(side.verdicts), side.formula, side.compared
    (1, None, 'verdicts')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InputError, Issue
from assay.metrics.label_sources import stored_labels
from assay.metrics.sources import Rubrics, open_run, read_rubrics
from assay.scoring import Abstention
from assay.verdict import Verdict


@dataclass(frozen=True)
class VerdictSet:
    """What one side of a comparison scores (see the module docstring)."""

    verdicts: list[Verdict]
    rubrics: Rubrics | None
    compared: str
    """What the verdicts are: "aggregated verdicts (binary=majority,…)", "judge J's votes",
    "verdicts"."""
    formula: str | None = None  # a run's own formula (None for a verdict file)
    abstention: Abstention | None = None  # a run's own abstention (None for a verdict file)
    labels: list[Verdict] = field(default_factory=list)  # stored with a run
    ungraded: list[str] = field(default_factory=list)
    """A run's items left out: a criterion has no verdict (a failed or skipped call)."""


def verdict_set(path: str | Path, rubric: str | Path | None = None, *,
                judge: str | None = None) -> VerdictSet:
    """The verdicts of a run directory or a verdict file, as one side of a comparison."""
    path = Path(path)
    rubrics = read_rubrics(rubric) if rubric is not None else None
    if path.is_dir():
        return _run_set(path, rubrics, judge)
    from assay.metrics.sources import verdicts_of

    verdicts = verdicts_of(path)
    if judge is None:
        return VerdictSet(verdicts, rubrics, "verdicts")
    mine = [v for v in verdicts if v.judge == judge]
    if not mine:
        known = sorted({v.judge for v in verdicts})
        raise InputError(Issue(str(path), None, "--judge",
                               f"no verdicts from judge {judge!r} (its judges: "
                               f"{', '.join(known)})"))
    return VerdictSet(mine, rubrics, f"judge {judge}'s verdicts")


def _run_set(path: Path, rubrics: Rubrics | None, judge: str | None) -> VerdictSet:
    from assay.runs.results import iter_final_verdicts, run_scoring, ungraded_criteria

    store = open_run(path)
    try:
        scoring = run_scoring(store.config(), source=str(path), judge=judge)
        verdicts: list[Verdict] = []
        per_item = {}
        ungraded = []
        for item, rubric, finals in iter_final_verdicts(store, scoring):
            if ungraded_criteria(rubric, finals, scoring):  # no score: not compared (fail closed)
                ungraded.append(item.id)
                continue
            per_item[item.id] = rubric
            verdicts.extend(a.verdict for a in finals.values() if a.verdict is not None)
    finally:
        store.close()
    compared = (f"judge {judge}'s votes" if judge is not None
                else f"aggregated verdicts ({scoring.aggregation})")
    return VerdictSet(verdicts, rubrics or Rubrics(per_item=per_item), compared,
                      scoring.formula, scoring.abstention, stored_labels(path), ungraded)


def own_scoring(path: str | Path) -> tuple[str | None, Abstention | None]:
    """A run directory's own formula and abstention; ``(None, None)`` for a verdict file."""
    path = Path(path)
    if not path.is_dir():
        return None, None
    from assay.runs.results import Scoring

    store = open_run(path)
    try:
        scoring = Scoring.from_config(store.config())
    finally:
        store.close()
    return scoring.formula, scoring.abstention
