"""The ensemble rule for abstaining judges: dropped (the default, documented) or counted
(``abstain=count``), from the aggregation string the CLI and the API share."""

from __future__ import annotations

import pytest
from tests.grading.test_aggregate import final

from assay.errors import ConfigError
from assay.grading.aggregate import Aggregation


def test_by_default_an_abstaining_vote_is_dropped(binary):
    assert final(binary, "CANNOT_ASSESS", "MET") == "MET"
    assert final(binary, "CANNOT_ASSESS", "CANNOT_ASSESS", "MET") == "MET"


def test_counted_an_abstention_wins_with_at_least_as_many_votes_as_the_answer(binary):
    count = "majority,abstain=count"
    assert final(binary, "CANNOT_ASSESS", "MET", strategy=count) == "CANNOT_ASSESS"  # 1 vs 1
    assert final(binary, "CANNOT_ASSESS", "MET", "MET", strategy=count) == "MET"     # 1 vs 2
    assert final(binary, "CANNOT_ASSESS", "CANNOT_ASSESS", "MET", "UNMET",
                 strategy=count) == "CANNOT_ASSESS"  # 2 vs 1 (MET/UNMET tie gives UNMET)


def test_counted_weighted_compares_judge_weights(binary):
    rule = "weighted,abstain=count"
    assert final(binary, "CANNOT_ASSESS", "MET", strategy=rule, weights=[1, 3]) == "MET"
    assert final(binary, "CANNOT_ASSESS", "MET", strategy=rule, weights=[3, 1]) == "CANNOT_ASSESS"


def test_counted_mean_weighs_the_abstentions_against_every_answering_vote(ordinal):
    rule = "abstain=count"
    assert final(ordinal, "not discussed", "well", "poorly", strategy=rule) == "partly"
    assert final(ordinal, "not discussed", "not discussed", "well", "poorly",
                 strategy=rule) == "not discussed"  # the N/A option all abstainers chose


def test_counted_mode_on_a_nominal_criterion(nominal):
    rule = "abstain=count"
    assert final(nominal, "CANNOT_ASSESS", "calm", "calm", strategy=rule) == "calm"
    assert final(nominal, "CANNOT_ASSESS", "calm", "alarmist", strategy=rule) == "CANNOT_ASSESS"


def test_the_rule_is_part_of_the_aggregation_string():
    assert Aggregation.parse("any,abstain=count").abstain == "count"
    assert str(Aggregation.parse("majority")) == "binary=majority,ordinal=mean,nominal=mode"
    assert Aggregation.parse(str(Aggregation.parse("abstain=count"))).abstain == "count"
    with pytest.raises(ConfigError, match="abstain='sometimes'; choose one of drop, count"):
        Aggregation.parse("abstain=sometimes")
