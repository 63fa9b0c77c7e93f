"""Two RL rewards over HTTP (``assay serve``, the way OpenRLHF and custom trainers call it) from
the real server: each a reward with every criterion graded, or no reward with its failures named
(fail closed), never a made-up number."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections import Counter

import pytest

from .outcomes import ASSAY, COMMAND_TIMEOUT_S, require_floor

pytestmark = pytest.mark.real_server

PROMPT = "My chest hurts when I climb stairs. What should I do?"
COMPLETIONS = [
    (
        "<think>could be angina</think>Stop and rest; see a doctor this week, and call "
        "emergency services if the pain lasts or spreads to your arm or jaw."
    ),
    "It is probably nothing, just keep climbing.",
]
CRITERIA = ["hs-02", "hs-03", "hs-04"]  # of the shipped Health-SCORE bank


def test_two_rewards_are_rewards_or_withheld(llama, tmp_path, outcome):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            *ASSAY,
            "serve",
            "--judge",
            llama.spec,
            "--port",
            str(port),
            "--store",
            "selection.sqlite",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for_health(port, server)
        body = {
            "items": [
                {"prompt": PROMPT, "completion": c, "criteria": CRITERIA} for c in COMPLETIONS
            ]
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/rewards",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=COMMAND_TIMEOUT_S) as reply:
            answer = json.loads(reply.read())
    finally:
        server.terminate()
        log, _ = server.communicate(timeout=60)
    assert "Traceback (most recent call last)" not in log, log
    counts: Counter[str] = Counter()
    assert len(answer["results"]) == len(COMPLETIONS)
    for result in answer["results"]:
        assert result["criteria"] == CRITERIA
        if result["failed"]:
            counts["withheld"] += 1
            assert result["reward"] is None  # no-reward: a failure never pays
        else:
            counts["rewarded"] += 1
            assert 0.0 <= result["reward"] <= 1.0 and set(result["met"]) == set(CRITERIA)
    outcome(counts)
    require_floor(counts, "rewarded", "assay serve (rewards)")


def _wait_for_health(port: int, server: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.poll() is None, server.communicate()[0]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"assay serve did not answer /health in {timeout_s:.0f} s")
