"""`assay grade --executor batch`: the same verdicts as live, batches kept in the run store,
kill -9 while a batch is pending and --resume waits for that batch (never submits it twice)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items
from tests.runs.test_resume import ASSAY, VERDICTS

import assay
from assay.errors import InputError
from assay.runs.batch_ledger import RunBatchLedger
from assay.runs.options import RunOptions
from assay.runs.store import RunStore
from assay.testing import BatchScript, FakeJudgeServer, Faults

KEY = "sk-ant-test-key-0123456789"


def ledger(run) -> list[dict]:
    """The batches the run has recorded as created (not the ones it was about to create)."""
    store = RunStore.open(run)
    try:
        return [r for r in RunBatchLedger(store).records() if r["batch_id"]]
    finally:
        store.close()


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_a_batch_run_gives_the_verdicts_of_a_live_run(serve, tmp_path, items_file,
                                                           rubric_file, provider, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = await serve(policy=POLICY)
    judge = f"{provider}:fake@{server.base_url}"
    live = await assay.agrade(items_file, rubric=rubric_file, judges=[judge], run_dir=tmp_path / "live")
    batch = await assay.agrade(items_file, rubric=rubric_file, judges=[judge], executor="batch",
                               batch_poll_s=0.02, run_dir=tmp_path / "batch")
    assert batch.status == live.status == "complete"
    assert rows(tmp_path / "batch", VERDICTS) == rows(tmp_path / "live", VERDICTS)
    assert server.batches.created == 1
    [record] = ledger(tmp_path / "batch")
    assert len(record["custom_ids"]) == 24  # 6 items x 4 criteria, one batch


async def test_a_batch_run_costs_half_a_live_run(serve, tmp_path, items_file, rubric_file):
    server = await serve(policy=POLICY, usage={"prompt_tokens": 1000, "completion_tokens": 50})
    judge = {"spec": "openai-compatible", "model": "fake", "base_url": server.base_url,
             "price": {"input": 2.0, "output": 8.0}}
    from assay.judges import JudgeConfig

    config = JudgeConfig(**judge)
    live = await assay.agrade(items_file, rubric=rubric_file, judges=[config], run_dir=tmp_path / "l")
    batch = await assay.agrade(items_file, rubric=rubric_file, judges=[config], executor="batch",
                               batch_poll_s=0.02, run_dir=tmp_path / "b")
    # the one live preflight request of each run: 1 prompt and 1 completion token
    preflight = (1 * 2.0 + 1 * 8.0) / 1e6
    assert live.report.totals.preflight_requests == batch.report.totals.preflight_requests == 1
    assert live.report.totals.cost_usd == pytest.approx(24 * 0.0024 + preflight)
    assert batch.report.totals.cost_usd == pytest.approx(24 * 0.0024 / 2 + preflight)


async def test_requests_failing_in_every_batch_leave_the_run_incomplete_without_verdicts(
        serve, tmp_path, items_file, rubric_file):
    server = await serve(policy=POLICY, faults=Faults(server_error=1.0))
    run = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                             executor="batch", batch_poll_s=0.02, run_dir=tmp_path / "run")
    assert run.status == "incomplete"
    assert rows(tmp_path / "run", "SELECT COUNT(*) FROM verdicts") == [(0,)]
    assert server.batches.created == 3  # the first batch and two new ones for its failures


async def test_expired_requests_are_asked_live_with_batch_retry_live(serve, tmp_path, items_file,
                                                                    rubric_file):
    server = await serve(policy=POLICY, batches=BatchScript(expire=1))
    run = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                             executor="batch", batch_retry="live", batch_poll_s=0.02,
                             run_dir=tmp_path / "run")
    assert run.status == "complete" and server.batches.created == 1
    assert len(server.requests) == 12 + 12  # half answered in the batch, the expired half live


def test_a_budget_is_refused_with_the_batch_executor():
    with pytest.raises(InputError, match="--budget"):
        RunOptions(judges=["openai:gpt-4.1-mini"], executor="batch", budget_usd=5.0)


def test_kill_9_while_the_batch_is_pending_then_resume_waits_for_the_same_batch(tmp_path,
                                                                                rubric_file):
    items = write_items(tmp_path / "items.jsonl", 10)
    with FakeJudgeServer.run_in_thread(policy=POLICY,
                                       batches=BatchScript(complete_after_s=1.5)) as server:
        run = tmp_path / "run"
        grading = subprocess.Popen(
            [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", spec(server),
             "--run-dir", str(run), "--executor", "batch", "--batch-poll-s", "0.1", "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline and not ((run / "run.sqlite").exists() and ledger(run)):
            time.sleep(0.05)
        os.kill(grading.pid, signal.SIGKILL)  # the batch is submitted and still in progress
        grading.wait()
        assert len(ledger(run)) == 1 and server.requests == []

        resumed = subprocess.run([*ASSAY, "grade", "--resume", str(run), "--quiet",
                                  "--batch-poll-s", "0.1"],
                                 capture_output=True, text=True, timeout=60, check=False)
        assert resumed.returncode == 0, resumed.stderr
        assert len(ledger(run)) == 1 and server.batches.created == 1  # the same batch
        assert len(server.requests) == 40  # each of the 10 x 4 requests answered once

        live = assay.grade(items, rubric=rubric_file, judges=[spec(server)],
                           run_dir=tmp_path / "live")
    assert rows(run, VERDICTS) == rows(live.run_dir, VERDICTS)
