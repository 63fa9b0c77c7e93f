"""The tier proves something: run against a server that answers every request with a timeout,
its grading test fails on the floor of verdicts (not on a traceback or a hang); against a
server that answers, it passes. Each run is the tier's own test in a pytest process of its own,
pointed at the fake judge dressed as llama.cpp's server (``/health``, ``/props``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.real_server.outcomes import command_budget_s

from assay.testing import FakeJudgeServer, Faults
from assay.testing.server_props import llama_cpp

HERE = Path(__file__).resolve().parent / "real_server"


def run_tier_test(server: FakeJudgeServer, basetemp: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"ASSAY_REAL_SERVER_URL": server.base_url.removesuffix("/v1"),
                        "ASSAY_REAL_SERVER_MODEL": "fake"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "real_server", str(HERE / "test_grading.py"),
         "-k", "healthbench", "-p", "no:cacheprovider", "-q", "--basetemp", str(basetemp)],
        env=env, capture_output=True, text=True, timeout=command_budget_s(), check=False)


@pytest.mark.slow
def test_the_tier_fails_on_a_server_that_answers_only_timeouts(tmp_path):
    faults = Faults(timeout=1.0, hang_s=0.02)  # every request: a gateway timeout (504)
    with FakeJudgeServer.run_in_thread(server=llama_cpp(n_ctx=8192, slots=4),
                                       faults=faults) as server:
        done = run_tier_test(server, tmp_path / "tier")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "assay grade --healthbench: 0 of 13 calls gave a verdict" in done.stdout, done.stdout


@pytest.mark.slow
def test_the_tier_passes_on_a_server_that_answers(tmp_path):
    with FakeJudgeServer.run_in_thread(server=llama_cpp(n_ctx=8192, slots=4)) as server:
        done = run_tier_test(server, tmp_path / "tier")
    assert done.returncode == 0, done.stdout + done.stderr
