"""Two `assay serve --replicas` on one real cluster (a head started as the README says): each
is its own Serve app under its own path with its own config, each prints a URL that answers,
and SIGINT or SIGTERM deletes that server's app alone."""

from __future__ import annotations

import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

from tests.distributed.conftest import clean_env
from tests.rewards.conftest import keyword_policy
from tests.runs.test_resume import ASSAY, free_port

from assay.testing import FakeJudgeServer

ITEM = {"prompt": "I have had a cold for three days. What should I do?",
        "completion": "Rest and see a doctor.",
        "criteria": [{"id": "doc", "text": "Suggests consulting a doctor."}]}
START_S = 240


def start_server(judge_url, address, ray_token, serve_token, tmp_path, name):
    log = tmp_path / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [*ASSAY, "serve", "-j", f"openai-compatible:fake@{judge_url}", "--bank", "none",
             "--store", str(tmp_path / f"{name}.sqlite"), "--replicas", "1",
             "--ray-address", address, "--port", str(free_port())],
            env=clean_env(RAY_AUTH_TOKEN=ray_token, ASSAY_SERVE_TOKEN=serve_token),
            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_S
    while not (found := re.search(r"listening on (\S+)", log.read_text())):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)
    return process, found.group(1), log


def status(url, token=None, item=None):
    import json

    request = urllib.request.Request(url, method="POST" if item else "GET",
                                     data=json.dumps({"items": [item]}).encode() if item else None,
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {token}"}
                                                 if token else {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def stop(process, sig, log):
    process.send_signal(sig)
    assert process.wait(timeout=120) == 0, log.read_text()[-3000:]


def test_two_servers_share_a_cluster_and_each_signal_deletes_only_its_app(ray_head, tmp_path):
    address, ray_token = ray_head
    processes = []
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as judge:
        try:
            first, url_a, log_a = start_server(judge.base_url, address, ray_token, "token-a",
                                               tmp_path, "a")
            processes.append(first)
            second, url_b, log_b = start_server(judge.base_url, address, ray_token, "token-b",
                                                tmp_path, "b")
            processes.append(second)
            assert url_a != url_b
            assert status(f"{url_a}/health") == 200 and status(f"{url_b}/health") == 200
            # each keeps its own config: its own token, not the other's
            assert status(f"{url_a}/v1/rewards", "token-a", ITEM) == 200
            assert status(f"{url_a}/v1/rewards", "token-b", ITEM) == 401
            assert status(f"{url_b}/v1/rewards", "token-b", ITEM) == 200
            assert status(f"{url_b}/v1/rewards", "token-a", ITEM) == 401

            stop(first, signal.SIGINT, log_a)
            assert "deleted" in log_a.read_text()
            assert status(f"{url_a}/health") == 404  # its app is gone, Serve's proxy is not
            assert status(f"{url_b}/v1/rewards", "token-b", ITEM) == 200

            stop(second, signal.SIGTERM, log_b)
            assert "deleted" in log_b.read_text()
            assert status(f"{url_b}/health") == 404
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()
