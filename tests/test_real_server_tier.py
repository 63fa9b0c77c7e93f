"""The real-server tier is never skipped silently: a default run deselects it and says so, and
asking for it without a server fails, naming the script that provides one. And it proves
something: run against a server that answers every request with a timeout, its grading test
fails on the floor of verdicts (not on a traceback or a hang); against a server that answers, it
passes. Each of those runs is the tier's own test in a pytest process of its own, pointed at the
fake judge dressed as llama.cpp's server (``/health``, ``/props``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.real_server.outcomes import command_budget_s

from assay.testing import FakeJudgeServer, Faults
from assay.testing.server_props import llama_cpp

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_REAL_SERVER_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/real_server", "-p", "no:cacheprovider", "-n", "0",
         *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_default_run_deselects_the_tier_and_says_so():
    done = pytest_run()
    assert done.returncode == 5, done.stdout  # no test ran: every one was deselected
    assert "deselected" in done.stdout
    assert "real-server tier: not run — scripts/real_server.sh runs it" in done.stdout


def test_the_tier_without_a_server_fails_and_names_the_script():
    done = pytest_run("-m", "real_server", "-k", "judges_check")
    assert done.returncode == 1, done.stdout
    assert "ASSAY_REAL_SERVER_URL is not set: scripts/real_server.sh" in done.stdout
    assert (
        "real-server tier: ran against no ASSAY_REAL_SERVER_URL: 0 passed, 1 failed" in done.stdout
    )


def test_a_commands_budget_grows_with_the_machines_load_up_to_four_times():
    assert command_budget_s(load=1.0, cores=2) == 420.0  # an idle machine
    assert command_budget_s(load=6.0, cores=2) == 1260.0
    assert command_budget_s(load=40.0, cores=2) == 1680.0


def run_tier_test(server: FakeJudgeServer, basetemp: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"ASSAY_REAL_SERVER_URL": server.base_url.removesuffix("/v1"),
                        "ASSAY_REAL_SERVER_MODEL": "fake"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "real_server", "tests/real_server/test_grading.py",
         "-k", "healthbench", "-p", "no:cacheprovider", "-n", "0", "-q", "--basetemp", str(basetemp)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=command_budget_s(),
        check=False)


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
