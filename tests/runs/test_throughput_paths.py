"""Issue 16: what makes `assay grade` fast must not change what it does. A run served wholly
from the cache sends nothing (not even the preflight); finished calls are committed in
batches, yet within a quarter second and on cancellation; --concurrency sets the requests in
flight; scoring a run keeps flat memory and the same figures."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3

import numpy as np
from tests.runs.conftest import POLICY, POLICY_SCORE, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.judges.specs import parse_spec
from assay.runs.results import rescore_run
from assay.scoring import (
    HealthBenchExampleScore,
    ItemScore,
    ItemScores,
    healthbench_report,
    mean_with_ci,
)
from assay.testing import FakeJudgeServer, Latency


def grade(items_file, rubric_file, judge: str, run_dir, *extra: str):
    return CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                    "--judge", judge, "--run-dir", str(run_dir), "--quiet", *extra])


def test_a_run_served_wholly_from_the_cache_sends_no_request_not_even_the_preflight(
        tmp_path, items_file, rubric_file):
    cache = tmp_path / "cache.sqlite"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        cold = grade(items_file, rubric_file, spec(server), tmp_path / "cold", "--cache", str(cache))
        sent, checks = len(server.requests), server.preflights
        warm = grade(items_file, rubric_file, spec(server), tmp_path / "warm", "--cache", str(cache))
        assert (len(server.requests), server.preflights) == (sent, checks)  # nothing at all
    assert cold.exit_code == 0 and warm.exit_code == 0, warm.output
    assert (sent, checks) == (24, 1)
    again = rescore_run(tmp_path / "warm")
    assert again.table.mean == POLICY_SCORE


def test_a_cached_first_item_defers_the_preflight_to_the_first_request_that_is_sent(
        tmp_path, rubric_file):
    cache = tmp_path / "cache.sqlite"
    few, many = write_items(tmp_path / "few.jsonl", 2), write_items(tmp_path / "many.jsonl", 5)
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assert grade(few, rubric_file, spec(server), tmp_path / "a", "--cache", str(cache)).exit_code == 0
        checks = server.preflights
        out = grade(many, rubric_file, spec(server), tmp_path / "b", "--cache", str(cache))
        assert server.preflights == checks + 1  # checked once, before the first real request
    assert out.exit_code == 0, out.output
    assert rescore_run(tmp_path / "b").n_scored == 5


def test_a_deferred_preflight_that_fails_fails_the_calls_that_need_the_endpoint(
        tmp_path, rubric_file):
    cache = tmp_path / "cache.sqlite"
    few, many = write_items(tmp_path / "few.jsonl", 1), write_items(tmp_path / "many.jsonl", 3)
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assert grade(few, rubric_file, spec(server), tmp_path / "a", "--cache", str(cache)).exit_code == 0
        # the same judge id and cache keys, but the server now refuses every completion path
        gone = server.base_url
    out = grade(many, rubric_file, f"openai-compatible:fake@{gone}", tmp_path / "b",
                "--cache", str(cache))
    assert out.exit_code == 4, out.output  # incomplete: the cached item graded, the others not
    scores = rescore_run(tmp_path / "b")
    assert scores.n_scored == 1


async def test_finished_calls_are_committed_within_a_quarter_second_not_only_when_a_batch_fills(
        tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 10)  # 40 calls; one is slow
    count = itertools.count()
    slow = Latency(lambda rng: 1.5 if next(count) == 39 else 0.005)
    run = tmp_path / "run"
    async with FakeJudgeServer(policy=POLICY, latency=slow) as server:
        # a fixed attempt timeout: the fit to 5 ms replies would let the slow call go and
        # resend it, and the 40 calls could then be committed at once
        task = asyncio.create_task(assay.agrade(items, rubric=rubric_file, judges=[
            parse_spec(spec(server), timeout_s=30)], run_dir=run, concurrency=8))
        seen = set()
        while not task.done():  # read the store as another process would
            await asyncio.sleep(0.02)
            if (run / "run.sqlite").exists():
                db = sqlite3.connect(f"file:{run / 'run.sqlite'}?mode=ro", uri=True)
                try:
                    (now,) = db.execute("SELECT COUNT(*) FROM calls").fetchone()
                except sqlite3.OperationalError:
                    now = 0
                db.close()
                seen.add(now)
        result = await task
    assert result.status == "complete"
    assert 39 in seen  # all but the slow call, committed while it was still out


async def test_a_cancelled_run_keeps_the_calls_that_finished(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 20)  # 80 calls, 4 at a time
    async with FakeJudgeServer(policy=POLICY, latency=0.02) as server:
        # a fixed attempt timeout: one request per call (no resend of a reply slowed by load)
        task = asyncio.create_task(assay.agrade(items, rubric=rubric_file, judges=[
            parse_spec(spec(server), timeout_s=30)], run_dir=tmp_path / "run", concurrency=4))
        while len(server.requests) < 30:
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        answered = len(server.requests)
        db = sqlite3.connect(tmp_path / "run" / "run.sqlite")
        (saved,) = db.execute("SELECT COUNT(*) FROM calls WHERE status = 'ok'").fetchone()
        db.close()
        assert 30 - 4 <= saved <= answered  # only the calls in flight at the cancel are lost
        resumed = await assay.agrade(resume=tmp_path / "run")
        assert resumed.status == "complete"
        assert len(server.requests) - answered == 80 - saved  # no saved call is made again


def test_concurrency_sets_the_requests_in_flight_to_each_judge(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 20)  # 80 calls
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.02) as server:
        out = grade(items, rubric_file, spec(server), tmp_path / "run", "--concurrency", "3")
        limited = server.peak_in_flight
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.5) as server:  # all 80 at once
        wide = grade(items, rubric_file, spec(server), tmp_path / "run2", "--concurrency", "80")
        widest = server.peak_in_flight
    assert out.exit_code == 0 and wide.exit_code == 0
    assert limited == 3
    assert widest > 64  # past the judge's default limit of 64


def test_bootstrap_drawn_in_blocks_gives_the_same_figures_as_drawn_at_once(monkeypatch):
    from assay.scoring import bootstrap

    rng = np.random.default_rng(5)
    values = list(rng.random(3001))
    whole = mean_with_ci(values, seed=3)
    examples = [HealthBenchExampleScore(f"e{i}", v, {"overall_score": v, "axis:x": v / 2})
                for i, v in enumerate(values[:500])]
    report = healthbench_report(examples, seed=2)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_CELLS", 7001)  # blocks of 2 rows, then 14
    assert mean_with_ci(values, seed=3) == whole
    assert healthbench_report(examples, seed=2) == report


def test_item_scores_read_back_as_they_were_added():
    added = [ItemScore("a", 0.25, 0.25, 3, 1), ItemScore("b", None, -1.0, 0, 4),
             ItemScore("c", 1.0, 1.0, 4, 0)]
    scores = ItemScores(added)
    assert list(scores) == added and scores == added and len(scores) == 3
    assert scores[1] == added[1] and scores[-1] == added[2] and scores[:2] == added[:2]
    assert scores.score_values() == [0.25, 1.0]
