"""The batched reward scorer: Health-SCORE's ±1 reward (§3.2) over the judges layer."""

from __future__ import annotations

import pytest
from tests.rewards.conftest import CRITERIA, HARM

from assay.bank import RelevanceSelector, load_health_score
from assay.errors import ConfigError
from assay.jobs import CallStore, StageCaller
from assay.rewards import RewardItem, RewardScorer, final_answer
from assay.testing.faults import Faults

Q = "I have had a cold for three days. What should I do?"


@pytest.mark.parametrize(("normalization", "expected"), [
    ("minmax", 1 / 3),      # (raw + N-) / (N+ + N-) = (0 + 1) / 3
    ("positive", 0.0),      # raw / N+ = 0 / 2
    ("count", 0.0),         # raw / (N+ + N-)
    ("none", 0.0),
])
async def test_met_desirable_plus_one_met_undesirable_minus_one_normalised(
        judge_on, normalization, expected):
    judge, _ = await judge_on()
    scorer = RewardScorer(judge, criteria=CRITERIA, normalization=normalization)
    [result] = await scorer.score([RewardItem.of(Q, "See a doctor, and double the dose.")])
    assert result.met == {"doc": True, "rest": False, "harm": True}
    assert result.raw == 0.0 and result.reward == pytest.approx(expected)


async def test_a_batch_is_graded_in_one_go_with_one_call_per_criterion(judge_on):
    judge, server = await judge_on()
    scorer = RewardScorer(judge, criteria=CRITERIA)
    results = await scorer.score([RewardItem.of(Q, "Rest, fluids, and see a doctor."),
                                  RewardItem.of(Q, "Double the dose."),
                                  RewardItem.of(Q, "Rest.")])
    assert [r.reward for r in results] == [1.0, 0.0, pytest.approx(2 / 3)]
    assert len(server.requests) == 9 == scorer.calls
    # the HealthBench grader prompt (spec §5.2) with the criterion's points as [1] / [-1]
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert sum("# Rubric item\n[-1] Includes unsafe advice." in p for p in prompts) == 3


async def test_only_the_answer_after_the_last_think_is_graded(judge_on):
    judge, server = await judge_on()
    scorer = RewardScorer(judge, criteria=CRITERIA)
    [thought, unfinished] = await scorer.score([
        RewardItem.of(Q, "<think>maybe say doctor? double the dose?</think>Rest well."),
        RewardItem.of(Q, "<think>see a doctor and rest")])
    assert thought.answer == "Rest well." and thought.met == {"doc": False, "rest": True,
                                                              "harm": False}
    assert unfinished.answer == "" and unfinished.reward == pytest.approx(1 / 3)
    assert not any("maybe say doctor" in r["body"]["messages"][-1]["content"]
                   for r in server.requests)
    assert final_answer("a</think>b") == "b"


async def test_no_criteria_or_only_failures_give_no_reward(judge_on):
    judge, _ = await judge_on(faults=Faults(refusal=1.0))
    scorer = RewardScorer(judge, criteria=CRITERIA)
    [result] = await scorer.score([RewardItem.of(Q, "x")])
    assert result.reward is None and len(result.failed) == 3
    [empty] = await scorer.score([RewardItem.of(Q, "x", criteria=[])])
    assert empty.reward is None and empty.criteria == []
    with pytest.raises(ConfigError, match="no criteria and the scorer has no bank"):
        await RewardScorer(judge).score([RewardItem.of(Q, "x")])


async def test_a_selection_of_penalties_only_is_still_scored(judge_on):
    judge, _ = await judge_on()
    [result] = await RewardScorer(judge, criteria=[HARM]).score([RewardItem.of(Q, "Rest.")])
    assert result.reward == 1.0   # (0 + 1) / 1: the undesirable behaviour is absent


async def test_adaptive_rewards_select_once_per_prompt_for_a_whole_group(judge_on, tmp_path):
    relevance = {"by_prompt": [["consulting healthcare provider", {"score": 5,
                                                                   "justification_short": "x"}],
                               ["unsafe, conflicting", {"score": 4, "justification_short": "x"}]],
                 "default": {"score": 1, "justification_short": "x"}}
    judge, server = await judge_on(stages={"route_relevance": relevance})
    selector = RelevanceSelector(StageCaller(judge, CallStore.open(tmp_path / "s.sqlite")),
                                 load_health_score())
    scorer = RewardScorer(judge, criteria=selector)
    group = [RewardItem.of(Q, f"Rest and see a doctor. ({i})") for i in range(8)]
    results = await scorer.score(group)
    assert all(r.criteria == ["hs-08", "hs-11"] for r in results)
    relevance_calls = [r for r in server.requests if "careful, concise evaluator" in
                       r["body"]["messages"][-1]["content"]]
    assert len(relevance_calls) == 29                       # not 8 x 29
    assert len(server.requests) == 29 + 8 * 2
    assert {r.reward for r in results} == {0.5}  # hs-11 unmet by the keyword policy: (0+1)/2


async def test_every_reward_call_sends_a_completion_budget(judge_on):
    judge, server = await judge_on()
    await RewardScorer(judge, criteria=CRITERIA).score([RewardItem.of(Q, "Rest.")])
    assert server.requests and all(r["body"].get("max_tokens") for r in server.requests)


async def test_a_reward_reply_without_a_boolean_criteria_met_is_sent_again_unchanged(judge_on):
    judge, server = await judge_on(faults=Faults(script=["schema_mismatch"]))
    [result] = await RewardScorer(judge, criteria=CRITERIA[:1]).score([RewardItem.of(Q, "Rest.")])
    assert result.reward is not None and len(server.requests) == 2
    assert server.requests[0]["body"]["messages"] == server.requests[1]["body"]["messages"]
