"""Grading's size limits (:mod:`assay.limits`) on every reward path: nothing over them is sent
to a judge — not by the scorer, TRL's or verl's adapter, the selector, nor ``assay serve``."""

from __future__ import annotations

import aiohttp
import pytest
from tests.rewards.conftest import CRITERIA, keyword_policy

from assay.bank import RelevanceSelector, load_health_score
from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge, run_sync
from assay.limits import MAX_PROMPT_CHARS, MAX_RESPONSE_CHARS
from assay.rewards import RewardItem, RewardScorer, trl_reward_function
from assay.rewards.verl import verl_reward_functions
from assay.testing import FakeJudgeServer

Q = "I have had a cold for three days. What should I do?"
HUGE_PROMPT = "x" * 10_000_000          # the 10 MB prompt
LONG_ANSWER = "Rest. " * (MAX_RESPONSE_CHARS // 6 + 1)


async def test_a_10_mb_prompt_is_sent_neither_to_the_selector_nor_to_the_grader(judge_on,
                                                                                  tmp_path):
    judge, server = await judge_on(stages={"route_relevance": {"score": 5,
                                                               "justification_short": "x"}})
    selector = RelevanceSelector(StageCaller(judge, CallStore.open(tmp_path / "s.sqlite")),
                                 load_health_score())
    [result] = await RewardScorer(judge, criteria=selector).score([RewardItem.of(HUGE_PROMPT, "x")])
    assert result.reward is None and "over the judge prompt limit" in result.failed["input"]
    assert server.requests == []


async def test_an_answer_over_the_response_limit_is_not_graded(judge_on):
    judge, server = await judge_on()
    scorer = RewardScorer(judge, criteria=CRITERIA, on_failure="unmet")
    [result] = await scorer.score([RewardItem.of(Q, LONG_ANSWER)])
    assert result.reward is None and "over the limit of 200,000" in result.failed["input"]
    assert server.requests == [] and scorer.failures.oversized == 1


async def test_a_judge_prompt_over_the_limit_with_the_template_is_not_sent(judge_on):
    judge, server = await judge_on()
    just_under = "y" * (MAX_PROMPT_CHARS - 10)   # the grader's template pushes it over
    [result] = await RewardScorer(judge, criteria=CRITERIA).score([RewardItem.of(just_under, "x")])
    assert result.reward is None and set(result.failed) == {"doc", "rest", "harm"}
    assert "not sent to a judge" in result.failed["doc"] and server.requests == []


def test_trl_and_verl_adapters_send_nothing_over_the_limits():
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        scorer = RewardScorer(judge, criteria=CRITERIA)
        trl = trl_reward_function(scorer)(prompts=[HUGE_PROMPT], completions=["Rest."])
        compute_score, _ = verl_reward_functions(scorer)
        verl = compute_score("hb", LONG_ANSWER, "", {"prompt": Q})
        run_sync(judge.aclose())
        sent = len(server.requests)
    assert trl == [None] and (verl["score"], verl["reward_withheld"]) == (0.0, 1.0)
    assert sent == 0


async def test_serve_answers_413_for_an_item_over_a_limit_and_calls_no_judge(server_at):
    url, judge_server = await server_at()
    async with aiohttp.ClientSession() as http, http.post(f"{url}/v1/rewards", json={"items": [
            {"prompt": Q, "completion": "Rest."},
            {"prompt": HUGE_PROMPT, "completion": "Rest."}]}) as response:
        assert response.status == 413
        assert (await response.json())["error"].startswith("items[1]: the prompt has 10,000,000")
    assert judge_server.requests == []


async def test_the_selector_itself_refuses_a_prompt_over_the_limit(judge_on, tmp_path):
    from assay.errors import InputError

    judge, server = await judge_on()
    selector = RelevanceSelector(StageCaller(judge, CallStore.open(tmp_path / "s.sqlite")),
                                 load_health_score())
    with pytest.raises(InputError, match="prompt: 10,000,000 characters, over the judge prompt"):
        await selector.select([{"role": "user", "content": HUGE_PROMPT}])
    assert server.requests == []
