"""A curated rubric's versions, each against the one before it.

Every save in the review app writes a new version (``reviewed-rubrics/ID.vN.yaml``, see
:mod:`assay.review.rubrics`). The rubric page lists them newest first, each with what changed
since the previous version (the first against the rubric as graded): criteria edited (their
text as a word-level diff, their weight), removed or added; the others are counted as
unchanged.

Example:
    >>> from assay.rubric import Criterion, Rubric
    >>> old = Rubric(id="r", criteria=[Criterion(id="a", text="Says A.\\nThen B."),
    ...                                Criterion(id="b", text="Says C.")])
    >>> new = Rubric(id="r", version="2", criteria=[Criterion(id="a", text="Says A.\\nThen D.")])
    >>> d = diff(old, new)
    >>> [(c.id, c.kind) for c in d.changes], d.unchanged
    ([('a', 'edited'), ('b', 'removed')], 0)
    >>> [(kind, text) for kind, text in d.changes[0].pieces if kind != "same"]
    [('removed', 'B.'), ('added', 'D.')]
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.review.rubrics import saved_versions
from assay.rubric import Criterion, Rubric

_TOKENS = re.compile(r"\s+|[^\s]+")  # words and the whitespace between them (line breaks too)


@dataclass(frozen=True)
class CriterionChange:
    id: str
    kind: str
    """edited, removed or added."""
    old: Criterion | None
    new: Criterion | None
    pieces: list[tuple[str, str]] = field(default_factory=list)
    """The text as (same | removed | added, text) runs, for an edited criterion."""

    @property
    def weight_changed(self) -> bool:
        return self.old is not None and self.new is not None and self.old.weight != self.new.weight


@dataclass(frozen=True)
class VersionDiff:
    """One version of a rubric against the version before it."""

    version: str
    previous: str
    review: dict[str, Any]
    """The version's review record (reviewer, time, each criterion's decision)."""
    changes: list[CriterionChange]
    unchanged: int


def diff(old: Rubric, new: Rubric) -> VersionDiff:
    """What changed from ``old`` to ``new``, criterion by criterion (matched by id)."""
    before = {c.id: c for c in old.criteria}
    after = {c.id: c for c in new.criteria}
    changes, unchanged = [], 0
    for criterion in old.criteria:
        now = after.get(criterion.id)
        if now is None:
            changes.append(CriterionChange(criterion.id, "removed", criterion, None))
        elif now.text != criterion.text or now.weight != criterion.weight:
            changes.append(CriterionChange(criterion.id, "edited", criterion, now,
                                           text_diff(criterion.text, now.text)))
        else:
            unchanged += 1
    changes += [CriterionChange(c.id, "added", None, c) for c in new.criteria if c.id not in before]
    review = new.metadata.get("review")
    return VersionDiff(new.version, old.version, review if isinstance(review, dict) else {},
                       changes, unchanged)


def text_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` → ``new`` as runs of words kept, removed and added (whitespace, line breaks
    included, kept as it is).

    >>> text_diff("take 2 tablets", "take 3 tablets")
    [('same', 'take '), ('removed', '2'), ('added', '3'), ('same', ' tablets')]
    """
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    pieces: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(("removed", "".join(a[i1:i2])))
        if j2 > j1:
            pieces.append(("added", "".join(b[j1:j2])))
    return pieces


def history(folder: str | Path, original: Rubric) -> list[VersionDiff]:
    """Every version of ``original`` saved in ``folder``, newest first, each against the one
    before it (the oldest against ``original``)."""
    from assay.io import read_rubric

    diffs, previous = [], original
    for path in saved_versions(folder, original.id):
        version = read_rubric(path)
        diffs.append(diff(previous, version))
        previous = version
    return diffs[::-1]
