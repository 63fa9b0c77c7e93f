"""Near-miss pairs for discrimination from verdict sets and pair-call files (Python API).

The fixture's hand-worked scores are in test_cli_discrimination.py's docstring.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InputError
from assay.io.verdicts import read_verdicts
from assay.metrics.discrimination import PairCall, discrimination
from assay.metrics.pairs import discrimination_summary, pairs_from_verdicts, read_pair_calls
from assay.metrics.sources import read_rubrics
from assay.verdict import Verdict

DATA = Path(__file__).parent / "data"


@pytest.fixture
def verdicts():
    return (read_verdicts(DATA / "discrimination_good.jsonl"),
            read_verdicts(DATA / "discrimination_degraded.jsonl"))


def test_each_judge_scoring_an_item_on_both_sides_is_one_call_scored_by_the_rubric(verdicts):
    pairs = pairs_from_verdicts(*verdicts, read_rubrics(DATA / "discrimination_rubric.yaml"))
    assert pairs.pair_ids == ["q1", "q2", "q3", "q4"] and pairs.unpaired == ["q5"]
    assert pairs.calls[0] == [PairCall(ref=1.0, cand=0.25), PairCall(ref=1.0, cand=0.75)]


def test_without_a_rubric_the_scores_are_pass_rates(verdicts):
    pairs = pairs_from_verdicts(*verdicts)
    # q4, judge j1: good MET/UNMET = 0.5, degraded MET/MET = 1
    assert pairs.calls[3][0] == PairCall(ref=0.5, cand=1.0)


def test_verdict_sets_that_share_no_judge_are_an_error():
    good = [Verdict(item_id="q", criterion_id="c", decision="MET", judge="a")]
    bad = [Verdict(item_id="q", criterion_id="c", decision="UNMET", judge="b")]
    with pytest.raises(InputError, match="share no judge"):
        pairs_from_verdicts(good, bad)


def test_pair_calls_are_grouped_by_pair_in_file_order_with_their_labels():
    pairs = read_pair_calls(DATA / "discrimination_pair_calls.jsonl")
    assert pairs.pair_ids == ["p1", "p2", "p3"]
    assert [len(c) for c in pairs.calls] == [3, 2, 2]
    assert pairs.calls[1][1] == PairCall(ref=6, cand=4)
    assert pairs.true_labels == [True, False, True]


def test_the_summary_reports_exactly_what_discrimination_computes_on_the_same_calls():
    pairs = read_pair_calls(DATA / "discrimination_pair_calls.jsonl")
    summary = discrimination_summary(pairs, n_bootstrap=200, seed=2)
    assert summary.report == discrimination(pairs.calls, true_labels=pairs.true_labels,
                                            n_bootstrap=200, seed=2)
    assert summary.mean_ref == [7.0, 5.5, 4.5] and summary.mean_cand == [6.0, 4.5, 6.0]
