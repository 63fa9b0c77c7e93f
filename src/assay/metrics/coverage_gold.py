"""CIA against a gold set: every gold point counts, judged or not (what ``assay coverage`` runs).

CIA = covered / |G| over the gold points G (seed 000 §4.6). The coverage verdicts say, per gold
point (``item_id``, ``criterion_id``), whether the generated rubric covers it. Given the gold
rubrics (e.g. the HealthBench physician criteria), a gold point without a verdict counts as
not covered (and is reported as missing) rather than silently leaving the denominator, and a
verdict on a point outside G is an error. Without gold rubrics, G is the set of judged points.

Example:
    >>> from assay.rubric.rubric import Rubric
    >>> from assay.metrics.sources import Rubrics
    >>> gold = Rubrics(per_item={"q1": Rubric(criteria=[{"id": "g1", "text": "a"},
    ...                                                 {"id": "g2", "text": "b"}])})
    >>> v = [Verdict(item_id="q1", criterion_id="g1", decision="MET")]
    >>> s = coverage_summary(v, gold=gold)
    >>> s.report.coverage.value, s.missing
    (0.5, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from assay.errors import InputError, Issue
from assay.metrics.coverage import CoverageComparison, CoverageReport, cia, compare_coverage
from assay.metrics.sources import Rubrics
from assay.verdict import Decision, Verdict

NO_VERDICT = "no coverage verdict: counted as not covered"


class CoverageSummary(BaseModel):
    """Pooled CIA of one rubric set and, with a second set, the paired comparison."""

    model_config = ConfigDict(frozen=True)

    report: CoverageReport
    missing: int  # gold points without a verdict, counted as not covered
    against: CoverageReport | None = None
    against_missing: int = 0
    comparison: CoverageComparison | None = None


def check_coverage_verdicts(
    verdicts: Sequence[Verdict],
    gold: Rubrics | None = None,
    *,
    source: str | None = None,
    lines: Sequence[int | None] | None = None,
) -> list[Issue]:
    """Every problem with coverage verdicts: an option instead of MET/UNMET, two verdicts on
    one gold point, a point outside ``gold``. ``lines[i]`` is the file line of ``verdicts[i]``.

    >>> v = Verdict(item_id="q1", criterion_id="g1", option="yes")
    >>> [str(i) for i in check_coverage_verdicts([v], source="v.jsonl", lines=[3])]
    ['v.jsonl:3: option: coverage verdicts are MET/UNMET (is the gold point covered?), not options']
    """
    points = None if gold is None else _gold_points(gold, verdicts)
    first: dict[tuple[str, str], int | None] = {}
    issues = []
    for i, v in enumerate(verdicts):
        line = lines[i] if lines is not None else None
        key = (v.item_id, v.criterion_id)
        if v.decision is None:
            issues.append(Issue(source, line, "option", "coverage verdicts are MET/UNMET "
                                "(is the gold point covered?), not options"))
        if key in first:
            where = f" (first on line {first[key]})" if first[key] is not None else ""
            issues.append(Issue(source, line, "criterion_id", f"a second coverage verdict on gold "
                                f"point {v.item_id}/{v.criterion_id}{where}"))
        first.setdefault(key, line)
        if points is not None and key not in points:
            issues.append(Issue(source, line, "criterion_id", f"{v.criterion_id!r} is not a gold "
                                f"criterion of item {v.item_id!r} (check the gold rubrics)"))
    return issues


def _gold_points(gold: Rubrics, verdicts: Sequence[Verdict]) -> set[tuple[str, str]]:
    items = list(gold.per_item) if gold.per_item else sorted({v.item_id for v in verdicts})
    return {(item, c.id) for item in items for c in gold.criteria(item) or ()}


def complete_with_gold(
    verdicts: Sequence[Verdict], gold: Rubrics, source: str | None = None
) -> tuple[list[Verdict], int]:
    """``verdicts`` plus an UNMET verdict for every gold point without one; the count added.

    Gold items are those of ``gold.per_item``, or, for a shared gold rubric, the items that
    ``verdicts`` mention. A verdict on a point outside the gold set raises :class:`InputError`.
    """
    points = _gold_points(gold, verdicts)
    issues = [Issue(source, None, "criterion_id", f"{v.criterion_id!r} is not a gold criterion "
                    f"of item {v.item_id!r} (check the gold rubrics)")
              for v in verdicts if (v.item_id, v.criterion_id) not in points]
    if issues:
        raise InputError(issues)
    seen = {(v.item_id, v.criterion_id) for v in verdicts}
    added = [Verdict(item_id=item, criterion_id=cid, decision=Decision.UNMET,
                     judge="assay:missing", explanation=NO_VERDICT)
             for item, cid in sorted(points - seen)]
    return [*verdicts, *added], len(added)


def coverage_summary(
    verdicts: Sequence[Verdict],
    *,
    gold: Rubrics | None = None,
    against: Sequence[Verdict] | None = None,
    level: float = 0.95,
) -> CoverageSummary:
    """CIA of ``verdicts`` (Wilson CI) and, given ``against``, McNemar and the z-test between
    the two sets on the same gold points (see :mod:`assay.metrics.coverage`).

    Raises :class:`InputError` listing every problem of :func:`check_coverage_verdicts`.
    """
    issues = [*check_coverage_verdicts(verdicts, gold),
              *check_coverage_verdicts(against or [], gold)]
    if issues:
        raise InputError(issues)
    a, missing = complete_with_gold(verdicts, gold) if gold is not None else (list(verdicts), 0)
    report = cia(a, level=level)
    if against is None:
        return CoverageSummary(report=report, missing=missing)
    b, b_missing = complete_with_gold(against, gold) if gold is not None else (list(against), 0)
    comparison = compare_coverage(a, b, level=level)
    return CoverageSummary(report=report, missing=missing, against=comparison.b,
                           against_missing=b_missing, comparison=comparison)
