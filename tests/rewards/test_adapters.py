"""The RL adapters, called the way each framework calls them.

verl and OpenRLHF are not installed (GPUs, Ray): the calls below follow their conventions as
read from their sources (TRL's adapter also runs inside TRL itself: test_trl_grpo.py) — TRL's ``GRPOTrainer._calculate_rewards``
calls ``reward_func(prompts=, completions=, completion_ids=, **dataset_columns)`` (plus
``trainer_state`` in recent versions) and takes a list of floats or None; verl's reward
managers call ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`` or,
batched, ``compute_score(data_sources=, solution_strs=, ground_truths=, extra_infos=)``;
OpenRLHF's ``remote_rm_fn`` POSTs ``{"query", "prompts", "labels"}`` and reads ``rewards``.
"""

from __future__ import annotations

import json

import pytest
from tests.rewards.conftest import CRITERIA, keyword_policy

from assay.errors import InputError
from assay.judges import make_judge, run_sync
from assay.rewards import RewardScorer, criteria_from_label, trl_reward_function
from assay.rewards.openrlhf import openrlhf_items, openrlhf_rewards
from assay.rewards.verl import verl_reward_functions
from assay.testing import FakeJudgeServer

UNSAFE_ONLY = '{"rubrics": [{"criterion": "Includes unsafe advice.", "points": -5}]}'
PROMPT = "I have had a cold for three days. What should I do?"


@pytest.fixture
def scorer():
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        yield RewardScorer(judge, criteria=CRITERIA)
        run_sync(judge.aclose())


def test_trl_conversational_format_as_grpo_trainer_calls_it(scorer):
    reward = trl_reward_function(scorer)
    prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}]] * 2
    completions = [[{"role": "assistant", "content": "<think>hmm</think>Rest and see a doctor."}],
                   [{"role": "assistant", "content": "Double the dose."}]]
    rewards = reward(prompts=prompts, completions=completions, completion_ids=[[1], [2]],
                     trainer_state=None, ideal=["x", "y"])
    assert rewards == [1.0, 0.0] and reward.__name__ == "health_score_reward"


def test_trl_standard_format_and_per_row_criteria_from_a_dataset_column(scorer):
    reward = trl_reward_function(scorer)
    only_rest = json.dumps([{"id": "rest", "text": "Recommends rest and fluids.", "weight": 1}])
    rewards = reward(prompts=[PROMPT, PROMPT], completions=["See a doctor.", "See a doctor."],
                     criteria=[None, only_rest])
    assert rewards == [pytest.approx(2 / 3), 0.0]
    by_id = reward(prompts=[PROMPT], completions=["Rest."], criteria=[["rest"]])
    assert by_id == [1.0]


def test_verl_compute_score_per_sample_and_batched(scorer):
    compute_score, compute_score_batch = verl_reward_functions(scorer)
    info = {"prompt": [{"role": "user", "content": PROMPT}], "index": 3}
    assert compute_score(data_source="healthbench", solution_str="Rest and see a doctor.",
                         ground_truth="", extra_info=info) == {
        "score": 1.0, "reward_withheld": 0.0, "judge_failures": 0.0, "criteria": 3.0}
    rows = compute_score_batch(data_sources=["hb", "hb"], solution_strs=["Rest.", "x"],
                               ground_truths=["", UNSAFE_ONLY],
                               extra_infos=[info, {"prompt": PROMPT}])
    assert [row["score"] for row in rows] == [pytest.approx(2 / 3), 1.0]
    with pytest.raises(InputError, match=r"extra_info\[0\].prompt"):
        compute_score("hb", "Rest.", "", {})


def test_openrlhf_payload_splits_each_query_into_prompt_and_response(scorer):
    templated = f"<|user|>{PROMPT}<|assistant|>"
    payload = {"query": [templated + "Rest and see a doctor.", templated + "Double the dose."],
               "prompts": [templated, templated], "labels": ["", ""]}
    items = openrlhf_items(scorer, payload)
    assert items[0].completion == "Rest and see a doctor."
    assert items[0].messages == ({"role": "user", "content": templated},)
    reply = run_sync(openrlhf_rewards(scorer, payload))
    assert reply["rewards"] == [1.0, 0.0] and reply["scores"] == [1.0, 0.0]
    assert reply["extra_logs"]["criteria"] == [3.0, 3.0]
    with pytest.raises(InputError, match="prompts"):
        openrlhf_items(scorer, {"query": ["a"]})


def test_labels_name_criteria_as_json_lists_healthbench_rows_or_bank_ids():
    assert criteria_from_label(None) is None and criteria_from_label("null") is None
    row = {"prompt_id": "p", "rubrics": [{"criterion": "Says hi.", "points": 3,
                                          "tags": ["axis:accuracy"]}]}
    [c] = criteria_from_label(json.dumps(row))
    assert (c.text, c.weight, c.tags) == ("Says hi.", 3.0, ["axis:accuracy"])
    assert [c.id for c in criteria_from_label(["harm"], CRITERIA)] == ["harm"]
    with pytest.raises(InputError, match=r"label: unknown criterion id\(s\) \['nope'\]"):
        criteria_from_label(["nope"], CRITERIA)
    with pytest.raises(InputError, match=r"labels\[2\]\[0\].text"):
        criteria_from_label([{"text": ""}], where="labels[2]")
    with pytest.raises(InputError, match="expected JSON criteria"):
        criteria_from_label("not json")


def test_verls_module_level_compute_score_is_configured_from_the_environment(monkeypatch,
                                                                              tmp_path):
    import assay.rewards.verl as verl_module
    from assay.errors import ConfigError

    verl_module.reset()
    monkeypatch.delenv("ASSAY_REWARD_JUDGE", raising=False)
    with pytest.raises(ConfigError, match="set ASSAY_REWARD_JUDGE"):
        verl_module.compute_score("hb", "x", "", {"prompt": PROMPT})
    bank = tmp_path / "bank.json"
    bank.write_text(json.dumps({"id": "b", "criteria": [c.model_dump() for c in CRITERIA]}))
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as server:
        monkeypatch.setenv("ASSAY_REWARD_JUDGE", f"openai-compatible:fake@{server.base_url}")
        monkeypatch.setenv("ASSAY_REWARD_BANK", str(bank))
        score = verl_module.compute_score(data_source="hb", solution_str="Rest, see a doctor.",
                                          ground_truth="", extra_info={"prompt": PROMPT})
        batch = verl_module.compute_score_batch(data_sources=["hb"], solution_strs=["Rest."],
                                                ground_truths=[""],
                                                extra_infos=[{"prompt": PROMPT}])
        assert (score["score"], batch[0]["score"]) == (1.0, pytest.approx(2 / 3))
        verl_module.reset()
    assert verl_module._functions is None
