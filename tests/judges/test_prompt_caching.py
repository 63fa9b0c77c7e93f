"""Prompt caching on the judge's side: an Anthropic request marks its shared head with
cache_control only when the model can cache it; cached, written (5-minute and 1-hour) input
tokens are read from each reply and priced as the provider bills them; and the judge says when
caching a head pays."""

from __future__ import annotations

import asyncio

import pytest

from assay.judges import JudgeRequest, make_judge
from assay.judges.prompt_caching import CachePlan

from .helpers import FAST_RETRY, VERDICT, prompt

KEY = "sk-ant-test-key-0123456789"
PRICE = {"input": 3.0, "cached_input": 0.3, "output": 15.0}
HEAD = "Shared instructions and conversation. " * 120  # 4,560 characters: 1,140 tokens
SHORT_HEAD = "Shared instructions and conversation. " * 100  # 950 tokens: under Sonnet 4.5's 1,024


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def sonnet(server, **overrides):
    """Claude Sonnet 4.5 (a 1,024-token minimum) at the fake server."""
    overrides.setdefault("retry", FAST_RETRY)
    return make_judge(f"anthropic:claude-sonnet-4-5@{server.base_url}", **overrides)


def cached_request(criterion_id: str, head: str = HEAD, ttl: str = "5m") -> JudgeRequest:
    return JudgeRequest(messages=({"role": "user", "content": head + prompt(criterion_id)},),
                        schema=VERDICT, cache_prefix=len(head), cache_ttl=ttl)


async def test_an_anthropic_request_marks_a_head_the_model_can_cache(serve):
    server = await serve()
    async with sonnet(server) as judge:
        await judge.ask(cached_request("c1"))
    [message] = server.requests[0]["body"]["messages"]
    assert message["content"] == [
        {"type": "text", "text": HEAD, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": prompt("c1")}]


async def test_a_head_under_the_models_minimum_is_sent_unmarked(serve):
    server = await serve()
    async with sonnet(server) as judge:
        await judge.ask(cached_request("c1", head=SHORT_HEAD))
    [message] = server.requests[0]["body"]["messages"]
    assert message["content"] == SHORT_HEAD + prompt("c1")


async def test_a_head_for_the_one_hour_cache_is_marked_with_its_ttl(serve):
    server = await serve()
    async with sonnet(server) as judge:
        await judge.ask(cached_request("c1", ttl="1h"))
    [message] = server.requests[0]["body"]["messages"]
    assert message["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_an_openai_request_is_sent_as_plain_text_whatever_its_cache_prefix(serve):
    server = await serve()
    async with make_judge(f"openai-compatible:gpt-4.1@{server.base_url}",
                          retry=FAST_RETRY) as judge:
        await judge.ask(cached_request("c1"))
    assert server.requests[0]["body"]["messages"][0]["content"] == HEAD + prompt("c1")


@pytest.mark.parametrize("spec", ["anthropic:claude-sonnet-4-5", "openai-compatible:gpt-4.1"])
async def test_cached_input_tokens_are_read_from_the_reply_and_priced_as_cached(serve, spec):
    server = await serve(prompt_cache=True)
    async with make_judge(f"{spec}@{server.base_url}", retry=FAST_RETRY, price=PRICE) as judge:
        first = await judge.ask(cached_request("c1"))
        second = await judge.ask(cached_request("c2"))  # after the first reply: it reads
    assert first.usage.cached_tokens == 0 and second.usage.cached_tokens >= 1024
    u = second.usage
    expected = ((u.prompt_tokens - u.cached_tokens) * 3.0 + u.cached_tokens * 0.3
                + u.completion_tokens * 15.0) / 1e6
    assert second.cost_usd == pytest.approx(expected)
    assert second.cost_usd < first.cost_usd


async def test_requests_sent_together_all_write_and_none_reads(serve):
    server = await serve(prompt_cache=True, latency=0.05)
    async with sonnet(server, price=PRICE) as judge:
        replies = await asyncio.gather(*(judge.ask(cached_request(f"c{i}")) for i in range(4)))
    assert [r.usage.cached_tokens for r in replies] == [0, 0, 0, 0]
    assert all(r.usage.cache_write_tokens == len(HEAD) // 4 for r in replies)
    assert server.bill.live.cache_write_5m == 4 * (len(HEAD) // 4)


@pytest.mark.parametrize(("ttl", "factor"), [("5m", 1.25), ("1h", 2.0)])
async def test_an_anthropic_cache_write_is_priced_as_its_lifetime_is_billed(serve, ttl, factor):
    server = await serve(prompt_cache=True)
    async with sonnet(server, price=PRICE) as judge:
        first = await judge.ask(cached_request("c1", ttl=ttl))
    u = first.usage
    assert u.cache_write_tokens == len(HEAD) // 4 and u.cached_tokens == 0
    assert u.cache_write_1h_tokens == (u.cache_write_tokens if ttl == "1h" else 0)
    expected = ((u.prompt_tokens - u.cache_write_tokens) * 3.0
                + u.cache_write_tokens * 3.0 * factor + u.completion_tokens * 15.0) / 1e6
    assert first.cost_usd == pytest.approx(expected)
    assert first.cost_usd == pytest.approx(server.bill.usd(judge._price))  # as the provider bills


def test_caching_a_head_pays_from_two_calls_for_five_minutes_and_three_for_an_hour():
    judge = make_judge("anthropic:claude-sonnet-4-5")
    head = len(HEAD)
    assert judge.cache_plan(head, 2) == CachePlan("5m")
    assert judge.cache_plan(head, 1) is None  # a write nobody reads
    assert judge.cache_plan(head, 2, "1h") is None and judge.cache_plan(head, 3, "1h") == CachePlan("1h")


def test_no_plan_for_a_head_under_the_minimum_an_unpriced_judge_or_caching_turned_off():
    assert make_judge("anthropic:claude-sonnet-4-5").cache_plan(len(SHORT_HEAD), 14) is None
    assert make_judge("anthropic:claude-sonnet-4-6").cache_plan(len(HEAD), 14) is None  # 2,048
    assert make_judge("openai-compatible:fake@http://127.0.0.1:9/v1").cache_plan(len(HEAD), 14) is None
    assert make_judge("anthropic:claude-sonnet-4-5",
                      prompt_caching=False).cache_plan(len(HEAD), 14) is None
    assert make_judge("openai:gpt-4.1@http://127.0.0.1:9/v1").cache_plan(len(HEAD), 2) == CachePlan("5m")
