"""CIA against a gold set (Python API): missing gold points count as not covered."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.metrics.coverage_gold import (
    check_coverage_verdicts,
    complete_with_gold,
    coverage_summary,
)
from assay.metrics.sources import Rubrics
from assay.rubric.rubric import Rubric
from assay.verdict import Verdict

GOLD = Rubric(criteria=[{"id": "g1", "text": "a"}, {"id": "g2", "text": "b"},
                        {"id": "g3", "text": "c"}])


def _v(item, cid, verdict="MET"):
    return Verdict(item_id=item, criterion_id=cid, decision=verdict)


def test_a_gold_point_without_a_verdict_is_added_as_not_covered():
    completed, added = complete_with_gold([_v("q1", "g1")], Rubrics(per_item={"q1": GOLD}))
    assert added == 2
    assert {(v.criterion_id, v.decision.value) for v in completed} == {
        ("g1", "MET"), ("g2", "UNMET"), ("g3", "UNMET")}


def test_a_shared_gold_rubric_applies_to_every_item_the_verdicts_name():
    s = coverage_summary([_v("q1", "g1"), _v("q2", "g2")], gold=Rubrics(shared=GOLD))
    assert (s.report.covered, s.report.total, s.missing) == (2, 6, 4)


def test_problems_of_both_sets_are_reported_together():
    with pytest.raises(InputError) as err:
        coverage_summary([_v("q1", "g9")], gold=Rubrics(per_item={"q1": GOLD}),
                         against=[_v("q1", "g1"), _v("q1", "g1")])
    messages = [i.message for i in err.value.issues]
    assert len(messages) == 2
    assert "not a gold criterion" in messages[0] and "second coverage verdict" in messages[1]


def test_check_names_the_line_of_each_bad_verdict():
    issues = check_coverage_verdicts([_v("q1", "g1"), _v("q1", "g1")], source="v.jsonl",
                                     lines=[1, 4])
    assert [str(i) for i in issues] == [
        "v.jsonl:4: criterion_id: a second coverage verdict on gold point q1/g1 (first on line 1)"]
