"""Warnings for criteria a rubric states twice (a warning, not an error: simple-evals grades and
counts every copy, and so does Assay; see :meth:`assay.rubric.Rubric.duplicate_pairs`).

Example:
    >>> from assay.rubric import Rubric
    >>> rubric = Rubric(criteria=[{"text": "Advises rest."}, {"text": "Advises rest."}])
    >>> [str(w) for w in duplicate_warnings(rubric, source="r.yaml", line=3)]  # doctest: +ELLIPSIS
    ["r.yaml:3: criteria[1].text: repeats criteria[0].text word for word; both copies are graded and counted (ids 'c-...', 'c-...-2')"]
"""

from __future__ import annotations

from assay.errors import Issue
from assay.io.errors import Loc, field_path
from assay.rubric.rubric import Rubric


def duplicate_warnings(
    rubric: Rubric,
    *,
    source: str | None = None,
    line: int | None = None,
    prefix: Loc = (),
    healthbench: bool = False,
) -> list[Issue]:
    """One warning per pair of criteria with the same text (exactly, or up to case/spacing)."""
    def where(index: int) -> str:
        loc = ("rubrics", index, "criterion") if healthbench else ("criteria", index, "text")
        return field_path((*prefix, *loc))

    warnings = []
    for pair in rubric.duplicate_pairs():
        first, second = rubric.criteria[pair.first], rubric.criteria[pair.second]
        how = "word for word" if pair.exact else "up to case and spacing"
        warnings.append(Issue(
            source, line, where(pair.second),
            f"repeats {where(pair.first)} {how}; both copies are graded and counted "
            f"(ids {first.id!r}, {second.id!r})"))
    return warnings
