"""Issue 27.2: a run's true status, read from its store (assay.runs.run_status): verdicts
deleted by hand, a run still being written and a killed run are never complete."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.runs.conftest import POLICY, rows, spec, write_items

import assay
from assay.runs import run_status
from assay.testing import FakeJudgeServer, Faults

ASSAY = [str(Path(sys.executable).parent / "assay")]


async def graded(tmp_path: Path, items_file: Path, rubric_file: Path, **server_options) -> Path:
    async with FakeJudgeServer(policy=POLICY, **server_options) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    return result.run_dir


def delete(run_dir: Path, query: str) -> None:
    db = sqlite3.connect(run_dir / "run.sqlite")
    try:
        db.execute(query)
        db.commit()
    finally:
        db.close()


async def test_a_finished_run_with_every_verdict_is_complete(tmp_path, items_file, rubric_file):
    status = run_status(await graded(tmp_path, items_file, rubric_file))
    assert status.complete and status.reasons == ()
    assert status.coverage.verdicts == status.coverage.expected_verdicts == 24


async def test_verdicts_deleted_by_hand_make_the_run_incomplete(tmp_path, items_file,
                                                                rubric_file):
    run_dir = await graded(tmp_path, items_file, rubric_file)
    delete(run_dir, "DELETE FROM verdicts WHERE item_id = 'q3' AND criterion_id = 'tone'")
    status = run_status(run_dir)
    assert status.status == "incomplete"
    assert status.reasons == ("1 of 6 items lack verdicts (1 of 24 missing)",)


async def test_a_deleted_item_row_makes_the_run_incomplete(tmp_path, items_file, rubric_file):
    run_dir = await graded(tmp_path, items_file, rubric_file)
    delete(run_dir, "DELETE FROM items WHERE id = 'q0'")
    status = run_status(run_dir)
    assert status.status == "incomplete"
    assert "1 of the input's 6 items never reached the store" in status.describe()


async def test_failed_calls_make_the_run_incomplete_with_the_commonest_error(tmp_path,
                                                                            items_file,
                                                                            rubric_file):
    run_dir = await graded(tmp_path, items_file, rubric_file, faults=Faults(malformed=1.0))
    status = run_status(run_dir)
    assert status.status == "incomplete" and status.coverage.failed_calls == 24
    assert "6 of 6 items lack verdicts (24 of 24 missing; 24 calls failed" in status.describe()


def start_grading(tmp_path: Path, rubric_file: Path, judge: str) -> tuple[subprocess.Popen, Path]:
    """``assay grade`` in another process, returned once it has stored some calls."""
    items = write_items(tmp_path / "items.jsonl", 40)
    run_dir = tmp_path / "run"
    grading = subprocess.Popen(
        [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", judge,
         "--run-dir", str(run_dir), "--concurrency", "2", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.1)
        if (run_dir / "run.sqlite").exists() and rows(run_dir, "SELECT COUNT(*) FROM calls")[0][0]:
            return grading, run_dir
    grading.kill()
    raise AssertionError("the grading process stored no call within 60 s")


def test_a_run_still_being_written_is_running(tmp_path, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.05) as server:
        grading, run_dir = start_grading(tmp_path, rubric_file, spec(server))
        try:
            status = run_status(run_dir)
        finally:
            grading.kill()
            grading.wait()
    assert status.status == "running"
    assert status.writer == str(grading.pid)
    assert f"an assay process (pid {grading.pid}) is writing it now" in status.describe()


def test_a_killed_run_is_interrupted(tmp_path, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.05) as server:
        grading, run_dir = start_grading(tmp_path, rubric_file, spec(server))
        os.kill(grading.pid, signal.SIGKILL)
        grading.wait()
    status = run_status(run_dir)
    assert status.status == "interrupted"
    assert "a session was cut off before it ended (killed or crashed)" in status.describe()
    assert f"assay grade --resume {run_dir}" in status.describe()


async def test_a_killed_resume_of_a_finished_session_is_interrupted(tmp_path, items_file,
                                                                    rubric_file):
    """The manifest of the first session says incomplete; rows written after it by a session
    that never ended show the run was cut off since."""
    run_dir = await graded(tmp_path, items_file, rubric_file, faults=Faults(malformed=1.0))
    later = time.time() + 1
    db = sqlite3.connect(run_dir / "run.sqlite")
    db.execute("UPDATE calls SET status = 'ok', finished_at = ? WHERE key IN "
               "(SELECT key FROM calls LIMIT 1)", (later,))  # as a killed resume leaves it
    db.commit()
    db.close()
    assert run_status(run_dir).status == "interrupted"


async def test_resume_makes_again_exactly_the_calls_whose_verdicts_were_deleted(
        tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        first = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                   run_dir=tmp_path / "run")
        delete(first.run_dir, "DELETE FROM verdicts WHERE item_id = 'q3' AND criterion_id = 'tone'")
        n = len(server.requests)
        again = await assay.agrade(resume=first.run_dir)
        asked = server.requests[n:]
    assert [(r["criterion_id"], r["response_text"]) for r in asked] == [
        ("tone", "Answer 3: scrape the stinger out, ice it.")]
    assert again.status == "complete" and run_status(first.run_dir).complete
    assert again.overall == first.overall
