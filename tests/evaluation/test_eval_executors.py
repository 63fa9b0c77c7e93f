"""``assay eval --executor batch``: sampling and grading through the batch APIs, at half the
live price, each stage's pending batch waited for after ``kill -9``. (``--executor ray``:
tests/distributed/test_eval_on_ray.py.)"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from tests.evaluation.test_resume_every_stage import ASSAY, items

from assay.evaluation import aevaluate
from assay.testing import BatchScript, FakeJudgeServer, ModelScript

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "healthbench" / "examples.jsonl"
USAGE = {"prompt_tokens": 1000, "completion_tokens": 50}


def priced(path: Path, base_url: str) -> Path:
    """An assay.toml naming the model under test and the judge, with prices (USD/M tokens)."""
    path.write_text(
        f'[judges.bot]\nspec = "openai-compatible:bot@{base_url}"\n'
        'price = {input = 2.0, output = 8.0}\n'
        f'[judges.grader]\nspec = "openai-compatible:fake@{base_url}"\n'
        'price = {input = 1.0, output = 4.0}\n')
    return path


async def test_a_batch_eval_samples_and_grades_in_batches_at_half_the_live_price(serve,
                                                                                 tmp_path):
    server = await serve(usage=USAGE, models={"bot": ModelScript(default="ice it")})
    config = priced(tmp_path / "assay.toml", server.base_url)
    args = {"healthbench": True, "n": 2, "model": "bot", "judges": ["grader"],
            "config_file": config}
    live = await aevaluate(items(tmp_path), run_dir=tmp_path / "live", **args)
    batch = await aevaluate(items(tmp_path), run_dir=tmp_path / "batch", executor="batch",
                            batch_poll_s=0.02, **args)
    assert batch.stage == live.stage == "done" and batch.metrics == live.metrics
    assert server.batches.created == 2  # one for the answers, one for the verdicts
    sample_live = 10 * (1000 * 2.0 + 50 * 8.0) / 1e6
    # each stage checks its model once with a live request, billed 1 token each way
    model_check, judge_check = (1 * 2.0 + 1 * 8.0) / 1e6, (1 * 1.0 + 1 * 4.0) / 1e6
    assert live.cost["sample"]["cost_usd"] == pytest.approx(sample_live + model_check)
    assert batch.cost["sample"]["cost_usd"] == pytest.approx(sample_live / 2 + model_check)
    grade_live = live.cost["grade"]["cost_usd"] - judge_check
    assert batch.cost["grade"]["cost_usd"] == pytest.approx(grade_live / 2 + judge_check)
    assert batch.executor == "batch"
    again = await aevaluate(resume=tmp_path / "batch")  # the executor it began with, kept
    assert again.executor == "batch" and again.metrics == batch.metrics


def ledger(path: Path) -> list:
    """The batches a stage's store has recorded as created (not the ones it was about to
    create)."""
    if not path.is_file():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'batches'").fetchone()
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()
    return [r for r in json.loads(row[0]) if r["batch_id"]] if row else []


@pytest.mark.parametrize("stage", ["sample", "grade"])
def test_kill_9_while_a_stages_batch_is_pending_then_resume_waits_for_it(tmp_path, stage):
    store = tmp_path / "ev" / ("sample/calls.sqlite" if stage == "sample" else "grade/run.sqlite")
    with FakeJudgeServer.run_in_thread(models={"bot": ModelScript()},
                                       batches=BatchScript(complete_after_s=1.5)) as server:
        evaluating = subprocess.Popen(
            [*ASSAY, "eval", str(items(tmp_path)), "--healthbench", "--model",
             f"openai-compatible:bot@{server.base_url}", "--judge",
             f"openai-compatible:fake@{server.base_url}", "--run-dir", str(tmp_path / "ev"),
             "--executor", "batch", "--batch-poll-s", "0.1", "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 90
        while time.time() < deadline and not ledger(store):
            time.sleep(0.05)
        os.kill(evaluating.pid, signal.SIGKILL)  # the stage's batch is submitted and pending
        evaluating.wait()
        created = server.batches.created
        assert len(ledger(store)) == 1
        resumed = subprocess.run([*ASSAY, "eval", "--resume", str(tmp_path / "ev"), "--quiet",
                                  "--batch-poll-s", "0.1"],
                                 capture_output=True, text=True, timeout=120, check=False)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert len(ledger(store)) == 1  # waited for the same batch
        assert server.batches.created == created + (1 if stage == "sample" else 0)
        assert sum(r["stage"] == "model:bot" for r in server.requests) == 5
        assert len(server.requests) == 5 + 15  # every answer and verdict asked once
