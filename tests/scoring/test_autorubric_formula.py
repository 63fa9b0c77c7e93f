"""Autorubric's Eq. 1, the raw (RL) mode and the length penalty, on hand-worked cases."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.rubric import Criterion
from assay.scoring import LengthPenalty, score_rubric
from assay.verdict import Verdict


def crit(cid: str, weight: float, **kw) -> Criterion:
    return Criterion(id=cid, text=f"criterion {cid}", weight=weight, **kw)


def v(cid: str, verdict: str | None = None, option: str | None = None) -> Verdict:
    return Verdict(item_id="q", criterion_id=cid, decision=verdict, option=option)


def verdicts(**labels: str) -> dict[str, Verdict]:
    return {cid: v(cid, label) for cid, label in labels.items()}


MIXED = [crit("a", 10), crit("b", 8), crit("c", 6), crit("p", -15)]


def test_positive_weights_give_met_share_of_positive_total():
    # (10 + 6) / (10 + 8 + 6) = 16 / 24
    result = score_rubric(MIXED[:3], verdicts(a="MET", b="UNMET", c="MET"))
    assert result.score == 16 / 24
    assert result.raw == 16 and result.positive_total == 24


def test_met_penalty_subtracts_outside_the_denominator():
    # (10 + 8 + 6 - 15) / 24 = 9 / 24
    result = score_rubric(MIXED, verdicts(a="MET", b="MET", c="MET", p="MET"))
    assert result.score == 9 / 24
    assert result.penalty_total == 15


def test_heavy_penalty_clamps_at_zero_and_raw_keeps_the_sum():
    result = score_rubric(MIXED, verdicts(a="UNMET", b="MET", c="UNMET", p="MET"))
    assert result.score == 0.0
    assert result.raw == 8 - 15


def test_perfect_answer_scores_exactly_one():
    result = score_rubric(MIXED, verdicts(a="MET", b="MET", c="MET", p="UNMET"))
    assert result.score == 1.0


def test_multi_choice_uses_the_option_value():
    ordinal = crit(
        "o",
        4,
        kind="ordinal",
        options=[{"label": "low", "value": 0}, {"label": "mid", "value": 0.25},
                 {"label": "high", "value": 1}],
    )
    # (0.25 * 4 + 1 * 6) / 10
    result = score_rubric([ordinal, crit("c", 6)], {"o": v("o", option="mid"), "c": v("c", "MET")})
    assert result.score == pytest.approx(0.7)


def test_penalty_only_rubric_starts_at_one_and_loses_the_met_share():
    penalties = [crit("p1", -3), crit("p2", -1)]
    assert score_rubric(penalties, verdicts(p1="UNMET", p2="UNMET")).score == 1.0
    # 1 + (-1) / 4
    assert score_rubric(penalties, verdicts(p1="UNMET", p2="MET")).score == 0.75
    assert score_rubric(penalties, verdicts(p1="MET", p2="MET")).score == 0.0


def test_raw_formula_is_the_unnormalised_weighted_sum():
    result = score_rubric(MIXED, verdicts(a="MET", b="UNMET", c="MET", p="MET"), formula="raw")
    assert result.score == 10 + 6 - 15


def test_length_penalty_is_subtracted_after_normalisation():
    penalty = LengthPenalty(free_budget=10, cap=20, penalty_at_cap=0.5, exponent=2.0)
    response = "word " * 15  # halfway: 0.5 * 0.5 ** 2 = 0.125
    result = score_rubric(
        MIXED[:3], verdicts(a="MET", b="MET", c="MET"), length_penalty=penalty, response=response
    )
    assert result.length_penalty == 0.125
    assert result.score == 0.875


def test_length_penalty_is_zero_within_budget_and_capped_beyond():
    penalty = LengthPenalty(free_budget=10, cap=20, penalty_at_cap=0.5)
    assert penalty("word " * 10) == 0.0
    assert penalty(500) == 0.5


def test_length_penalty_in_raw_mode_uses_raw_points():
    penalty = LengthPenalty(free_budget=1, cap=2, penalty_at_cap=3.0)
    result = score_rubric(
        MIXED[:1], verdicts(a="MET"), formula="raw", length_penalty=penalty, response="a b c"
    )
    assert result.score == 10 - 3.0


def test_binary_criterion_given_an_option_is_an_input_error():
    with pytest.raises(InputError, match="binary criterion"):
        score_rubric([crit("a", 1)], {"a": v("a", option="high")})


def test_unknown_option_label_is_an_input_error_listing_the_options():
    nominal = crit("n", 1, kind="nominal",
                   options=[{"label": "brief", "value": 1}, {"label": "verbose", "value": 0}])
    with pytest.raises(InputError, match="unknown option 'long'.*brief, verbose"):
        score_rubric([nominal], {"n": v("n", option="long")})


def test_option_labels_match_case_and_space_insensitively():
    nominal = crit("n", 1, kind="nominal",
                   options=[{"label": "Just right", "value": 1}, {"label": "Too long", "value": 0}])
    assert score_rubric([nominal], {"n": v("n", option="just  RIGHT")}).score == 1.0


def test_unknown_formula_is_rejected():
    with pytest.raises(ValueError, match="unknown formula"):
        score_rubric(MIXED, {}, formula="holistic")  # type: ignore[arg-type]
