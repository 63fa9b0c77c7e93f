import pytest

from assay.errors import ConfigError
from assay.grading.aggregate import Aggregation, Vote, aggregate
from assay.verdict import Decision, Verdict


def votes(criterion, *answers, weights=None):
    out = []
    for i, answer in enumerate(answers):
        kind = "verdict" if answer in ("MET", "UNMET", "CANNOT_ASSESS") else "option"
        v = Verdict(item_id="q1", criterion_id=criterion.id, judge=f"j{i}", **{kind: answer})
        out.append(Vote(f"j{i}", v, (weights or [1.0] * len(answers))[i]))
    return out


def final(criterion, *answers, strategy=None, weights=None):
    agg = Aggregation.parse(strategy) if strategy else Aggregation()
    result = aggregate(criterion, votes(criterion, *answers, weights=weights), agg)
    v = result.verdict
    return v.option if v.option is not None else v.decision.value


def test_majority_takes_the_larger_side(binary):
    assert final(binary, "MET", "MET", "UNMET") == "MET"


def test_majority_tie_goes_to_unmet_for_a_desirable_criterion(binary):
    assert final(binary, "MET", "UNMET") == "UNMET"


def test_majority_tie_goes_to_met_for_a_penalty(penalty):
    assert final(penalty, "MET", "UNMET") == "MET"


def test_weighted_uses_judge_weights(binary):
    assert final(binary, "MET", "UNMET", "UNMET", strategy="weighted", weights=[3, 1, 1]) == "MET"
    assert final(binary, "MET", "UNMET", "UNMET", weights=[3, 1, 1]) == "UNMET"  # majority


def test_unanimous_needs_every_judge(binary):
    assert final(binary, "MET", "MET", "UNMET", strategy="unanimous") == "UNMET"
    assert final(binary, "MET", "MET", strategy="unanimous") == "MET"


def test_any_needs_one_judge(binary):
    assert final(binary, "UNMET", "MET", "UNMET", strategy="any") == "MET"


def test_abstentions_do_not_vote_unless_everyone_abstains(binary):
    assert final(binary, "CANNOT_ASSESS", "CANNOT_ASSESS", "MET") == "MET"
    assert final(binary, "CANNOT_ASSESS", "CANNOT_ASSESS") == "CANNOT_ASSESS"


def test_ordinal_mean_snaps_to_the_nearest_option(ordinal):
    assert final(ordinal, "well", "well", "poorly") == "partly"  # mean 0.67 -> 0.5
    assert final(ordinal, "well", "well", "well", "partly") == "well"  # mean 0.875 -> 1.0


def test_ordinal_mean_tie_snaps_to_the_lower_option(ordinal):
    assert final(ordinal, "well", "partly") == "partly"  # mean 0.75: equidistant -> lower


def test_ordinal_median(ordinal):
    assert final(ordinal, "poorly", "partly", "well", "well", "well", strategy="ordinal=median") == "well"


def test_ordinal_mode_tie_goes_to_the_lower_value(ordinal):
    assert final(ordinal, "well", "poorly", strategy="ordinal=mode") == "poorly"


def test_nominal_mode_with_a_tie_goes_to_the_lower_value_then_first_listed(nominal):
    assert final(nominal, "calm", "calm", "dismissive") == "calm"
    assert final(nominal, "calm", "dismissive") == "dismissive"
    assert final(nominal, "alarmist", "dismissive") == "alarmist"


def test_na_options_count_as_abstentions(ordinal):
    assert final(ordinal, "not discussed", "poorly") == "poorly"
    assert final(ordinal, "not discussed", "not discussed") == "not discussed"


def test_agreement_is_the_share_of_judges_matching_the_final_answer(binary):
    result = aggregate(binary, votes(binary, "MET", "MET", "UNMET", "MET"))
    assert result.agreement == 0.75


def test_a_single_vote_is_passed_through(binary):
    [vote] = votes(binary, "MET")
    assert aggregate(binary, [vote]).verdict is vote.verdict


def test_no_votes_give_no_verdict(binary):
    assert aggregate(binary, []).verdict is None


def test_parse_assigns_a_strategy_to_every_kind_it_applies_to():
    assert Aggregation.parse("mode") == Aggregation(binary="majority", ordinal="mode", nominal="mode")
    assert Aggregation.parse("any,ordinal=median").ordinal == "median"


@pytest.mark.parametrize("text", ["nominal=mean", "average", "colour=mode"])
def test_parse_rejects_unknown_or_misplaced_strategies(text):
    with pytest.raises(ConfigError):
        Aggregation.parse(text)


def test_final_verdict_is_labelled_ensemble(binary):
    assert aggregate(binary, votes(binary, "MET", "MET")).verdict.judge == "ensemble"
    assert aggregate(binary, votes(binary, "MET", "MET")).verdict.decision is Decision.MET
