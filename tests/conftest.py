"""Shared fixtures. Test data lives in tests/data (HealthBench examples: MIT, see LICENSE there)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from assay.testing import FakeJudgeServer

DATA = Path(__file__).parent / "data"


@pytest.fixture
def healthbench_dev_path() -> Path:
    """The 60 real HealthBench examples shipped with the tests."""
    return DATA / "healthbench" / "dev.jsonl"


@pytest.fixture
async def serve():
    """Start fake judge servers on loopback; all are stopped after the test."""
    servers: list[FakeJudgeServer] = []

    async def start(**kwargs) -> FakeJudgeServer:
        server = await FakeJudgeServer(**kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


# The real-server tier (tests/real_server, marker ``real_server``) needs llama.cpp's server with a
# tiny model, which scripts/real_server.sh builds, starts and points these tests at. It runs only
# when ``-m`` names it; every run's summary says whether it ran, so it is never skipped silently.
REAL_SERVER = "real_server"


def pytest_collection_modifyitems(config, items):
    if REAL_SERVER in (config.getoption("markexpr") or ""):
        return  # -m chose, as it says
    tier = [item for item in items if item.get_closest_marker(REAL_SERVER)]
    if tier:
        items[:] = [item for item in items if not item.get_closest_marker(REAL_SERVER)]
        config.hook.pytest_deselected(items=tier)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reports = [
        report
        for outcome in ("passed", "failed", "error")
        for report in terminalreporter.stats.get(outcome, [])
        if REAL_SERVER in report.keywords and (report.when == "call" or report.failed)
    ]
    if not reports:
        terminalreporter.write_line(
            "real-server tier: not run — scripts/real_server.sh runs it "
            "(llama.cpp's llama-server and a tiny model on loopback)"
        )
        return
    counts = Counter("passed" if report.passed else "failed" for report in reports)
    url = os.environ.get("ASSAY_REAL_SERVER_URL", "no ASSAY_REAL_SERVER_URL")
    terminalreporter.write_line(
        f"real-server tier: ran against {url}: {counts['passed']} passed, {counts['failed']} failed"
    )
    for report in reports:
        for name, value in report.user_properties:
            if name == "outcome":
                terminalreporter.write_line(f"  {report.nodeid.split('::')[-1]}: {value}")
