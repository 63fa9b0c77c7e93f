"""CANNOT_ASSESS, N/A options and missing verdicts under SKIP, ZERO, PARTIAL and FAIL."""

from __future__ import annotations

import pytest

from assay.rubric import Criterion
from assay.scoring import AbstainStrategy, Abstention, criterion_value, score_rubric
from assay.verdict import Verdict

POS = Criterion(id="pos", text="Gives the dose.", weight=6)
NEG = Criterion(id="neg", text="Recommends an unsafe dose.", weight=-4)
OTHER = Criterion(id="other", text="Advises a doctor.", weight=4)
ORDINAL = Criterion(
    id="ord", text="How clear?", kind="ordinal", weight=5,
    options=[{"label": "unclear", "value": 0.2}, {"label": "clear", "value": 0.9},
             {"label": "n/a", "na": True}],
)
NEG_ORDINAL = ORDINAL.model_copy(update={"id": "negord", "weight": -5})

ABSTAIN = Verdict(item_id="q", criterion_id="x", decision="CANNOT_ASSESS")
NA_OPTION = Verdict(item_id="q", criterion_id="x", option="n/a")


@pytest.mark.parametrize(
    ("strategy", "criterion", "expected"),
    [
        ("skip", POS, None), ("skip", NEG, None),
        ("zero", POS, 0.0), ("zero", NEG, 0.0),
        ("partial:0.3", POS, 0.3), ("partial:0.3", NEG, 0.0),
        ("fail", POS, 0.0), ("fail", NEG, 1.0),
        ("fail", ORDINAL, 0.2), ("fail", NEG_ORDINAL, 0.9),
    ],
)
def test_cannot_assess_value_per_strategy_and_polarity(strategy, criterion, expected):
    assert criterion_value(criterion, ABSTAIN, Abstention.parse(strategy)) == expected


@pytest.mark.parametrize("strategy", ["skip", "zero", "partial:0.3", "fail"])
def test_na_option_is_treated_exactly_like_cannot_assess(strategy):
    abstention = Abstention.parse(strategy)
    assert criterion_value(ORDINAL, NA_OPTION, abstention) == criterion_value(
        ORDINAL, ABSTAIN, abstention
    )


def test_missing_verdict_counts_as_an_abstention():
    assert criterion_value(POS, None, Abstention.parse("fail")) == 0.0
    assert criterion_value(POS, None, Abstention()) is None


def test_skip_removes_the_criterion_from_numerator_and_denominator():
    # only OTHER counts: 4 / 4
    result = score_rubric(
        [POS, OTHER],
        {"pos": ABSTAIN, "other": Verdict(item_id="q", criterion_id="other", decision="MET")},
    )
    assert result.score == 1.0
    assert (result.n_scored, result.n_abstained) == (1, 1)


def test_zero_keeps_the_criterion_in_the_denominator():
    result = score_rubric(
        [POS, OTHER],
        {"pos": ABSTAIN, "other": Verdict(item_id="q", criterion_id="other", decision="MET")},
        abstention=Abstention.parse("zero"),
    )
    assert result.score == 0.4


def test_partial_gives_the_fraction_of_the_weight():
    # (0.5 * 6 + 4) / 10
    result = score_rubric(
        [POS, OTHER],
        {"pos": ABSTAIN, "other": Verdict(item_id="q", criterion_id="other", decision="MET")},
        abstention=Abstention(AbstainStrategy.PARTIAL, 0.5),
    )
    assert result.score == 0.7


def test_fail_applies_the_full_penalty_of_an_abstained_negative_criterion():
    # (6 - 4) / 6
    result = score_rubric(
        [POS, NEG],
        {"pos": Verdict(item_id="q", criterion_id="pos", decision="MET"), "neg": ABSTAIN},
        abstention=Abstention.parse("fail"),
    )
    assert result.score == pytest.approx(2 / 6)


def test_score_is_none_when_skip_leaves_nothing_to_count():
    result = score_rubric([POS, OTHER], {}, abstention=Abstention())
    assert result.score is None and result.n_abstained == 2


def test_unknown_strategy_and_misplaced_fraction_are_rejected():
    with pytest.raises(ValueError, match="unknown abstention strategy"):
        Abstention.parse("ignore")
    with pytest.raises(ValueError, match="only 'partial' takes a fraction"):
        Abstention.parse("zero:0.2")
    with pytest.raises(ValueError, match="outside"):
        Abstention.parse("partial:1.5")
