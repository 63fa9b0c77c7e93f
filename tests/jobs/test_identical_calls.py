"""Issue 30, point 6: concurrent identical requests. Both were sent and billed, but the call
store kept one row (same key), so the job's calls and cost counted one. Now the second waits
for the first: every request sent is one stored call."""

from __future__ import annotations

import asyncio

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge

SCHEMA = {"type": "object", "required": ["decision"]}
ASK = [{"role": "user", "content": "Is 'Advises hydration.' entailed by criterion 1?"}]


async def test_identical_concurrent_calls_are_one_request_counted_once(serve, tmp_path):
    server = await serve(stages={"cia_verify": {"decision": "YES"}}, latency=0.05)
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, store)
        first, second = await asyncio.gather(
            caller.ask("cia_verify", ASK, SCHEMA, item_id="q1"),
            caller.ask("cia_verify", ASK, SCHEMA, item_id="q1"))
    assert first == second == {"decision": "YES"}
    assert len(server.requests) == store.totals().calls == 1


async def test_a_shared_call_that_fails_fails_every_waiter(serve, tmp_path):
    server = await serve(stages={"cia_verify": "never json"}, latency=0.05)
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, store)
        outcomes = await asyncio.gather(
            caller.ask("cia_verify", ASK, SCHEMA, item_id="q1"),
            caller.ask("cia_verify", ASK, SCHEMA, item_id="q1"), return_exceptions=True)
    assert [type(o).__name__ for o in outcomes] == ["StageError", "StageError"]
    assert store.totals().failed == 1 and not store.in_flight
