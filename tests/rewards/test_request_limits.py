"""``assay serve``: one request's cost is bounded (items, criteria per item, judge calls: a 413
naming the limit), a large request does not hold up small ones (their judge calls take the free
slots in turn), and every refusal is the status that says what happened."""

from __future__ import annotations

import asyncio

from tests.rewards.hostile import GOOD, post, until

from assay.limits import MAX_RESPONSE_CHARS

PROMPT = GOOD["prompt"]
NOMINAL = {"id": "tone", "text": "The tone of the answer.",
           "options": [{"label": "warm", "value": 1}, {"label": "cold", "value": 0}]}


async def test_a_request_over_a_limit_is_a_413_naming_it_and_calls_no_judge(serving):
    url, _, judge_server = await serving(max_items=4, max_criteria=2, max_judge_calls=9)
    rewards = f"{url}/v1/rewards"
    status, body = await post(rewards, {"items": [GOOD] * 5})
    assert status == 413
    assert body["error"] == "5 items in one request, over the limit of 4 (assay serve --max-items)"
    own = [{"id": f"c{k}", "text": f"Says {k}."} for k in range(3)]
    status, body = await post(rewards, {"items": [GOOD, {**GOOD, "criteria": own}]})
    assert status == 413 and body["error"].startswith("items[1].criteria: 3 criteria, over the "
                                                      "limit of 2 per item")
    assert "--max-criteria" in body["error"]
    status, body = await post(rewards, {"items": [GOOD] * 4})  # 4 x the bank's 3 criteria
    assert status == 413 and "12 judge calls" in body["error"]
    assert "over the limit of 9 per request (assay serve --max-judge-calls)" in body["error"]
    templated = {"query": [PROMPT + " Rest."] * 5, "prompts": [PROMPT] * 5}
    status, body = await post(f"{url}/get_reward", templated)
    assert status == 413 and "--max-items" in body["error"]
    assert judge_server.requests == []
    status, body = await post(rewards, {"items": [GOOD] * 3})
    assert status == 200 and body["rewards"] == [1.0] * 3 and len(judge_server.requests) == 9


async def test_a_small_request_is_not_queued_behind_a_large_ones_judge_calls(serving):
    url, _, judge_server = await serving(judge_latency=0.01, judge_concurrency=4)
    large = asyncio.create_task(post(f"{url}/v1/rewards", {"items": [
        {"prompt": f"{PROMPT} (#{i})", "completion": "Rest."} for i in range(200)]}))
    await until(lambda: len(judge_server.requests) >= 8)  # its 600 calls are under way
    before = len(judge_server.requests)
    status, body = await post(f"{url}/v1/rewards", {"items": [GOOD]})
    during = len(judge_server.requests) - before
    assert status == 200 and body["rewards"] == [1.0]
    assert not large.done()
    # its 3 calls took every other free slot: answered within a few of the large one's calls
    assert during <= 16, f"{during} judge calls went before the small request's 3"
    status, body = await large
    assert status == 200 and len(body["rewards"]) == 200


async def test_a_criterion_the_template_cannot_grade_is_a_400_naming_it(serving):
    url, _, judge_server = await serving()  # the healthbench template: binary criteria only
    status, body = await post(f"{url}/v1/rewards", {"items": [
        GOOD, {**GOOD, "criteria": [{"id": "doc", "text": "Suggests a doctor."}, NOMINAL]}]})
    assert status == 400
    assert body["error"] == ("<input>: items[1].criteria: criterion 'tone' is ordinal: the "
                             "healthbench template grades binary criteria only (the assay "
                             "template grades it: assay serve --template assay)")
    assert judge_server.requests == []


async def test_the_assay_template_grades_that_criterion(serving):
    url, _, _ = await serving(template="assay")
    status, body = await post(f"{url}/v1/rewards", {"items": [{**GOOD, "criteria": [NOMINAL]}]})
    assert status == 200 and body["results"][0]["criteria"] == ["tone"]


async def test_openrlhf_withholds_only_the_oversized_samples_reward(serving):
    url, _, judge_server = await serving()
    prompt = f"Q: {PROMPT}\nA: "
    answers = ["Rest and see a doctor.", "x" * (MAX_RESPONSE_CHARS + 1), "Rest."]
    status, body = await post(f"{url}/get_reward", {
        "query": [prompt + a for a in answers], "prompts": [prompt] * 3, "labels": [""] * 3})
    assert status == 200
    assert body["rewards"] == [1.0, 0.0, body["rewards"][2]] and body["rewards"][2] > 0
    assert body["extra_logs"]["oversized"] == [0.0, 1.0, 0.0]
    assert body["extra_logs"]["reward_withheld"] == [0.0, 1.0, 0.0]
    graded = {entry["response_text"] for entry in judge_server.requests}
    assert graded == {"Rest and see a doctor.", "Rest."}  # the oversized one never sent


async def test_v1_rewards_still_refuses_an_oversized_item_with_a_413(serving):
    url, _, judge_server = await serving()
    status, body = await post(f"{url}/v1/rewards", {"items": [
        GOOD, {"prompt": PROMPT, "completion": "x" * (MAX_RESPONSE_CHARS + 1)}]})
    assert status == 413 and body["error"].startswith("items[1]: the answer has 200,001")
    assert judge_server.requests == []


async def test_the_bearer_scheme_is_matched_in_any_case(serving):
    url, _, _ = await serving(token="s3cret")
    for scheme in ("bearer", "BEARER", "Bearer"):
        status, body = await post(f"{url}/v1/rewards", {"items": [GOOD]},
                                  headers={"Authorization": f"{scheme} s3cret"})
        assert status == 200 and body["rewards"] == [1.0], scheme
    status, _ = await post(f"{url}/v1/rewards", {"items": [GOOD]},
                           headers={"Authorization": "Basic s3cret"})
    assert status == 401
