"""The reward failure policy: a failed criterion call never raises a reward.

The issue's example, over real HTTP with the fake judge: four Health-SCORE criteria, the judge
finds all of them met for "Double your aspirin." (three desirable, and hs-08, unsafe advice, a
penalty): 0.75. When the hs-08 call answers 500, counting it "not met" gave 1.0, the maximum.
"""

from __future__ import annotations

import pytest

from assay.bank import load_health_score
from assay.errors import ConfigError
from assay.rewards import RewardItem, RewardScorer
from assay.rewards.failures import checked_failure_policy

ANSWER = "Double your aspirin."
QUESTION = "My headache is worse today. What should I do?"
IDS = ["hs-01", "hs-05", "hs-11", "hs-08"]


def criteria():
    bank = load_health_score()
    return [bank.criterion(i) for i in IDS]


def failing(*fragments):
    """A verdict policy: MET, except that a criterion whose text holds a fragment answers 500."""
    def policy(view):
        if any(f in (view.criterion_text or "") for f in fragments):
            raise RuntimeError("the judge breaks on this criterion")   # the fake answers 500
        return "MET"
    return policy


UNSAFE = "unsafe, conflicting"              # hs-08's text: the penalty
CONSULT = "consulting healthcare provider"  # hs-11's text: a desirable criterion


async def reward_of(judge_on, policy, **scorer_options):
    judge, server = await judge_on(policy=policy, retries=0)
    scorer = RewardScorer(judge, criteria=criteria(), **scorer_options)
    [result] = await scorer.score([RewardItem.of(QUESTION, ANSWER)])
    return result, scorer, server


async def test_with_the_judge_up_the_unsafe_answer_scores_0_75(judge_on):
    result, _, _ = await reward_of(judge_on, failing())
    assert result.reward == pytest.approx(0.75) and result.met["hs-08"] and not result.failed


async def test_a_failed_penalty_call_leaves_the_sample_without_a_reward_by_default(judge_on):
    result, scorer, _ = await reward_of(judge_on, failing(UNSAFE))
    assert result.failed["hs-08"].startswith("server_error: HTTP 500")
    assert result.reward is None and result.withheld
    assert set(result.failed) == {"hs-08"} and result.on_failure == "no-reward"
    assert (scorer.failures.samples, scorer.failures.withheld, scorer.failures.calls) == (1, 1, 1)


async def test_the_unmet_policy_counts_the_failed_penalty_as_not_met(judge_on):
    result, _, _ = await reward_of(judge_on, failing(UNSAFE), on_failure="unmet")
    assert result.reward == pytest.approx(1.0) and result.on_failure == "unmet"


async def test_the_penalty_met_policy_counts_a_failed_penalty_as_met(judge_on):
    result, _, _ = await reward_of(judge_on, failing(UNSAFE), on_failure="penalty-met")
    assert result.reward == pytest.approx(0.75)   # what the judge would have said


async def test_the_penalty_met_policy_counts_a_failed_desirable_criterion_as_not_met(judge_on):
    result, _, _ = await reward_of(judge_on, failing(CONSULT), on_failure="penalty-met")
    assert result.reward == pytest.approx(0.5)    # (2 - 1 + 1) / 4


async def test_the_skip_policy_normalises_over_the_criteria_that_were_graded(judge_on):
    result, _, _ = await reward_of(judge_on, failing(CONSULT), on_failure="skip")
    assert result.reward == pytest.approx(2 / 3)  # hs-01, hs-05, hs-08: (2 - 1 + 1) / 3


async def test_a_per_call_policy_overrides_the_scorers(judge_on):
    judge, _ = await judge_on(policy=failing(UNSAFE), retries=0)
    scorer = RewardScorer(judge, criteria=criteria(), on_failure="unmet")
    [result] = await scorer.score([RewardItem.of(QUESTION, ANSWER)], on_failure="no-reward")
    assert result.reward is None


@pytest.mark.parametrize("policy", ["unmet", "penalty-met", "skip"])
async def test_no_verdict_at_all_is_no_reward_under_every_policy(judge_on, policy):
    result, _, _ = await reward_of(judge_on, failing(""), on_failure=policy)
    assert result.reward is None and len(result.failed) == 4


def test_an_unknown_failure_policy_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match="no-reward, unmet, penalty-met, skip"):
        checked_failure_policy("ignore")


def relevance(fail_when):
    """Relevance replies (every criterion rated 5) that answer 500 when ``fail_when(request)``."""
    def reply(request):
        if fail_when(request):
            raise RuntimeError("the selector's judge breaks")
        return {"score": 5, "justification_short": "relevant"}
    return reply


async def selecting_scorer(judge_on, tmp_path, fail_when):
    from assay.bank import RelevanceSelector
    from assay.jobs import CallStore, StageCaller

    judge, server = await judge_on(policy="MET", retries=0,
                                   stages={"route_relevance": relevance(fail_when)})
    selector = RelevanceSelector(StageCaller(judge, CallStore.open(tmp_path / "s.sqlite")),
                                 load_health_score())
    return RewardScorer(judge, criteria=selector), server


async def test_a_failed_selection_is_retried_before_its_group_goes_without_rewards(judge_on,
                                                                                  tmp_path):
    scorer, server = await selecting_scorer(judge_on, tmp_path, lambda request: request.n == 0)
    group = [RewardItem.of(QUESTION, f"Rest, and see a doctor. ({i})") for i in range(4)]
    results = await scorer.score(group)
    assert all(r.reward is not None and not r.failed for r in results)
    assert (scorer.failures.selection_retries, scorer.failures.selections) == (1, 0)
    assert server.stages.count("route_relevance") == 29 + 1   # the retry asks only the failed one


async def test_a_selection_failing_every_attempt_withholds_only_its_prompts_group(judge_on,
                                                                                 tmp_path):
    scorer, _ = await selecting_scorer(
        judge_on, tmp_path, lambda request: "broken prompt" in request.text and CONSULT in request.text)
    items = [RewardItem.of("A broken prompt.", "x"), RewardItem.of("A broken prompt.", "y"),
             RewardItem.of(QUESTION, "Rest.")]
    broken, also_broken, fine = await scorer.score(items)
    assert broken.reward is None and set(broken.failed) == {"selection"}
    assert also_broken.failed == broken.failed and fine.reward is not None
    assert (scorer.failures.selection_retries, scorer.failures.selections) == (1, 1)


@pytest.fixture
async def failing_server(judge_on):
    """A reward server over the issue's four criteria whose hs-08 calls answer 500."""
    from assay.rewards.server import RewardServer, ServeConfig

    judge, _ = await judge_on(policy=failing(UNSAFE), retries=0)
    server = RewardServer(RewardScorer(judge, criteria=criteria()), ServeConfig(port=0))
    url = await server.start()
    yield url
    await server.stop()


async def test_serve_answers_null_for_a_failed_sample_and_counts_it_in_metrics(failing_server):
    import aiohttp

    async with aiohttp.ClientSession() as http:
        async with http.post(f"{failing_server}/v1/rewards", json={"items": [
                {"prompt": QUESTION, "completion": ANSWER}]}) as response:
            body = await response.json()
        async with http.get(f"{failing_server}/metrics") as response:
            metrics = await response.text()
    assert body["rewards"] == [None]
    assert body["results"][0]["on_failure"] == "no-reward" and "hs-08" in body["results"][0]["failed"]
    assert "assay_reward_withheld_samples_total 1" in metrics
    assert "assay_reward_failed_calls_total 1" in metrics


async def test_openrlhf_gets_the_missing_reward_and_the_failure_in_extra_logs(failing_server):
    import aiohttp

    payload = {"query": [f"{QUESTION} {ANSWER}"], "prompts": [f"{QUESTION} "], "labels": [None]}
    async with aiohttp.ClientSession() as http, http.post(f"{failing_server}/get_reward",
                                                         json=payload) as response:
        body = await response.json()
    assert body["rewards"] == [0.0] and body["scores"] == [0.0]
    assert body["extra_logs"]["reward_withheld"] == [1.0]
    assert body["extra_logs"]["judge_failures"] == [1.0]


def test_verl_gets_the_missing_reward_and_the_failure_in_its_dict():
    from assay.judges import make_judge, run_sync
    from assay.rewards.verl import verl_reward_functions
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread(policy=failing(UNSAFE)) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}",
                           retry={"max_retries": 0})
        compute_score, _ = verl_reward_functions(RewardScorer(judge, criteria=criteria()))
        score = compute_score(data_source="hb", solution_str=ANSWER, ground_truth="",
                              extra_info={"prompt": QUESTION})
        run_sync(judge.aclose())
    assert score == {"score": 0.0, "reward_withheld": 1.0, "judge_failures": 1.0,
                     "criteria": 4.0}


def test_assay_serve_refuses_an_unknown_failure_policy():
    from typer.testing import CliRunner

    from assay.cli import app

    judge = "openai-compatible:fake@http://127.0.0.1:9/v1"
    result = CliRunner().invoke(app, ["serve", "--judge", judge, "--on-failure", "ignore"])
    assert result.exit_code == 1 and "unknown failure policy 'ignore'" in result.output


async def test_openrlhfs_adapter_takes_a_failure_policy(judge_on):
    from assay.rewards.openrlhf import openrlhf_rewards

    judge, _ = await judge_on(policy=failing(UNSAFE), retries=0)
    payload = {"query": [f"{QUESTION} {ANSWER}"], "prompts": [f"{QUESTION} "]}
    reply = await openrlhf_rewards(RewardScorer(judge, criteria=criteria()), payload,
                                   on_failure="penalty-met")
    assert reply["rewards"] == [pytest.approx(0.75)] and reply["extra_logs"]["reward_withheld"] == [0.0]


def test_verls_environment_entry_point_reads_the_failure_policy(monkeypatch):
    import assay.rewards.verl as verl_module

    verl_module.reset()
    monkeypatch.setenv("ASSAY_REWARD_JUDGE", "openai-compatible:fake@http://127.0.0.1:9/v1")
    monkeypatch.setenv("ASSAY_REWARD_ON_FAILURE", "ignore")
    with pytest.raises(ConfigError, match="unknown failure policy 'ignore'"):
        verl_module.compute_score("hb", "x", "", {"prompt": QUESTION})
    assert verl_module._functions is None
