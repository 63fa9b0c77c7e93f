"""Issue 40 §2 (the same rule in the reward's record): a criterion the judge could not assess
is reported as neither met nor unmet (None), never as a default "not met" (Assay's template
lets the judge abstain; simple-evals' HealthBench grader has no such answer)."""

from __future__ import annotations

from tests.rewards.conftest import CRITERIA, keyword_policy

from assay.rewards import RewardItem, RewardScorer

Q = "I have had a cold for three days. What should I do?"


def abstains_on_rest(view):
    return "CANNOT_ASSESS" if "rest" in (view.criterion_text or "") else keyword_policy(view)


async def test_a_criterion_the_judge_could_not_assess_is_not_reported_unmet(judge_on):
    judge, _ = await judge_on(policy=abstains_on_rest)
    [result] = await RewardScorer(judge, criteria=CRITERIA, template="assay").score(
        [RewardItem.of(Q, "See a doctor and rest.")])
    assert result.met == {"doc": True, "rest": None, "harm": False}
    assert result.to_dict()["met"]["rest"] is None
