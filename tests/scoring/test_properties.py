"""Invariants of the scoring core, checked with hypothesis."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assay.rubric import Criterion
from assay.scoring import Abstention, score_rubric
from assay.verdict import Verdict

weights = st.integers(min_value=-10, max_value=10).filter(lambda w: w != 0)
labels = st.sampled_from(["MET", "UNMET", "CANNOT_ASSESS"])
strategies = st.sampled_from(["skip", "zero", "partial:0.3", "fail"])


@st.composite
def graded_rubrics(draw):
    ws = draw(st.lists(weights, min_size=1, max_size=12))
    if not any(w > 0 for w in ws):
        ws.append(draw(st.integers(min_value=1, max_value=10)))
    criteria = [Criterion(id=f"c{i}", text=f"criterion {i}", weight=w) for i, w in enumerate(ws)]
    verdicts = {
        c.id: Verdict(item_id="q", criterion_id=c.id, decision=draw(labels)) for c in criteria
    }
    return criteria, verdicts


@given(graded_rubrics(), strategies)
def test_normalised_scores_stay_in_the_unit_interval(graded, strategy):
    criteria, verdicts = graded
    for formula in ("autorubric", "pass-rate", "reward"):
        score = score_rubric(
            criteria, verdicts, formula=formula, abstention=Abstention.parse(strategy)
        ).score
        assert score is None or 0.0 <= score <= 1.0


@given(graded_rubrics())
def test_perfect_answer_scores_one(graded):
    criteria, _ = graded
    perfect = {
        c.id: Verdict(item_id="q", criterion_id=c.id, decision="MET" if c.weight > 0 else "UNMET")
        for c in criteria
    }
    for formula in ("autorubric", "healthbench", "pass-rate"):
        assert score_rubric(criteria, perfect, formula=formula).score == 1.0


@given(graded_rubrics(), st.integers(min_value=-10, max_value=-1))
def test_an_unmet_penalty_changes_nothing(graded, penalty_weight):
    criteria, verdicts = graded
    extra = Criterion(id="extra-penalty", text="does something bad", weight=penalty_weight)
    with_penalty = {**verdicts, extra.id: Verdict(item_id="q", criterion_id=extra.id,
                                                  verdict="UNMET")}
    for formula in ("autorubric", "raw", "healthbench"):
        before = score_rubric(criteria, verdicts, formula=formula).score
        after = score_rubric([*criteria, extra], with_penalty, formula=formula).score
        assert before == after


@given(graded_rubrics(), st.randoms(use_true_random=False), strategies)
def test_order_of_criteria_changes_nothing(graded, random, strategy):
    criteria, verdicts = graded
    shuffled = list(criteria)
    random.shuffle(shuffled)
    abstention = Abstention.parse(strategy)
    for formula in ("autorubric", "raw", "healthbench", "pass-rate", "reward"):
        a = score_rubric(criteria, verdicts, formula=formula, abstention=abstention).score
        b = score_rubric(shuffled, verdicts, formula=formula, abstention=abstention).score
        assert a == b or abs(a - b) < 1e-12
