"""Prompt caching: Anthropic requests mark the shared prefix with cache_control; cached input
tokens are read from each reply (both wires) and priced at the cached-input price."""

from __future__ import annotations

import pytest

from assay.judges import JudgeRequest

from .helpers import VERDICT, judge_for, prompt

KEY = "sk-ant-test-key-0123456789"
PRICE = {"input": 3.0, "cached_input": 0.3, "output": 15.0}
HEAD = "Shared instructions and conversation. " * 40  # 1,520 characters: 380 tokens


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def cached_request(criterion_id: str) -> JudgeRequest:
    return JudgeRequest(messages=({"role": "user", "content": HEAD + prompt(criterion_id)},),
                        schema=VERDICT, cache_prefix=len(HEAD))


async def test_an_anthropic_request_marks_its_shared_prefix_with_cache_control(serve):
    server = await serve()
    async with judge_for(server, provider="anthropic") as judge:
        await judge.ask(cached_request("c1"))
    [message] = server.requests[0]["body"]["messages"]
    assert message["content"] == [
        {"type": "text", "text": HEAD, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": prompt("c1")}]


async def test_an_openai_request_is_sent_as_plain_text_whatever_its_cache_prefix(serve):
    server = await serve()
    async with judge_for(server) as judge:
        await judge.ask(cached_request("c1"))
    assert server.requests[0]["body"]["messages"][0]["content"] == HEAD + prompt("c1")


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
async def test_cached_input_tokens_are_read_from_the_reply_and_priced_as_cached(serve, provider):
    server = await serve(prompt_cache=True, prompt_cache_min_tokens=256)
    async with judge_for(server, provider=provider, price=PRICE) as judge:
        first = await judge.ask(cached_request("c1"))
        second = await judge.ask(cached_request("c2"))
    assert first.usage.cached_tokens == 0 and second.usage.cached_tokens >= 256
    u = second.usage
    expected = ((u.prompt_tokens - u.cached_tokens) * 3.0 + u.cached_tokens * 0.3
                + u.completion_tokens * 15.0) / 1e6
    assert second.cost_usd == pytest.approx(expected)
    assert second.cost_usd < first.cost_usd


async def test_an_anthropic_cache_write_is_priced_at_a_quarter_above_the_input_price(serve):
    server = await serve(prompt_cache=True, prompt_cache_min_tokens=256)
    async with judge_for(server, provider="anthropic", price=PRICE) as judge:
        first = await judge.ask(cached_request("c1"))
    u = first.usage
    assert u.cache_write_tokens >= 256 and u.cached_tokens == 0
    expected = ((u.prompt_tokens - u.cache_write_tokens) * 3.0 + u.cache_write_tokens * 3.75
                + u.completion_tokens * 15.0) / 1e6
    assert first.cost_usd == pytest.approx(expected)
