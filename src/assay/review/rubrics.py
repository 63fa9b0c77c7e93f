"""Saving a reviewed rubric: each criterion accepted, edited or rejected, as a new version.

The new version keeps the rubric's id, bumps ``version`` past every version already saved in
the folder, and records its provenance: the parent version and its content hash, the reviewer,
the time and each criterion's decision. An edited criterion keeps its id (so verdicts stay
comparable) and notes the edit in its own provenance; a rejected one is dropped.

Example:
    >>> import tempfile, pathlib
    >>> from assay.rubric import Criterion, Rubric
    >>> rubric = Rubric(id="r", criteria=[Criterion(id="a", text="Says A."),
    ...                                   Criterion(id="b", text="Says B.")])
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> path = save_reviewed_rubric(rubric, [RubricDecision("a", "accept"),
    ...                                      RubricDecision("b", "reject")], folder, reviewer="dr_a")
    >>> path.name
    'r.v2.yaml'
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.rubric import Rubric
from assay.rubric.criterion import Provenance

ACTIONS = ("accept", "edit", "reject")


@dataclass(frozen=True)
class RubricDecision:
    criterion_id: str
    action: str
    text: str = ""
    weight: float | None = None


def save_reviewed_rubric(
    rubric: Rubric,
    decisions: Sequence[RubricDecision],
    folder: str | Path,
    *,
    reviewer: str,
    source: str | None = None,
) -> Path:
    """Apply ``decisions`` to ``rubric`` and write the new version in ``folder`` (YAML)."""
    by_id = {d.criterion_id: d for d in decisions}
    unknown = set(by_id) - {c.id for c in rubric.criteria}
    if unknown:
        raise InputError(Issue(None, None, "criterion", f"not in rubric {rubric.id!r}: "
                                                        f"{', '.join(sorted(unknown))}"))
    kept = []
    for criterion in rubric.criteria:
        decision = by_id.get(criterion.id, RubricDecision(criterion.id, "accept"))
        if decision.action not in ACTIONS:
            raise InputError(Issue(None, None, f"criterion {criterion.id}",
                                   f"unknown action {decision.action!r} (accept, edit, reject)"))
        if decision.action == "reject":
            continue
        if decision.action == "edit":
            changes: dict[str, Any] = {}
            if decision.text.strip():
                changes["text"] = decision.text.strip()
            if decision.weight is not None:
                if not math.isfinite(decision.weight):
                    raise InputError(Issue(None, None, f"criterion {criterion.id}",
                                           f"weight {decision.weight!r} is not a finite number"))
                changes["weight"] = decision.weight
            note = f"edited by {reviewer}"
            base = criterion.provenance or Provenance(source="user")
            changes["provenance"] = base.model_copy(update={"note": note, "author": reviewer})
            criterion = criterion.model_copy(update=changes)
        kept.append(criterion)
    if not kept:
        raise InputError(Issue(None, None, "criteria", "every criterion was rejected: a rubric "
                                                       "needs at least one"))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    version = _next_version(folder, rubric)
    parent = hashlib.sha256(rubric.model_dump_json().encode()).hexdigest()[:16]
    reviewed = _validated({
        **rubric.model_dump(), "criteria": [c.model_dump() for c in kept], "version": str(version),
        "metadata": {**rubric.metadata, "review": {
            "parent_version": rubric.version, "parent_sha256": parent, "reviewer": reviewer,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "source": source,
            "decisions": {c.id: by_id.get(c.id, RubricDecision(c.id, "accept")).action
                          for c in rubric.criteria}}},
    })
    path = folder / f"{_safe(rubric.id)}.v{version}.yaml"
    _write_atomically(reviewed, path)
    return path


def _write_atomically(rubric: Rubric, path: Path) -> None:
    """Write ``rubric`` in a temporary folder beside ``path``, then rename it into place: a
    reader (``assay grade --rubric``, :func:`latest_reviewed`) sees the whole file or none, and
    a write that fails (a full disk) leaves nothing behind."""
    from assay.io import write_rubric

    scratch = Path(tempfile.mkdtemp(prefix=".saving-", dir=path.parent))
    try:
        written = scratch / path.name  # the same name: the writer picks YAML by the suffix
        write_rubric(rubric, written)
        os.replace(written, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _validated(data: dict[str, Any]) -> Rubric:
    """The reviewed rubric, or an InputError naming what an edit made invalid."""
    from pydantic import ValidationError

    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise InputError(Issue(None, None, where or "rubric",
                               str(first.get("msg", exc)).removeprefix("Value error, "))) from None


def _next_version(folder: Path, rubric: Rubric) -> int:
    saved = [version for version, _ in _versions(folder, rubric.id)]
    current = int(rubric.version) if rubric.version.isdigit() else 1
    return max([current, *saved]) + 1


def saved_versions(folder: str | Path, rubric_id: str) -> list[Path]:
    """The files of the versions of rubric ``rubric_id`` saved in ``folder``, oldest first."""
    return [path for _, path in sorted(_versions(Path(folder), rubric_id))]


def _versions(folder: Path, rubric_id: str) -> list[tuple[int, Path]]:
    pattern = re.compile(rf"^{re.escape(_safe(rubric_id))}\.v(\d+)\.yaml$")
    if not folder.is_dir():
        return []
    return [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name))]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "rubric"


def latest_reviewed(folder: str | Path) -> dict[str, Rubric]:
    """The newest reviewed version of each rubric in ``folder`` (``ID.vN.yaml``), by rubric id:
    what ``assay grade --rubric RUN/reviewed-rubrics`` grades with.

    >>> import tempfile, pathlib
    >>> from assay.rubric import Criterion, Rubric
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rubric = Rubric(id="r", criteria=[Criterion(id="a", text="Says A."),
    ...                                   Criterion(id="b", text="Says B.")])
    >>> _ = save_reviewed_rubric(rubric, [RubricDecision("b", "reject")], folder, reviewer="x")
    >>> v2 = latest_reviewed(folder)["r"]
    >>> _ = save_reviewed_rubric(v2, [RubricDecision("a", "edit", "Says A plainly.")], folder,
    ...                          reviewer="x")
    >>> [(r.version, [c.text for c in r.criteria]) for r in latest_reviewed(folder).values()]
    [('3', ['Says A plainly.'])]
    """
    from assay.io import read_rubric

    folder = Path(folder)
    newest: dict[str, tuple[int, Rubric]] = {}
    for path in sorted(folder.glob("*.v*.yaml")):
        rubric = read_rubric(path)
        version = int(rubric.version) if rubric.version.isdigit() else 0
        if rubric.id not in newest or version > newest[rubric.id][0]:
            newest[rubric.id] = (version, rubric)
    if not newest:
        raise InputError(Issue(str(folder), None, None, "holds no reviewed rubric (ID.vN.yaml)"))
    return {rubric_id: rubric for rubric_id, (_, rubric) in newest.items()}

