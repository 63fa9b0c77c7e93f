"""Issue 16: a run against an endpoint that answers 429s, 500s and never answers some requests
completes: each hung request is abandoned on the fitted timeout (its slot freed) and retried
like a 500, and --concurrency does not narrow the engine's window."""

from __future__ import annotations

import asyncio

from tests.runs.conftest import POLICY, rows, spec, write_items

import assay
from assay.judges import make_judge, parse_spec
from assay.runs.engine import MIN_WINDOW, Engine, JudgeSlot
from assay.testing import FakeJudgeServer, Faults


async def test_hung_requests_free_their_slots_and_the_run_completes(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 20)  # 80 calls
    faults = Faults(rate_limit=0.1, server_error=0.1, timeout=0.1, retry_after=0.01, hang_s=60)
    async with FakeJudgeServer(policy=POLICY, faults=faults, latency=0.002) as server:
        judge = parse_spec(spec(server), limits={"max_in_flight": 4},
                           retry={"max_retries": 8, "base_delay_s": 0.001, "max_delay_s": 0.01})
        result = await asyncio.wait_for(  # a guard against a hang, not a measurement
            assay.agrade(items, rubric=rubric_file, judges=[judge], run_dir=tmp_path / "run"),
            timeout=50)
        # The hung requests were never answered: the server still holds every one of them,
        # so the run finished only because the client let them go.
        hung = sum(1 for r in server.requests if r["fault"] == "timeout")
        assert hung >= 3 and server.in_flight == hung
        faulted = sum(1 for r in server.requests if r["fault"] is not None)
        sent = len(server.requests)
    assert result.status == "complete"
    (ok, attempts), = rows(result.run_dir, "SELECT SUM(status = 'ok'), SUM(attempts) FROM calls")
    assert ok == 80 and attempts == sent == 80 + faulted  # each fault was retried once


async def test_the_engine_window_does_not_shrink_to_the_in_flight_limit(tmp_path, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        for limit, window in ((1, MIN_WINDOW), (64, MIN_WINDOW), (100, 400)):
            judge = make_judge(spec(server))
            judge.limiter.set_max_in_flight(limit)  # what --concurrency N does
            engine = Engine(store=None, grader=None, judges=[JudgeSlot(judge.id, judge)])
            assert engine.concurrency == window  # calls outstanding: at least 256, 4 x in flight
            await judge.aclose()
