"""Clinical Intent Alignment (seed 000 §4.6–4.7): how many gold criteria a rubric covers.

Input: verdicts of "is this gold (reference) criterion covered by the generated rubric?",
one per gold point, with the gold point as the criterion (``item_id``, ``criterion_id``) and
MET = covered. CIA is pooled (micro-averaged) over all gold points: covered / total, with a
Wilson interval (as the seed's code does). CANNOT_ASSESS counts as not covered (the
verifier did not confirm the concept), and is reported.

Two rubric sets judged on the same gold points are compared with McNemar's exact test on
the paired coverage decisions (the paper's named test) and with the pooled two-proportion
z-test the seed's code actually runs.

Example:
    >>> from assay.verdict import Verdict
    >>> vs = [Verdict(item_id="q1", criterion_id=f"g{i}", decision="MET" if i < 3 else "UNMET")
    ...       for i in range(4)]
    >>> c = cia(vs)
    >>> c.coverage.value, c.covered, c.total
    (0.75, 3, 4)
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from assay.errors import InputError, Issue
from assay.metrics.results import Metric, StatTest
from assay.metrics.significance import mcnemar_exact, two_proportion_ztest
from assay.metrics.uncertainty import proportion
from assay.verdict import Decision, Verdict


class CoverageReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    coverage: Metric  # with a Wilson CI
    covered: int
    total: int
    cannot_assess: int


class CoverageComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: CoverageReport
    b: CoverageReport
    n_paired: int
    difference: Metric  # coverage(a) − coverage(b) over the paired gold points
    mcnemar: StatTest
    ztest: StatTest


def coverage_decisions(verdicts: Iterable[Verdict]) -> dict[tuple[str, str], bool | None]:
    """(item, gold criterion) → covered (True/False), None for CANNOT_ASSESS."""
    out: dict[tuple[str, str], bool | None] = {}
    issues = []
    for v in verdicts:
        key = (v.item_id, v.criterion_id)
        if v.decision is None:
            issues.append(Issue(None, None, f"{v.item_id}/{v.criterion_id}",
                                "coverage verdicts must be MET/UNMET, not an option"))
            continue
        if key in out:
            issues.append(Issue(None, None, f"{v.item_id}/{v.criterion_id}",
                                "two coverage verdicts for one gold point"))
        out[key] = None if v.decision is Decision.CANNOT_ASSESS else v.decision is Decision.MET
    if issues:
        raise InputError(issues)
    return out


def _report(decisions: dict[tuple[str, str], bool | None], level: float) -> CoverageReport:
    covered = sum(1 for d in decisions.values() if d)
    total = len(decisions)
    return CoverageReport(
        coverage=proportion(covered, total, level),
        covered=covered,
        total=total,
        cannot_assess=sum(1 for d in decisions.values() if d is None),
    )


def cia(verdicts: Iterable[Verdict], *, level: float = 0.95) -> CoverageReport:
    """Pooled CIA coverage of the gold points in ``verdicts``, with a Wilson CI."""
    return _report(coverage_decisions(verdicts), level)


def compare_coverage(
    a: Iterable[Verdict], b: Iterable[Verdict], *, level: float = 0.95
) -> CoverageComparison:
    """Coverage of two rubric sets on the same gold points, and whether they differ.

    Each set's own coverage uses all its gold points; the tests use the points both judged.
    """
    da, db = coverage_decisions(a), coverage_decisions(b)
    shared = sorted(da.keys() & db.keys())
    xa = [bool(da[k]) for k in shared]
    xb = [bool(db[k]) for k in shared]
    n = len(shared)
    return CoverageComparison(
        a=_report(da, level),
        b=_report(db, level),
        n_paired=n,
        difference=Metric.of((sum(xa) - sum(xb)) / n, n=n) if n
        else Metric.undefined("no gold point judged in both sets"),
        mcnemar=mcnemar_exact(xa, xb),
        ztest=two_proportion_ztest(sum(xa), n, sum(xb), n),
    )
