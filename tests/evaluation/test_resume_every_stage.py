"""``assay eval`` killed with SIGKILL in each stage, then ``assay eval --resume RUN``: the eval
completes and no call that finished before the kill is made again (the model under test's and
the judges' requests after the kill are exactly the calls the stores were missing)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from assay.testing import FakeJudgeServer, ModelScript

ASSAY = [str(Path(sys.executable).parent / "assay")]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "healthbench" / "examples.jsonl"
N = 4  # samples per prompt: 5 prompts, 20 answers
CRITERIA = 5 * 3  # each prompt graded on its first 3 criteria


def items(tmp_path: Path) -> Path:
    """The shipped HealthBench examples with 3 criteria each (60 judge calls in all)."""
    path = tmp_path / "items.jsonl"
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "rubrics": r["rubrics"][:3]}) + "\n" for r in rows))
    return path


def count(path: Path, sql: str) -> int:
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0
    finally:
        db.close()


def sampled(run: Path) -> int:
    return count(run / "sample" / "calls.sqlite", "SELECT COUNT(*) FROM calls WHERE failure IS NULL")


def graded(run: Path) -> int:
    return count(run / "grade" / "run.sqlite", "SELECT COUNT(*) FROM calls WHERE status = 'ok'")


def model_calls(server: FakeJudgeServer) -> int:
    return sum(r["stage"] == "model:bot" for r in server.requests)


def start_eval(server: FakeJudgeServer, run: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*ASSAY, "eval", str(items(run.parent)), "--healthbench", "--n", str(N), "--sampling-seed", "0",
         "--model", f"openai-compatible:bot@{server.base_url}",
         "--judge", f"openai-compatible:fake@{server.base_url}", "--run-dir", str(run),
         "--concurrency", "2", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kill_when(process: subprocess.Popen, ready, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and not ready() and process.poll() is None:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def resume(run: Path) -> None:
    done = subprocess.run([*ASSAY, "eval", "--resume", str(run), "--quiet"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((run / "metrics.json").read_text())["overall_score:n_samples"] == 5 * N
    assert (run / "report.html").stat().st_size > 0


def test_killed_while_sampling_it_resumes_without_asking_a_finished_sample_again(tmp_path):
    run = tmp_path / "ev"
    with FakeJudgeServer.run_in_thread(latency=0.05, models={"bot": ModelScript()}) as server:
        kill_when(start_eval(server, run), lambda: sampled(run) >= 4)
        finished = sampled(run)
        assert 4 <= finished < 5 * N, "the kill should land while sampling"
        before = model_calls(server)
        resume(run)
        assert model_calls(server) - before == 5 * N - finished
        assert sum(r["stage"] != "model:bot" for r in server.requests) == CRITERIA * N


def test_killed_while_grading_it_resumes_without_a_finished_judge_call_again(tmp_path):
    run = tmp_path / "ev"
    with FakeJudgeServer.run_in_thread(latency=0.1, models={"bot": ModelScript()}) as server:
        kill_when(start_eval(server, run), lambda: graded(run) >= 6)
        finished = graded(run)
        assert 6 <= finished < CRITERIA * N, "the kill should land while grading"
        assert sampled(run) == 5 * N
        judged = len(server.requests) - model_calls(server)
        resume(run)
        assert model_calls(server) == 5 * N  # no sample asked again
        assert len(server.requests) - 5 * N - judged == CRITERIA * N - finished


def test_killed_while_scoring_and_reporting_it_resumes_without_any_request(tmp_path):
    run = tmp_path / "ev"
    with FakeJudgeServer.run_in_thread(models={"bot": ModelScript()}) as server:
        kill_when(start_eval(server, run), lambda: (run / "grade" / "manifest.json").exists())
        assert not (run / "report.html").exists(), "the kill should land before the report"
        requests, preflights = len(server.requests), server.preflights
        resume(run)
        assert (len(server.requests), server.preflights) == (requests, preflights)


def test_the_original_command_again_continues_a_killed_eval(tmp_path):
    run = tmp_path / "ev"
    with FakeJudgeServer.run_in_thread(latency=0.05, models={"bot": ModelScript()}) as server:
        kill_when(start_eval(server, run), lambda: sampled(run) >= 4)
        finished = sampled(run)
        before = model_calls(server)
        again = start_eval(server, run)
        assert again.wait(timeout=120) == 0
        assert model_calls(server) - before == 5 * N - finished
