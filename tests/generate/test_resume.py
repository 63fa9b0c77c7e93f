"""A generation job killed with SIGKILL mid-run resumes without repeating a finished call."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from tests.generate.conftest import SAMPLE

from assay.testing import FakeJudgeServer

CLI = [sys.executable, "-c", "from assay.cli import main; main()"]


def finished_calls(db) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as con:
            rows = con.execute("SELECT stage, messages FROM calls WHERE failure IS NULL").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    return rows


def test_a_killed_job_resumes_without_repeating_a_finished_stage_call(tmp_path, sample_kb):
    out = tmp_path / "rubrics.jsonl"
    db = tmp_path / "rubrics.jsonl.job" / "calls.sqlite"
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.yaml", latency=0.1) as server:
        args = [*CLI, "generate", str(SAMPLE / "queries.txt"), "--kb", str(sample_kb.path),
                "--model", f"openai-compatible:fake@{server.base_url}", "--out", str(out), "-q"]
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(finished_calls(db)) < 5 and time.monotonic() < deadline \
                and process.poll() is None:
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        before = finished_calls(db)
        assert len(before) >= 5 and not out.exists()
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        sent = [(r["stage"], r["body"]["messages"]) for r in server.requests]
    for stage, messages in before:
        assert sent.count((stage, json.loads(messages))) == 1, stage
    after = finished_calls(db)
    assert len(before) < len(after)
    assert len(sent) - len(after) <= 3  # only calls in flight at the kill were sent twice
    assert len(out.read_text().splitlines()) == 3
