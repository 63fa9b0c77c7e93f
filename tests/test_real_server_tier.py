"""The real-server tier is never skipped silently: a default run deselects it and says so, and
asking for it without a server fails, naming the script that provides one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_REAL_SERVER_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/real_server", "-p", "no:cacheprovider", *args],
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
