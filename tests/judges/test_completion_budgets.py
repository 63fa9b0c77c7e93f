"""Completion budgets: every call sends one; a reply cut at it is ``truncated`` (asked once
more with the stage's cap, the same messages), never ``unparseable``."""

from __future__ import annotations

from dataclasses import replace

from assay.judges import FailureKind
from assay.judges.completion import DEFAULT_BUDGET, CompletionBudget
from assay.testing import Faults

from .helpers import judge_for, request

BUDGET = CompletionBudget(100, cap=400)


def budgeted(**kw):
    return replace(request(**kw), schema_name="draft", budget=BUDGET)


async def test_a_structured_call_without_a_budget_sends_the_default_one(serve):
    server = await serve()
    async with judge_for(server) as judge:
        assert (await judge.ask(request())).ok
    assert server.requests[0]["body"]["max_tokens"] == DEFAULT_BUDGET.tokens


async def test_a_call_sends_the_budget_its_stage_declares(serve):
    server = await serve()
    async with judge_for(server) as judge:
        assert (await judge.ask(budgeted())).ok
    assert server.requests[0]["body"]["max_tokens"] == 100


async def test_openai_gets_the_budget_as_max_completion_tokens(serve):
    server = await serve()
    async with judge_for(server, provider="openai") as judge:
        await judge.ask(budgeted())
    body = server.requests[0]["body"]
    assert body["max_completion_tokens"] == 100 and "max_tokens" not in body


async def test_an_anthropic_call_sends_the_stage_budget_when_the_judge_sets_none(serve):
    server = await serve()
    async with judge_for(server, provider="anthropic", max_tokens=None) as judge:
        assert (await judge.ask(budgeted())).ok
    assert server.requests[0]["body"]["max_tokens"] == 100


async def test_a_reply_cut_at_its_budget_is_asked_again_with_the_stage_cap(serve):
    server = await serve(faults=Faults(script=["truncated"]))
    async with judge_for(server) as judge:
        reply = await judge.ask(budgeted())
    assert reply.ok and reply.attempts == 2
    assert [r["body"]["max_tokens"] for r in server.requests] == [100, 400]


async def test_the_retry_of_a_cut_reply_does_not_quote_the_cut_text(serve):
    server = await serve(faults=Faults(script=["truncated"]))
    async with judge_for(server) as judge:
        await judge.ask(budgeted())
    first, second = (r["body"]["messages"] for r in server.requests)
    assert second == first


async def test_a_reply_cut_again_at_the_cap_is_truncated_naming_the_stage_and_limit(serve):
    server = await serve(faults=Faults(truncated=1.0))
    async with judge_for(server) as judge:
        reply = await judge.ask(budgeted())
    assert reply.failure.kind is FailureKind.TRUNCATED and reply.data is None
    assert "draft" in reply.failure.message and "max_tokens=400" in reply.failure.message
    assert reply.attempts == 2 and reply.raw  # the cut text is kept for the record


async def test_a_truncated_reply_is_never_re_asked(serve):
    server = await serve(faults=Faults(truncated=1.0))
    async with judge_for(server, max_reasks=5) as judge:
        await judge.ask(budgeted())
    assert len(server.requests) == 2
    assert all(len(r["body"]["messages"]) == 1 for r in server.requests)


async def test_the_judges_own_max_tokens_is_sent_as_it_is_and_never_grown(serve):
    server = await serve(faults=Faults(truncated=1.0))
    async with judge_for(server, max_tokens=50) as judge:
        reply = await judge.ask(budgeted())
    assert reply.failure.kind is FailureKind.TRUNCATED
    assert "judge's own max_tokens" in reply.failure.message
    assert [r["body"]["max_tokens"] for r in server.requests] == [50]


async def test_a_stage_without_a_cap_above_its_need_is_truncated_at_once(serve):
    server = await serve(faults=Faults(truncated=1.0))
    async with judge_for(server) as judge:
        reply = await judge.ask(replace(request(), budget=CompletionBudget(64)))
    assert reply.failure.kind is FailureKind.TRUNCATED and reply.attempts == 1


async def test_an_anthropic_reply_stopped_at_max_tokens_is_truncated(serve):
    server = await serve(faults=Faults(truncated=1.0))
    async with judge_for(server, provider="anthropic") as judge:
        reply = await judge.ask(budgeted())
    assert reply.failure.kind is FailureKind.TRUNCATED
