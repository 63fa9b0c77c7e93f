"""The batch judge against the fake server's OpenAI Batch API and Anthropic Message Batches."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import ConfigError
from assay.judges import Budget, FailureKind, make_judge
from assay.judges.batch_judge import BatchJudge, MemoryLedger
from assay.testing import BatchScript, Faults

from .helpers import judge_for, request

KEY = "sk-ant-test-key-0123456789"
FAST = {"poll_s": 0.02, "gather_s": 0.02}


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def batch_judge(server, provider="openai-compatible", ledger=None, **kw) -> BatchJudge:
    return BatchJudge(judge_for(server, provider=provider), ledger or MemoryLedger(), **{**FAST, **kw})


async def ask_all(judge: BatchJudge, ids: list[str]):
    try:
        return await asyncio.gather(*(judge.ask(request(c)) for c in ids))
    finally:
        await judge.aclose()


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_requests_asked_together_go_out_as_one_batch_and_get_their_own_verdicts(serve, provider):
    server = await serve(policy={"c1": "MET", "c2": "UNMET", "c3": "MET"})
    replies = await ask_all(batch_judge(server, provider), ["c1", "c2", "c3"])
    assert [r.data["verdict"] for r in replies] == ["MET", "UNMET", "MET"]
    assert server.batches.created == 1
    assert {r["path"] for r in server.requests} == {
        "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"}


async def test_openai_batch_input_is_an_uploaded_jsonl_file_of_chat_completion_requests(serve):
    server = await serve()
    judge = batch_judge(server)
    await ask_all(judge, ["c1"])
    batch = server.batches.batches[judge.submitted[0]]
    assert batch["endpoint"] == "/v1/chat/completions" and batch["completion_window"] == "24h"
    assert batch["status"] == "completed" and batch["request_counts"]["completed"] == 1
    line = server.batches.files[batch["input_file_id"]].decode()
    assert '"method":"POST"' in line and '"url":"/v1/chat/completions"' in line


async def test_a_batch_reply_costs_half_the_live_price(serve):
    server = await serve(usage={"prompt_tokens": 1000, "completion_tokens": 100})
    async with judge_for(server, price={"input": 2.0, "output": 8.0}) as live:
        live_reply = await live.ask(request("c1"))
    batch = BatchJudge(judge_for(server, price={"input": 2.0, "output": 8.0}), MemoryLedger(), **FAST)
    [reply] = await ask_all(batch, ["c1"])
    assert live_reply.cost_usd == pytest.approx(0.0028)
    assert reply.cost_usd == pytest.approx(live_reply.cost_usd / 2)


async def test_a_slow_batch_is_polled_until_it_ends(serve):
    server = await serve(batches=BatchScript(complete_after_s=0.3))
    judge = batch_judge(server)
    task = asyncio.ensure_future(ask_all(judge, ["c1"]))
    await asyncio.sleep(0.15)
    assert not task.done() and server.batches.batches[judge.submitted[0]]["status"] == "in_progress"
    [reply] = await task
    assert reply.ok


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_requests_expired_in_their_batch_are_asked_again_in_a_new_batch(serve, provider):
    server = await serve(batches=BatchScript(expire=1))
    judge = batch_judge(server, provider)
    replies = await ask_all(judge, ["c1", "c2", "c3", "c4"])
    assert all(r.ok for r in replies)
    assert len(judge.submitted) == 2 and server.batches.created == 2
    first = server.batches.batches[judge.submitted[0]]
    if provider == "anthropic":
        assert first["processing_status"] == "ended" and first["request_counts"]["expired"] == 2
    else:
        assert first["status"] == "expired" and first["request_counts"]["failed"] == 2


async def test_a_request_that_failed_in_its_batch_is_asked_live_when_the_user_chose_live(serve):
    server = await serve(faults=Faults(script=["server_error"]))
    judge = batch_judge(server, retry="live")
    [reply] = await ask_all(judge, ["c1"])
    assert reply.ok and server.batches.created == 1
    assert [r["fault"] for r in server.requests] == ["server_error", None]


async def test_a_request_failing_in_every_batch_round_is_a_failure_never_a_verdict(serve):
    server = await serve(faults=Faults(server_error=1.0))
    judge = batch_judge(server, max_rounds=2)
    [reply] = await ask_all(judge, ["c1"])
    assert not reply.ok and reply.data is None
    assert reply.failure.kind is FailureKind.SERVER_ERROR and server.batches.created == 2


async def test_a_request_in_a_recorded_batch_waits_for_it_instead_of_submitting_again(serve):
    server = await serve(batches=BatchScript(complete_after_s=0.2))
    ledger = MemoryLedger()
    first = batch_judge(server, ledger=ledger)
    task = asyncio.ensure_future(first.ask(request("c1")))
    while not ledger.kept:  # submitted, then the process "dies"
        await asyncio.sleep(0.01)
    task.cancel()
    await first.aclose()
    [reply] = await ask_all(batch_judge(server, ledger=ledger), ["c1"])
    assert reply.ok and server.batches.created == 1


async def test_a_batch_judge_refuses_a_budget(serve):
    server = await serve()
    judge = make_judge(f"openai-compatible:fake-model@{server.base_url}", budget=Budget(1.0))
    with pytest.raises(ConfigError, match="--budget"):
        BatchJudge(judge, MemoryLedger())


async def test_requests_beyond_a_batchs_size_limit_go_out_in_another_batch(serve):
    server = await serve(policy={"c1": "MET", "c2": "UNMET", "c3": "MET"})
    judge = batch_judge(server, max_bytes=2 * 2048 + 400)  # room for two small requests
    replies = await ask_all(judge, ["c1", "c2", "c3"])
    assert [r.data["verdict"] for r in replies] == ["MET", "UNMET", "MET"]
    assert len(judge.submitted) == 2 and server.batches.created == 2


class ForgetfulLedger(MemoryLedger):
    """A ledger whose session "dies" after the batch was created, before its id was recorded."""

    def submitted(self, judge_id, batch_id, custom_ids, submission=None):
        raise asyncio.CancelledError


async def test_an_openai_batch_created_but_never_recorded_is_found_by_its_metadata(serve):
    server = await serve(batches=BatchScript(complete_after_s=0.2))
    ledger = ForgetfulLedger()
    first = batch_judge(server, ledger=ledger)
    task = asyncio.ensure_future(first.ask(request("c1")))
    while server.batches.created == 0:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    await first.aclose()
    assert ledger.unresolved(first.id)  # the intent, without a batch id
    again = MemoryLedger(kept=ledger.records())
    [reply] = await ask_all(batch_judge(server, ledger=again), ["c1"])
    assert reply.ok and server.batches.created == 1
    [record] = again.records()  # the intent now holds the batch the server made
    assert record["batch_id"] == next(iter(server.batches.batches))


async def test_a_batch_reply_cut_at_its_budget_is_truncated_and_not_batched_again(serve):
    server = await serve(faults=Faults(truncated=1.0))
    judge = batch_judge(server, max_rounds=3)
    [reply] = await ask_all(judge, ["c1"])
    assert reply.failure.kind is FailureKind.TRUNCATED and reply.data is None
    assert server.batches.created == 1
    line = server.batches.files[server.batches.batches[judge.submitted[0]]["input_file_id"]]
    assert b'"max_tokens":1024' in line
