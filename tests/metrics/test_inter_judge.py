"""Reliability among an ensemble's judges."""

from __future__ import annotations

from assay.metrics.inter_judge import inter_judge
from assay.metrics.labels import CriterionInfo
from assay.metrics.reliability import krippendorff_alpha
from assay.rubric import Criterion
from assay.verdict import Verdict


def V(item, criterion, answer, judge):
    key = "verdict" if answer in ("MET", "UNMET", "CANNOT_ASSESS") else "option"
    return Verdict(item_id=item, criterion_id=criterion, judge=judge, **{key: answer})


def test_pooled_alpha_equals_krippendorff_on_the_judges_by_units_table():
    """Cross-check: the same units fed to krippendorff_alpha directly."""
    a = ["MET", "MET", "UNMET", "UNMET", "MET"]
    b = ["MET", "UNMET", "UNMET", "UNMET", "MET"]
    vs = [V(f"q{i}", "c", x, "a") for i, x in enumerate(a)] + \
         [V(f"q{i}", "c", x, "b") for i, x in enumerate(b)]
    r = inter_judge(vs)
    table = [[x == "MET" for x in a], [x == "MET" for x in b]]
    assert r.alpha_nominal.value == krippendorff_alpha(table).value
    assert r.percent_agreement.value == 4 / 5


def test_ordinal_criteria_use_ordinal_alpha_on_option_steps():
    pain = Criterion(id="pain", text="p", kind="ordinal",
                     options=[{"label": s, "value": v} for s, v in
                              [("low", 0), ("mid", .5), ("high", 1)]])
    info = CriterionInfo.from_criterion(pain)
    a, b = ["low", "mid", "high", "high"], ["low", "high", "high", "mid"]
    vs = [V(f"q{i}", "pain", x, "a") for i, x in enumerate(a)] + \
         [V(f"q{i}", "pain", x, "b") for i, x in enumerate(b)]
    r = inter_judge(vs, {(f"q{i}", "pain"): info for i in range(4)})
    c = r.per_criterion["pain"]
    steps = {"low": 0, "mid": 1, "high": 2}
    assert c.alpha_level == "ordinal"
    assert c.alpha.value == krippendorff_alpha([[steps[x] for x in a], [steps[x] for x in b]],
                                               "ordinal").value


def test_score_iccs_are_reported_when_item_scores_are_given():
    vs = [V("q", "c", "MET", j) for j in "ab"]
    scores = {"a": {"q1": .2, "q2": .5, "q3": .9}, "b": {"q1": .3, "q2": .4, "q3": .8}}
    r = inter_judge(vs, item_scores=scores)
    assert set(r.score_icc) >= {"ICC(2,1)", "ICC(3,1)", "ICC(3,k)"}
    assert r.score_icc["ICC(3,1)"].value > 0.8


def test_min_units_leaves_small_criteria_out_of_the_table_not_out_of_the_pooled_figures():
    import random

    rng = random.Random(5)
    vs = [V(f"q{i}", c, rng.choice(["MET", "UNMET"]), judge)
          for i in range(12) for c in ["big", f"small{i % 4}", f"one{i}"] for judge in "abc"]
    whole, listed = inter_judge(vs), inter_judge(vs, min_units=4)
    assert sorted(whole.per_criterion) == sorted(["big", *[f"small{k}" for k in range(4)],
                                                  *[f"one{i}" for i in range(12)]])
    assert sorted(listed.per_criterion) == ["big"]
    assert listed.per_criterion["big"] == whole.per_criterion["big"]
    assert listed.model_copy(update={"per_criterion": whole.per_criterion}) == whole


def test_verdicts_stream_in_once_and_are_not_kept():
    """A generator is read once: a report streams a run's votes in from compact records."""
    info = CriterionInfo.binary("c")
    answers = [("q1", "MET", "MET"), ("q2", "MET", "UNMET"), ("q3", "UNMET", "UNMET")]
    listed = [V(item, "c", x, judge) for item, a, b in answers for judge, x in (("a", a), ("b", b))]
    lookup = {(item, "c"): info for item, _, _ in answers}
    streamed = inter_judge((v for v in listed), lookup)
    assert streamed == inter_judge(listed, lookup)
    assert streamed.percent_agreement.value == 2 / 3
