"""``assay serve`` checks every field of a request at the boundary: a bad request is its own
400, and the requests batched with it are scored."""

from __future__ import annotations

import asyncio

import aiohttp
from tests.rewards.conftest import CRITERIA, keyword_policy

from assay.judges import make_judge
from assay.rewards import RewardScorer
from assay.rewards.batching import MicroBatcher
from assay.rewards.server import RewardServer, ServeConfig

PROMPT = "I have had a cold for three days. What should I do?"
GOOD = {"prompt": PROMPT, "completion": "Rest and see a doctor."}


async def post(url, body):
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as response:
        return response.status, await response.json()


async def test_a_bad_request_in_a_micro_batch_fails_only_itself(server_at):
    base, _ = await server_at(batch_window_ms=300)
    url = f"{base}/v1/rewards"
    doctor = {"items": [{"messages": [{"role": "doctor", "content": PROMPT}],
                         "completion": "Rest."}]}
    replies = await asyncio.gather(post(url, doctor), *(post(url, {"items": [GOOD]})
                                                       for _ in range(6)))
    status, body = replies[0]
    assert status == 400 and "items[0].messages[0].role" in body["error"]
    assert "'doctor'" in body["error"]
    assert [reply for reply in replies[1:]] == [(200, replies[1][1])] * 6
    assert replies[1][1]["rewards"] == [1.0]


async def test_a_missing_completion_is_a_400_and_nothing_is_graded(server_at):
    base, judge_server = await server_at()
    url = f"{base}/v1/rewards"
    status, body = await post(url, {"items": [GOOD, {"prompt": PROMPT}]})
    assert status == 400 and "items[1].completion: required" in body["error"]
    assert judge_server.requests == []


async def test_openai_text_content_parts_are_graded_as_their_text(server_at):
    base, judge_server = await server_at()
    url = f"{base}/v1/rewards"
    parts = [{"type": "text", "text": "I have had a cold "}, {"type": "text",
                                                              "text": "for three days."}]
    status, body = await post(url, {"items": [{"messages": [{"role": "user", "content": parts}],
                                               "completion": "Rest and see a doctor."}]})
    assert status == 200 and body["rewards"] == [1.0]
    assert "I have had a cold for three days." in str(judge_server.requests[0]["body"])


async def test_content_parts_other_than_text_are_refused(server_at):
    base, _ = await server_at()
    url = f"{base}/v1/rewards"
    parts = [{"type": "text", "text": "What is this rash?"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    status, body = await post(url, {"items": [{"messages": [{"role": "user", "content": parts}],
                                               "completion": "A rash."}]})
    assert status == 400
    assert "items[0].messages[0].content[1]: only text parts can be graded" in body["error"]


async def test_wrong_types_are_400s_naming_every_bad_field_at_once(server_at):
    base, judge_server = await server_at()
    url = f"{base}/v1/rewards"
    status, body = await post(url, {"items": [
        GOOD, {"prompt": ["not", "text"], "completion": 3},
        {"messages": [{"role": "user", "content": 7}], "completion": "x"}, "an item?"]})
    assert status == 400
    for where in ("items[1].prompt", "items[1].completion: expected a string, got int",
                  "items[2].messages[0].content", "items[3]: expected an object"):
        assert where in body["error"]
    assert judge_server.requests == []


async def test_an_unknown_item_field_is_refused_rather_than_ignored(server_at):
    base, _ = await server_at()
    url = f"{base}/v1/rewards"
    status, body = await post(url, {"items": [{**GOOD, "criterion": ["doc"]}]})
    assert status == 400 and "items[0].criterion: unknown field" in body["error"]


async def test_a_batch_that_raises_fails_only_the_submission_that_caused_it():
    class Picky:
        async def score(self, items):
            if "bad" in items:
                raise ValueError("cannot score 'bad'")
            return [item.upper() for item in items]

    batcher = MicroBatcher(Picky(), window_s=0.05, max_batch=100)
    results = await asyncio.gather(batcher.submit(["a", "b"]), batcher.submit(["bad"]),
                                   batcher.submit(["c"]), return_exceptions=True)
    assert results[0] == ["A", "B"] and results[2] == ["C"]
    assert isinstance(results[1], ValueError)


async def test_openrlhf_query_only_body_is_split_after_the_chat_templates_assistant_turn(
        server_at):
    base, judge_server = await server_at()
    templated = f"<|im_start|>user\n{PROMPT}<|im_end|>\n<|im_start|>assistant\n"
    status, body = await post(f"{base}/get_reward", {"query": [
        templated + "Rest and see a doctor.<|im_end|>", templated + "Double the dose."]})
    assert status == 200 and body["rewards"] == [1.0, 0.0]
    graded = {entry["response_text"] for entry in judge_server.requests}
    assert graded == {"Rest and see a doctor.<|im_end|>", "Double the dose."}


async def test_openrlhf_query_only_body_without_a_known_template_is_a_400(server_at):
    base, judge_server = await server_at()
    status, body = await post(f"{base}/get_reward", {"query": [f"Q: {PROMPT}\nA: Rest."]})
    assert status == 400 and "query[0]" in body["error"] and "send prompts" in body["error"]
    assert judge_server.requests == []


async def test_an_openrlhf_query_that_does_not_start_with_its_prompt_is_a_400(server_at):
    base, judge_server = await server_at()
    status, body = await post(f"{base}/get_reward", {
        "query": [f"Q: {PROMPT}\nA: Rest.", "Something else entirely. Rest."],
        "prompts": [f"Q: {PROMPT}\nA: ", f"Q: {PROMPT}\nA: "], "labels": ["", ""]})
    assert status == 400 and "query[1]: does not start with prompts[1]" in body["error"]
    assert judge_server.requests == []


async def test_a_body_over_max_body_bytes_is_a_413_and_nothing_is_graded(server_at):
    base, judge_server = await server_at(max_body_bytes=2_000)
    status, body = await post(f"{base}/v1/rewards",
                              {"items": [{"prompt": PROMPT, "completion": "Rest. " * 400}]})
    assert status == 413 and "limit of 2,000 bytes" in body["error"]
    assert judge_server.requests == []


async def test_judge_concurrency_caps_the_judges_requests_in_flight(serve):
    judge_server = await serve(policy=keyword_policy, latency=0.05)
    judge = make_judge(f"openai-compatible:fake@{judge_server.base_url}")
    server = RewardServer(RewardScorer(judge, criteria=CRITERIA),
                          ServeConfig(port=0, judge_concurrency=2))
    url = await server.start()
    try:
        status, _ = await post(f"{url}/v1/rewards", {"items": [GOOD] * 4})
    finally:
        await server.stop()
    assert status == 200 and len(judge_server.requests) == 12
    assert judge_server.peak_in_flight == 2


async def test_a_400_names_the_first_twenty_bad_fields_and_counts_the_rest(server_at):
    base, _ = await server_at()
    status, body = await post(f"{base}/v1/rewards", {"items": [{"prompt": PROMPT}] * 500})
    assert status == 400 and body["error"].count("completion: required") == 20
    assert body["error"].endswith("... and 480 more")


async def test_a_request_is_answered_when_its_own_calls_end_not_its_batchs_slowest(server_at):
    """Two requests scored in one batch: the one whose doctor-criterion call gets two malformed
    replies (two re-asks, 0.3 s) does not hold back the other (0.1 s)."""
    from assay.testing.faults import Faults

    slow_marker = "Rest, and SLOW-ITEM see a doctor."
    base, _ = await server_at(batch_window_ms=200, judge_latency=0.1, judge_faults=Faults(
        at={(slow_marker, "consulting a doctor"): ["malformed", "malformed"]}))
    url = f"{base}/v1/rewards"
    slow = asyncio.create_task(post(url, {"items": [{"prompt": PROMPT,
                                                     "completion": slow_marker}]}))
    fast = asyncio.create_task(post(url, {"items": [GOOD]}))
    done, pending = await asyncio.wait({slow, fast}, return_when=asyncio.FIRST_COMPLETED)
    assert done == {fast} and pending == {slow}
    assert fast.result()[0] == 200 and fast.result()[1]["rewards"] == [1.0]
    status, body = await slow
    assert status == 200 and body["rewards"] == [1.0]
    async with aiohttp.ClientSession() as http, http.get(f"{base}/metrics") as response:
        assert "assay_batches_total 1\n" in await response.text()  # both in one batch
