"""Resume: after kill -9 of `assay grade`, without repeating a call; refusal of a changed config."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items

import assay
from assay.errors import ConfigError
from assay.testing import FakeJudgeServer

ASSAY = [str(Path(sys.executable).parent / "assay")]
VERDICTS = "SELECT item_id, criterion_id, judge, verdict, option, explanation FROM verdicts ORDER BY 1, 2, 3"
CALLS = "SELECT key, prompt_hash, permutations, status FROM calls ORDER BY key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_fake_judge(tmp_path: Path, latency_ms: int):
    port, log = free_port(), tmp_path / "requests.jsonl"
    policy = tmp_path / "truth.jsonl"
    policy.write_text("".join(json.dumps({"criterion_id": c, ("option" if c in ("pain", "tone")
                                          else "verdict"): a}) + "\n" for c, a in POLICY.items()))
    server = subprocess.Popen(
        [*ASSAY, "fake-judge", "--port", str(port), "--latency-ms", str(latency_ms),
         "--policy", f"truth:{policy}", "--log", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return server, f"openai-compatible:fake@http://127.0.0.1:{port}/v1", log


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_resume_after_kill_9_repeats_no_finished_call_and_ends_identical(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 40)  # 160 calls, 4 at a time, 60 ms each
    server, judge, log = start_fake_judge(tmp_path, latency_ms=60)
    try:
        run = tmp_path / "run"
        grading = subprocess.Popen(
            [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", judge,
             "--run-dir", str(run), "--concurrency", "4", "--quiet", "--seed", "3"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:  # wait until some calls are stored, then kill -9
            time.sleep(0.1)
            if (run / "run.sqlite").exists() and _stored_calls(run) >= 30:
                break
        os.kill(grading.pid, signal.SIGKILL)
        grading.wait()
        finished = {(i, c) for i, c in rows(run, "SELECT item_id, json_extract(criteria, '$[0]') "
                                                 "FROM calls WHERE status = 'ok'")}
        assert 30 <= len(finished) < 160, "the kill should land mid-run"
        n_before = len(logged(log))

        resumed = subprocess.run([*ASSAY, "grade", "--resume", str(run), "--quiet"],
                                 capture_output=True, text=True, timeout=60, check=False)
        assert resumed.returncode == 0, resumed.stderr

        after = logged(log)[n_before:]
        responses = {f"Answer {i}: scrape the stinger out, ice it.": f"q{i}" for i in range(40)}
        asked_again = {(responses[r["response_text"]], r["criterion_id"]) for r in after}
        assert not asked_again & finished  # (b) no finished call was repeated
        assert len(after) <= 160 - len(finished) + 4  # at most the calls in flight at the kill
        assert rows(run, "SELECT COUNT(*), SUM(done) FROM items") == [(40, 40)]

        fresh = tmp_path / "fresh"
        subprocess.run([*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", judge,
                        "--run-dir", str(fresh), "--quiet", "--seed", "3"], check=True,
                       capture_output=True, timeout=60)
        assert rows(run, VERDICTS) == rows(fresh, VERDICTS)  # (a) identical results
        assert rows(run, CALLS) == rows(fresh, CALLS)  # same prompts and permutations
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


async def test_resuming_a_finished_run_makes_no_call(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                   run_dir=tmp_path / "run")
        n = len(server.requests)
        again = await assay.agrade(resume=first.run_dir)
        assert len(server.requests) == n
    assert again.overall == first.overall and again.status == "complete"


async def test_resume_with_a_changed_config_is_refused_naming_what_changed(tmp_path, items_file,
                                                                           rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                   run_dir=tmp_path / "run")
        n = len(server.requests)
        with pytest.raises(ConfigError) as refused:
            await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)], seed=2,
                               mode="per-item", resume=first.run_dir)
        assert len(server.requests) == n
    message = str(refused.value)
    assert "refusing to resume" in message
    assert "grading.seed: 0 -> 2" in message and 'grading.mode: "per-criterion" -> "per-item"' in message


async def test_resume_retries_calls_that_failed(tmp_path, items_file, rubric_file):
    from assay.testing import Faults

    # the first 8 calls (two items) fail, each with its re-asks: see test_failed_calls_and_preflight
    faults = Faults(script=["malformed"] * 8 + [None] * 16 + ["malformed"] * 16)
    async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                   run_dir=tmp_path / "run", concurrency=1, final_passes=0)
        assert first.totals.errors >= 1
        again = await assay.agrade(resume=first.run_dir)
    assert again.totals.errors == 0 and again.totals.calls_ok == 24


async def test_budget_stops_cleanly_and_a_larger_budget_finishes(tmp_path, items_file, rubric_file):
    from assay.judges import ModelPrice, parse_spec

    async with FakeJudgeServer(policy=POLICY, usage={"prompt_tokens": 1000,
                                                     "completion_tokens": 0}) as server:
        judge = parse_spec(spec(server), price=ModelPrice(input=1000.0, output=0.0))  # $1 per call
        # $5 for the calls and $0.001 for the preflight (one prompt token)
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[judge],
                                   budget_usd=5.001, concurrency=1, run_dir=tmp_path / "run")
        assert first.status == "budget"
        assert 5 <= first.totals.calls < 24
        again = await assay.agrade(resume=first.run_dir, budget_usd=100)
    assert again.status == "complete" and again.totals.calls == 24


def _stored_calls(run) -> int:
    """Calls stored so far; 0 while the grading process has not yet created its tables."""
    import sqlite3

    try:
        return rows(run, "SELECT COUNT(*) FROM calls")[0][0]
    except sqlite3.OperationalError:  # "no such table: calls": the schema is not written yet
        return 0
