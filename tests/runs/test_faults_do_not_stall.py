"""Issue 16: a run against an endpoint that answers 429s, 500s and never answers some requests
completes: each hung request is abandoned on the fitted timeout (its slot freed) and retried
like a 500, and --concurrency does not narrow the engine's window."""

from __future__ import annotations

import asyncio
import json
import sqlite3

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


async def test_a_resume_fits_its_attempt_timeout_from_the_stored_latencies(tmp_path, rubric_file):
    """Issue 27, point 11: one call left to retry, and that call's first attempt hangs. With no
    seed the resumed judge has seen no reply, so the attempt waits the 60 s ceiling; seeded
    from the run's stored latencies it is let go within a second or two and retried."""
    items = write_items(tmp_path / "items.jsonl", 6)  # 24 calls
    last = "Answer 5: scrape"  # the response of the last item: its 4 calls
    stuck = (last, "Explains how to remove the stinger.")
    fast = {"max_retries": 3, "base_delay_s": 0.001, "max_delay_s": 0.01}
    async with FakeJudgeServer(policy=POLICY, faults=Faults(at={stuck: ["malformed"] * 3})) as server:
        judge = parse_spec(spec(server), retry=fast)
        first = await assay.agrade(items, rubric=rubric_file, judges=[judge],
                                   run_dir=tmp_path / "run", final_passes=0)
    assert first.status == "incomplete"
    hang = Faults(at={stuck: ["timeout"]}, hang_s=60)
    async with FakeJudgeServer(policy=POLICY, faults=hang, port=server.port) as server:
        resumed = await asyncio.wait_for(  # unseeded, the hung attempt alone would take 60 s
            assay.agrade(items, rubric=rubric_file, judges=[parse_spec(spec(server), retry=fast)],
                         resume=tmp_path / "run"), timeout=30)
        assert [r["fault"] for r in server.requests] == ["timeout", None]
    assert resumed.status == "complete"


async def test_max_reasks_lets_a_run_finish_a_call_malformed_three_times(tmp_path, rubric_file):
    """Issue 27, point 11: the default 2 re-asks leave a call malformed three times failed
    (without a final pass: resume to retry it); max_reasks=3 (--max-reasks 3) finishes it in
    its own call."""
    items = write_items(tmp_path / "items.jsonl", 2)
    call = ("Answer 1: scrape", "Explains how to remove the stinger.")
    outcomes = {}
    for max_reasks in (None, 3):
        async with FakeJudgeServer(policy=POLICY,
                                   faults=Faults(at={call: ["malformed"] * 3})) as server:
            result = await assay.agrade(items, rubric=rubric_file, judges=[spec(server)],
                                        max_reasks=max_reasks, final_passes=0,
                                        run_dir=tmp_path / f"{max_reasks}")
        (attempts,), = rows(result.run_dir, "SELECT MAX(attempts) FROM calls")
        outcomes[max_reasks] = (result.status, attempts)
    assert outcomes == {None: ("incomplete", 3), 3: ("complete", 4)}


async def test_a_run_stored_before_max_reasks_existed_still_resumes(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    async with FakeJudgeServer(policy=POLICY, faults=Faults(script=["server_error"] * 8)) as server:
        judge = parse_spec(spec(server), retry={"max_retries": 0})
        first = await assay.agrade(items, rubric=rubric_file, judges=[judge],
                                   run_dir=tmp_path / "run", final_passes=0)
        assert first.status == "incomplete"
        db = sqlite3.connect(tmp_path / "run" / "run.sqlite")  # as a run made before it stored it
        (stored,), = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchall()
        config = json.loads(stored)
        for entry in config["judges"]:
            del entry["settings"]["max_reasks"]
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
        db.commit()
        db.close()
        resumed = await assay.agrade(items, rubric=rubric_file, judges=[judge],
                                     resume=tmp_path / "run")
    assert resumed.status == "complete"
