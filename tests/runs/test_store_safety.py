"""Issue 18.8, 18.9, 18.12: a damaged store is a clear error, one writer per run, and a full
disk stops a run with one error and leaves it resumable; issue 27.3: a full disk when the store
is created is one error naming it, and leaves nothing behind that stops the same command."""

from __future__ import annotations

import asyncio
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.runs.lock import RunLock, RunLocked
from assay.testing import FakeJudgeServer

ASSAY = [str(Path(sys.executable).parent / "assay")]


@pytest.fixture
def finished_run(tmp_path, items_file, rubric_file) -> Path:
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assay.grade(items_file, rubric=rubric_file, judges=[spec(server)], run_dir=tmp_path / "run")
    return tmp_path / "run"


def assert_clear_error(out, store: Path, *words: str) -> None:
    assert out.exit_code == 1, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output and "complete" not in out.output
    assert str(store) in out.output.replace("\n", "")
    for word in words:
        assert word in out.output.replace("\n", " "), out.output


def damage(run: Path, how: str) -> Path:
    store = run / "run.sqlite"
    if how == "garbage":
        store.write_bytes(b"this is not a database, " * 400)
    elif how == "empty":
        store.write_bytes(b"")
    elif how == "truncated":
        data = store.read_bytes()
        store.write_bytes(data[: len(data) // 2])
    elif how == "dropped":
        db = sqlite3.connect(store)
        db.execute("DROP TABLE verdicts")
        db.commit()
        db.close()
    return store


@pytest.mark.parametrize(("how", "says"), [
    ("garbage", "damaged"), ("empty", "empty (0 bytes)"), ("truncated", "damaged"),
    ("dropped", "table 'verdicts' is missing")])
def test_a_damaged_store_is_a_clear_error_for_resume_and_score(finished_run, how, says):
    store = damage(finished_run, how)
    for command in (["grade", "--resume", str(finished_run), "--quiet"],
                    ["score", str(finished_run)]):
        out = CliRunner().invoke(app, command)
        assert_clear_error(out, store, says, "another --run-dir")


def test_a_dropped_table_is_not_silently_recreated(finished_run):
    damage(finished_run, "dropped")
    CliRunner().invoke(app, ["score", str(finished_run)])
    tables = {t for (t,) in rows(finished_run, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert "verdicts" not in tables


# -- one writer per run ------------------------------------------------------------------------


def test_a_store_written_before_the_billing_columns_is_read_and_resumed(finished_run):
    """Issue 40: calls.estimated_usd and calls.abandoned were added; an older store is read as
    it is (they read 0) and gets them when opened to write."""
    from assay.runs.store import RunStore

    db = sqlite3.connect(finished_run / "run.sqlite")
    db.executescript("ALTER TABLE calls DROP COLUMN abandoned; "
                     "ALTER TABLE calls DROP COLUMN estimated_usd;")
    db.close()
    read = RunStore(finished_run / "run.sqlite", read_only=True)
    totals = read.totals()
    read.close()
    assert (totals.calls, totals.estimated_usd, totals.abandoned) == (24, 0.0, 0)
    RunStore.open(finished_run, write=True).close()
    assert "estimated_usd" in [c for (_, c, *_) in rows(finished_run, "PRAGMA table_info(calls)")]


def test_a_locked_run_is_not_resumed_twice(tmp_path, items_file, rubric_file):
    run = tmp_path / "run"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assay.grade(items_file, rubric=rubric_file, judges=[spec(server)], run_dir=run,
                    budget_usd=0.0)  # stops at once: a run with work left to resume
        with RunLock(run):
            out = CliRunner().invoke(app, ["grade", "--resume", str(run), "--quiet"])
        assert server.requests == []
    assert out.exit_code == 1
    assert "another assay process (pid" in out.output and "writing to this run" in out.output


def test_two_new_runs_in_one_directory_one_runs_the_other_is_refused(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 8)

    async def both():
        async with FakeJudgeServer(policy=POLICY, latency=0.02) as server:
            tries = [assay.agrade(items, rubric=rubric_file, judges=[spec(server)],
                                  run_dir=tmp_path / "run", concurrency=2) for _ in range(2)]
            results = await asyncio.gather(*tries, return_exceptions=True)
            return results, len(server.requests)

    results, n_requests = asyncio.run(both())
    refused = [r for r in results if isinstance(r, RunLocked)]
    done = [r for r in results if not isinstance(r, BaseException)]
    assert len(refused) == 1 and len(done) == 1, results
    assert n_requests == 8 * 4  # every call made once
    assert done[0].status == "complete"


# -- disk full ---------------------------------------------------------------------------------


def _file_size_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_at_store_creation_is_one_error_and_the_same_command_then_runs(
        tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 4)
    run = tmp_path / "run"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        command = [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge",
                   spec(server), "--run-dir", str(run), "--quiet"]
        full = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                              preexec_fn=_file_size_limit(20_000))  # a store takes more
        assert full.returncode == 1, full.stderr
        assert "Traceback" not in full.stderr + full.stdout
        assert f"{run / 'run.sqlite'}: cannot create the run store" in full.stderr
        assert sorted(p.name for p in run.iterdir()) == ["run.lock"]  # no half-made store
        assert server.requests == []
        again = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    assert rows(run, "SELECT COUNT(*), SUM(done) FROM items") == [(4, 4)]


def test_a_full_disk_stops_the_run_with_one_error_and_it_resumes(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 40)  # 160 calls
    # 20 ms a call, 4 at a time: the calls are committed in several batches (one each 0.25 s),
    # so the limit below is reached mid-run with some batches saved
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.02) as server:
        full = subprocess.run(
            [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", spec(server),
             "--run-dir", str(tmp_path / "run"), "--quiet", "--concurrency", "4"],
            capture_output=True, text=True, timeout=120, check=False,
            preexec_fn=_file_size_limit(130_000))  # the store's files stop growing here
        assert full.returncode == 1, full.stderr
        assert "Traceback" not in full.stderr + full.stdout
        assert full.stderr.count("cannot write the run store") == 1, full.stderr
        assert "assay grade --resume" in full.stderr
        saved = {k for (k,) in rows(tmp_path / "run", "SELECT key FROM calls WHERE status='ok'")}
        assert 0 < len(saved) < 160
        before = len(server.requests)
        resumed = subprocess.run([*ASSAY, "grade", "--resume", str(tmp_path / "run"), "--quiet"],
                                 capture_output=True, text=True, timeout=120, check=False)
        assert resumed.returncode == 0, resumed.stderr
        # calls, not requests: a request retried on a loaded machine is still one call, and a
        # request of the first run read by the server late is one the resume makes again
        made_again = {(r["response_text"], r["criterion_id"]) for r in server.requests[before:]}
    assert len(made_again) <= 160 - len(saved)  # no saved call is made again
    assert rows(tmp_path / "run", "SELECT COUNT(*), SUM(done) FROM items") == [(40, 40)]


async def test_an_enospc_at_the_store_write_boundary_is_one_error_and_the_run_resumes(
        tmp_path, rubric_file, monkeypatch, caplog):
    import errno

    from assay.runs.store import RunStore
    from assay.runs.store_errors import StoreError

    items = write_items(tmp_path / "items.jsonl", 10)  # 40 calls
    real = RunStore.record_call
    written = []

    def record_call(self, record, *, item_done):
        if len(written) >= 12:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(record.key)
        return real(self, record, item_done=item_done)

    monkeypatch.setattr(RunStore, "record_call", record_call)
    async with FakeJudgeServer(policy=POLICY) as server:
        with pytest.raises(StoreError) as caught:
            await assay.agrade(items, rubric=rubric_file, judges=[spec(server)],
                               run_dir=tmp_path / "run", concurrency=4)
        message = str(caught.value)
        assert "cannot write the run store (the disk is full)" in message
        assert f"assay grade --resume {tmp_path / 'run'}" in message
        assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
        monkeypatch.setattr(RunStore, "record_call", real)
        n = len(server.requests)
        again = await assay.agrade(resume=tmp_path / "run")
    assert again.status == "complete"
    assert len(server.requests) - n == 40 - 12  # the saved calls are not made again
