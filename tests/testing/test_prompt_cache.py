"""The fake server's prompt cache follows the providers' rules (quoted in
tests/data/provider_docs/prompt_caching.md), over real HTTP: a model's minimum, an entry
readable only once the reply of the request that wrote it has begun, the 5-minute lifetime
refreshed by each read (1 hour when marked so), OpenAI's automatic caching from 1,024 tokens in
128-token steps; the bill it keeps, live and in batches."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from assay.testing import FakeJudgeServer
from assay.testing.batches import BatchScript
from assay.testing.prompt_cache import PromptCache

HEAD = "x" * 4400  # 1,100 tokens at 4 characters a token


def messages_body(model: str = "claude-sonnet-4-5", head: str = HEAD, ttl: str | None = None,
                  tail: str = "<criterion id=\"c1\">Says x.</criterion>") -> dict:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": [
        {"type": "text", "text": head, "cache_control": mark}, {"type": "text", "text": tail}]}]}


def chat_body(text: str) -> dict:
    return {"model": "gpt-4.1", "messages": [{"role": "user", "content": text}]}


async def post(server: FakeJudgeServer, path: str, body: dict) -> dict:
    async with aiohttp.ClientSession() as session, session.post(
            server.base_url + path, json=body, headers={"x-api-key": "k"}) as reply:
        assert reply.status == 200
        return (await reply.json())["usage"]


class Clock:
    """A clock a test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_marked_head_is_written_once_then_read(serve):
    server = await serve(prompt_cache=True)
    first = await post(server, "/messages", messages_body())
    second = await post(server, "/messages", messages_body())
    assert (first["cache_creation_input_tokens"], first["cache_read_input_tokens"]) == (1100, 0)
    assert (second["cache_creation_input_tokens"], second["cache_read_input_tokens"]) == (0, 1100)
    assert first["cache_creation"] == {"ephemeral_5m_input_tokens": 1100,
                                       "ephemeral_1h_input_tokens": 0}


async def test_requests_arriving_before_the_writers_reply_all_miss_and_all_write(serve):
    server = await serve(prompt_cache=True, latency=0.05)
    usages = await asyncio.gather(*(post(server, "/messages", messages_body()) for _ in range(3)))
    assert [u["cache_creation_input_tokens"] for u in usages] == [1100] * 3
    assert [u["cache_read_input_tokens"] for u in usages] == [0] * 3
    later = await post(server, "/messages", messages_body())
    assert later["cache_read_input_tokens"] == 1100


@pytest.mark.parametrize(("model", "cached"), [("claude-sonnet-4-5", True),  # 1,024 minimum
                                               ("claude-sonnet-4-6", False),  # 2,048
                                               ("claude-haiku-4-5", False)])  # 4,096
async def test_a_head_under_the_models_minimum_is_neither_written_nor_read(serve, model, cached):
    server = await serve(prompt_cache=True)
    await post(server, "/messages", messages_body(model))
    again = await post(server, "/messages", messages_body(model))
    assert again["cache_read_input_tokens"] == (1100 if cached else 0)
    assert server.bill.live.cache_write_5m == (1100 if cached else 0)


async def test_an_entry_lives_five_minutes_after_its_last_read(serve):
    clock = Clock()
    server = await serve(prompt_cache=PromptCache(clock=clock))
    await post(server, "/messages", messages_body())
    clock.now += 299
    assert (await post(server, "/messages", messages_body()))["cache_read_input_tokens"] == 1100
    clock.now += 299  # 598 s after the write, 299 s after the read that refreshed it
    assert (await post(server, "/messages", messages_body()))["cache_read_input_tokens"] == 1100
    clock.now += 301
    expired = await post(server, "/messages", messages_body())
    assert (expired["cache_read_input_tokens"], expired["cache_creation_input_tokens"]) == (0, 1100)


async def test_an_entry_marked_for_an_hour_lives_an_hour_and_is_billed_as_such(serve):
    clock = Clock()
    server = await serve(prompt_cache=PromptCache(clock=clock))
    first = await post(server, "/messages", messages_body(ttl="1h"))
    assert first["cache_creation"] == {"ephemeral_5m_input_tokens": 0,
                                       "ephemeral_1h_input_tokens": 1100}
    clock.now += 3599
    assert (await post(server, "/messages", messages_body(ttl="1h")))["cache_read_input_tokens"] == 1100
    assert (server.bill.live.cache_write_1h, server.bill.live.cache_read) == (1100, 1100)


async def test_different_tools_make_different_prefixes(serve):
    server = await serve(prompt_cache=True)
    tool = {"name": "verdict", "input_schema": {"type": "object"}}
    await post(server, "/messages", {**messages_body(), "tools": [tool]})
    other = {**tool, "input_schema": {"type": "object", "required": ["a"]}}
    again = await post(server, "/messages", {**messages_body(), "tools": [other]})
    assert again["cache_read_input_tokens"] == 0  # the tools open the prefix


async def test_openai_caches_prompts_of_1024_tokens_or_more_in_128_token_steps(serve):
    server = await serve(prompt_cache=True)
    long_prompt = "y" * 5000  # 1,250 tokens: the steps are 1,024 and 1,152
    await post(server, "/chat/completions", chat_body(long_prompt))
    again = await post(server, "/chat/completions", chat_body(long_prompt + " and more"))
    assert again["prompt_tokens_details"]["cached_tokens"] == 1152
    short = "z" * 4000  # 1,000 tokens: never cached
    await post(server, "/chat/completions", chat_body(short))
    again = await post(server, "/chat/completions", chat_body(short))
    assert again["prompt_tokens_details"]["cached_tokens"] == 0
    assert server.bill.live.cache_write_5m == server.bill.live.cache_write_1h == 0  # free


async def test_openai_requests_arriving_together_miss(serve):
    server = await serve(prompt_cache=True, latency=0.05)
    usages = await asyncio.gather(*(post(server, "/chat/completions", chat_body("y" * 5000))
                                    for _ in range(3)))
    assert [u["prompt_tokens_details"]["cached_tokens"] for u in usages] == [0, 0, 0]


async def test_a_batchs_requests_are_billed_as_batch_requests_and_share_the_cache(serve):
    server = await serve(prompt_cache=True, latency=0.02, batches=BatchScript(concurrency=1))
    requests = [{"custom_id": f"r{i}", "params": messages_body()} for i in range(3)]
    async with aiohttp.ClientSession() as session:
        async with session.post(server.base_url + "/messages/batches",
                                json={"requests": requests}) as reply:
            batch = await reply.json()
        while server.batches.batches[batch["id"]]["processing_status"] != "ended":
            await asyncio.sleep(0.02)
    bill = server.bill
    assert bill.live.requests == 0 and bill.batch.requests == 3
    # one at a time: the first writes, the next two start after its reply and read
    assert (bill.batch.cache_write_5m, bill.batch.cache_read) == (1100, 2200)
