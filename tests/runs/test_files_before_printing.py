"""Issue 27.4: --json and --export files are written before anything is printed, so a reader
that stops early (``assay ... | head``, a closed pipe) never loses them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.runs.conftest import POLICY, spec

import assay
from assay.testing import FakeJudgeServer

ASSAY = [str(Path(sys.executable).parent / "assay")]


def run_with_stdout_closed(*args: object) -> subprocess.CompletedProcess:
    """Run ``assay ARGS`` with its stdout a pipe whose reader is gone before the first line."""
    process = subprocess.Popen([*ASSAY, *map(str, args)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the command starts up: its first print meets a closed pipe
    stderr = process.stderr.read()
    process.stderr.close()
    return subprocess.CompletedProcess(process.args, process.wait(timeout=120), b"", stderr)


def test_grade_writes_json_and_export_when_stdout_is_closed(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        run_with_stdout_closed("grade", items_file, "--rubric", rubric_file, "--judge",
                               spec(server), "--run-dir", tmp_path / "run", "--quiet",
                               "--json", tmp_path / "summary.json",
                               "--export", tmp_path / "verdicts.jsonl")
    assert json.loads((tmp_path / "summary.json").read_text())["status"] == "complete"
    assert len((tmp_path / "verdicts.jsonl").read_text().splitlines()) == 24


async def test_score_writes_json_when_stdout_is_closed(tmp_path, items_file, rubric_file):
    async with FakeJudgeServer(policy=POLICY) as server:
        result = await assay.agrade(items_file, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    run_with_stdout_closed("score", result.run_dir, "--json", tmp_path / "scores.json")
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["summary"]["n_items"] == 6
