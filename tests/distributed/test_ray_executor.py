"""`--executor ray`: the same run as the local executor, through Ray workers, surviving the
loss of a worker (its shard is sent again) and of the driver (kill -9, then --resume)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time

import pytest
from tests.distributed.conftest import worker_pids
from tests.runs.conftest import POLICY, POLICY_SCORE, rows, spec, write_items
from tests.runs.test_resume import ASSAY, CALLS, VERDICTS, logged, start_fake_judge

import assay
from assay.errors import InputError
from assay.testing import FakeJudgeServer


async def test_a_ray_run_is_identical_to_a_local_run_for_the_same_seed(ray_cluster, tmp_path,
                                                                        rubric_file):
    items = write_items(tmp_path / "items.jsonl", 12)
    async with FakeJudgeServer(policy=POLICY, seed=1) as server:
        local = await assay.agrade(items, rubric=rubric_file, judges=[spec(server)], seed=5,
                                   run_dir=tmp_path / "local")
        n_local = len(server.requests)
        on_ray = await assay.agrade(items, rubric=rubric_file, judges=[spec(server)], seed=5,
                                    run_dir=tmp_path / "ray", executor="ray", workers=2)
        assert len(server.requests) == 2 * n_local  # the same calls, each made once
    assert on_ray.status == "complete" and on_ray.overall == local.overall
    assert rows(local.run_dir, VERDICTS) == rows(on_ray.run_dir, VERDICTS)
    assert rows(local.run_dir, CALLS) == rows(on_ray.run_dir, CALLS)  # same prompts, same shuffles
    assert on_ray.overall == pytest.approx(POLICY_SCORE)


async def test_the_response_cache_is_shared_by_the_workers(ray_cluster, tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 6)
    cache = tmp_path / "cache.sqlite"
    async with FakeJudgeServer(policy=POLICY) as server:
        await assay.agrade(items, rubric=rubric_file, judges=[spec(server)], cache_path=cache,
                           run_dir=tmp_path / "first", executor="ray", workers=2)
        n = len(server.requests)
        again = await assay.agrade(items, rubric=rubric_file, judges=[spec(server)], cache_path=cache,
                                   run_dir=tmp_path / "second", executor="ray", workers=2)
        assert len(server.requests) == n  # every reply from the cache
    assert again.totals.cache_hits == 24 and again.status == "complete"


async def test_the_budget_is_counted_once_on_the_driver_for_all_workers(ray_cluster, tmp_path,
                                                                        items_file, rubric_file):
    from assay.judges import ModelPrice, parse_spec

    async with FakeJudgeServer(policy=POLICY, usage={"prompt_tokens": 1000,
                                                     "completion_tokens": 0}) as server:
        judge = parse_spec(spec(server), price=ModelPrice(input=1000.0, output=0.0))  # $1 a call
        # $5 for the calls and $0.001 for the driver's preflight (one prompt token)
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[judge],
                                   budget_usd=5.001, concurrency=2, run_dir=tmp_path / "run",
                                   executor="ray", workers=2)
        assert first.status == "budget" and 5 <= first.totals.calls <= 6  # 2 in flight at most
        again = await assay.agrade(resume=first.run_dir, budget_usd=100, executor="ray", workers=2)
    assert again.status == "complete" and again.totals.calls == 24


def test_a_worker_killed_mid_run_has_its_shard_sent_again_and_the_run_completes(
        ray_cluster, tmp_path, rubric_file, caplog):
    # 80 calls of 250 ms, 8 at a time: a worker is between shards for a few ms of every 250, so
    # the one killed after the 30th request holds a shard (with short calls, a loaded machine
    # could catch it idle, and nothing would be lost to send again)
    items = write_items(tmp_path / "items.jsonl", 20)
    before = worker_pids()
    killed: list[int] = []
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.25) as server:

        def kill_one_worker() -> None:
            deadline = time.time() + 60
            while time.time() < deadline and len(server.requests) < 30:
                time.sleep(0.02)
            pid = min(worker_pids() - before)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

        killer = threading.Thread(target=kill_one_worker)
        killer.start()
        result = assay.grade(items, rubric=rubric_file, judges=[spec(server)],
                             run_dir=tmp_path / "run", executor="ray", workers=2, concurrency=8)
        killer.join()
    assert killed and killed[0] not in worker_pids()
    assert result.status == "complete" and result.overall == pytest.approx(POLICY_SCORE)
    assert rows(result.run_dir, "SELECT COUNT(*), SUM(status = 'ok') FROM calls") == [(80, 80)]
    lost = [r.getMessage() for r in caplog.records if "lost a shard" in r.getMessage()]
    assert lost and "sending it again" in lost[0]


def test_a_killed_driver_resumes_without_repeating_a_finished_call(ray_cluster, tmp_path,
                                                                    rubric_file):
    _, address = ray_cluster
    items = write_items(tmp_path / "items.jsonl", 40)  # 160 calls of 60 ms
    server, judge, log = start_fake_judge(tmp_path, latency_ms=60)
    try:
        run = tmp_path / "run"
        driver = subprocess.Popen(
            [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", judge,
             "--run-dir", str(run), "--concurrency", "8", "--quiet", "--seed", "3",
             "--executor", "ray", "--ray-address", address, "--workers", "2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 90
        while time.time() < deadline:
            time.sleep(0.1)
            if (run / "run.sqlite").exists() and _stored(run) >= 30:
                break
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        finished = set(rows(run, "SELECT item_id, json_extract(criteria, '$[0]') FROM calls "
                                 "WHERE status = 'ok'"))
        assert 30 <= len(finished) < 160, "the kill should land mid-run"
        n_before = len(logged(log))

        resumed = assay.grade(resume=run, executor="ray", workers=2)
        assert resumed.status == "complete"
        answers = {f"Answer {i}: scrape the stinger out, ice it.": f"q{i}" for i in range(40)}
        time.sleep(0.3)  # a call of the killed driver's workers may still land in the log
        asked_again = {(answers[r["response_text"]], r["criterion_id"])
                       for r in logged(log)[n_before:] if r.get("response_text") in answers}
        assert not asked_again & finished
        assert rows(run, "SELECT COUNT(*), SUM(done) FROM items") == [(40, 40)]
        assert resumed.overall == pytest.approx(POLICY_SCORE)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def _stored(run) -> int:
    try:
        return rows(run, "SELECT COUNT(*) FROM calls WHERE status = 'ok'")[0][0]
    except sqlite3.Error:  # the store is being created
        return 0


def test_ray_only_settings_need_the_ray_executor(tmp_path, items_file, rubric_file):
    with pytest.raises(InputError) as refused:
        assay.grade(items_file, rubric=rubric_file, judges=["vllm:m"], workers=3,
                    run_dir=tmp_path / "run")
    assert "--workers and --ray-address need --executor ray" in str(refused.value)
    with pytest.raises(InputError, match="expected local, ray or batch"):
        assay.grade(items_file, rubric=rubric_file, judges=["vllm:m"], executor="dask")


def test_ray_runs_without_usage_stats_or_dashboard(ray_cluster):
    ray, _ = ray_cluster
    try:
        from ray._common.usage import usage_lib
    except ImportError:  # Ray < 2.50 kept it here
        from ray._private.usage import usage_lib
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0" and not usage_lib.usage_stats_enabled()
    assert not ray._private.worker.global_worker.node.address_info.get("webui_url")
