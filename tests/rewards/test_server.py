"""``assay serve``: rewards over HTTP, limits, auth, metrics, graceful shutdown."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import aiohttp
import pytest
from tests.rewards.conftest import CRITERIA, keyword_policy

from assay.errors import ConfigError
from assay.judges import make_judge
from assay.rewards import RewardScorer
from assay.rewards.server import RewardServer, ServeConfig
from assay.rubric import Rubric
from assay.testing import FakeJudgeServer

PROMPT = "I have had a cold for three days. What should I do?"
ITEM = {"prompt": PROMPT, "completion": "Rest and see a doctor."}


@pytest.fixture
async def reward_server(serve):
    """``await reward_server(latency=..., **serve_config)`` -> (base URL, RewardServer)."""
    started = []

    async def start(latency=0.0, **config):
        judge_server = await serve(policy=keyword_policy, latency=latency)
        judge = make_judge(f"openai-compatible:fake@{judge_server.base_url}")
        server = RewardServer(RewardScorer(judge, criteria=CRITERIA), ServeConfig(port=0, **config))
        url = await server.start()
        started.append(server)
        return url, server

    yield start
    for server in started:
        if not server.draining:
            await server.stop()


async def test_rewards_come_back_per_item_with_their_verdicts(reward_server):
    url, _ = await reward_server()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/rewards", json={"items": [
                ITEM, {"messages": [{"role": "user", "content": PROMPT}],
                       "completion": "Double the dose."}]}) as response:
            assert response.status == 200
            body = await response.json()
        async with http.get(f"{url}/health") as response:
            health = await response.json()
    assert body["rewards"] == [1.0, 0.0]
    assert body["results"][1]["met"] == {"doc": False, "rest": False, "harm": True}
    assert health["status"] == "ok" and health["criteria"] == 3 and not health["selection"]


async def test_openrlhf_clients_get_rewards_and_scores(reward_server):
    url, _ = await reward_server()
    payload = {"query": [f"Q: {PROMPT}\nA: Rest."], "prompts": [f"Q: {PROMPT}\nA: "],
               "labels": [None]}
    async with aiohttp.ClientSession() as http, http.post(f"{url}/get_reward",
                                                         json=payload) as response:
        body = await response.json()
    assert body["rewards"] == [pytest.approx(2 / 3)] and body["scores"] == body["rewards"]


async def test_bad_requests_name_the_field(reward_server):
    url, _ = await reward_server()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/rewards", json={"items": [{"completion": "x"}]}) as r:
            assert r.status == 400 and "items[0].prompt" in (await r.json())["error"]
        async with http.post(f"{url}/v1/rewards", data=b"{not json",
                             headers={"Content-Type": "application/json"}) as r:
            assert r.status == 400 and "invalid JSON" in (await r.json())["error"]
        async with http.post(f"{url}/v1/select", json={"prompt": "x"}) as r:
            assert r.status == 404


async def test_a_token_guards_everything_but_health_and_metrics_count_requests(reward_server):
    url, _ = await reward_server(token="s3cret")
    good = {"Authorization": "Bearer s3cret"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/rewards", json={"items": [ITEM]}) as r:
            assert r.status == 401 and r.headers["WWW-Authenticate"] == "Bearer"
        async with http.post(f"{url}/v1/rewards", json={"items": [ITEM]},
                             headers={"Authorization": "Bearer wrong"}) as r:
            assert r.status == 401
        async with http.get(f"{url}/health") as r:
            assert r.status == 200
        async with http.post(f"{url}/v1/rewards", json={"items": [ITEM]}, headers=good) as r:
            assert r.status == 200
        async with http.get(f"{url}/metrics", headers=good) as r:
            metrics = await r.text()
    assert 'assay_requests_total{route="/v1/rewards",status="200"} 1' in metrics
    assert 'assay_rejected_total{reason="auth"} 2' in metrics
    assert "assay_judge_calls_total 3" in metrics and "assay_reward_items_total 1" in metrics
    assert "s3cret" not in metrics


def test_uploads_have_a_connection_cap_above_the_scoring_cap():
    assert ServeConfig(max_per_client=4).connection_cap == 128
    assert ServeConfig(max_per_client=40).connection_cap == 320
    with pytest.raises(ConfigError, match="must be above max_per_client"):
        ServeConfig(max_per_client=8, max_connections_per_client=8)
    with pytest.raises(ConfigError, match="min_body_rate must be above 0"):
        ServeConfig(min_body_rate=0)
    with pytest.raises(ConfigError, match="max_items must be at least 1"):
        ServeConfig(max_items=0)


def test_the_cli_defaults_are_the_servers():
    from assay.cli import serve as cli
    from assay.rewards import request_limits, server, uploads

    assert cli.DEFAULT_MAX_BODY_BYTES == server.DEFAULT_MAX_BODY_BYTES
    assert (cli.DEFAULT_BODY_TIMEOUT_S, cli.DEFAULT_MIN_BODY_RATE) == (
        uploads.DEFAULT_TIMEOUT_S, uploads.DEFAULT_MIN_RATE)
    assert (cli.DEFAULT_MAX_ITEMS, cli.DEFAULT_MAX_CRITERIA, cli.DEFAULT_MAX_JUDGE_CALLS) == (
        request_limits.DEFAULT_MAX_ITEMS, request_limits.DEFAULT_MAX_CRITERIA,
        request_limits.DEFAULT_MAX_JUDGE_CALLS)


def test_binding_beyond_loopback_needs_a_token():
    for host in ("0.0.0.0", "10.1.2.3"):
        with pytest.raises(ConfigError, match="set a bearer token"):
            ServeConfig(host=host)
    assert ServeConfig(host="0.0.0.0", token="t").token == "t"


async def test_a_client_over_its_concurrency_limit_gets_429(reward_server):
    url, _ = await reward_server(latency=0.3, max_per_client=1)
    async with aiohttp.ClientSession() as http:
        first = asyncio.create_task(http.post(f"{url}/v1/rewards", json={"items": [ITEM]}))
        await asyncio.sleep(0.1)
        async with http.post(f"{url}/v1/rewards", json={"items": [ITEM]}) as second:
            assert second.status == 429 and second.headers["Retry-After"] == "1"
        response = await first
        assert response.status == 200
        response.release()


async def test_a_request_arriving_while_a_batch_runs_shares_the_next_batch(reward_server):
    url, server = await reward_server(latency=2.0, batch_window_ms=3_600_000)

    async def until(condition):
        for _ in range(2000):
            if condition():
                return
            await asyncio.sleep(0.005)
        raise AssertionError("the server never got there")

    async with aiohttp.ClientSession() as http:
        async def post(completion):
            async with http.post(f"{url}/v1/rewards", json={"items": [
                    {"prompt": PROMPT, "completion": completion}]}) as r:
                return (await r.json())["rewards"][0]

        alone = asyncio.create_task(post("Rest and see a doctor."))
        await until(lambda: server.batcher.batches == 1)  # nothing else came: scored at once
        # A request whose headers arrive now and its body later (a raw socket: the client
        # library would hold the headers back until the body).
        body = json.dumps({"items": [{"prompt": PROMPT, "completion": "See a doctor."}]})
        reader, writer = await asyncio.open_connection(server.config.host, server.port)
        writer.write(f"POST /v1/rewards HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode())
        await until(lambda: server.metrics.in_flight == 2)
        waiting = asyncio.create_task(post("Rest."))
        await until(lambda: server.metrics.in_flight == 3)
        await asyncio.sleep(0.1)
        assert server.batcher.batches == 1  # "Rest." waits for the request still being read
        writer.write(body.encode())
        rewards = await asyncio.gather(alone, waiting)
        reply = await reader.read()
        writer.close()
    assert rewards == [1.0, pytest.approx(2 / 3)]
    assert b'"rewards":[0.6666' in reply
    assert server.batcher.batches == 2 and server.batcher.items == 3


async def test_shutdown_lets_requests_in_progress_finish_and_refuses_new_ones(reward_server):
    url, server = await reward_server(latency=0.4)
    async with aiohttp.ClientSession() as http:
        in_progress = asyncio.create_task(http.post(f"{url}/v1/rewards", json={"items": [ITEM]}))
        await asyncio.sleep(0.1)
        stopping = asyncio.create_task(server.stop())
        await asyncio.sleep(0.05)
        async with http.post(f"{url}/v1/rewards", json={"items": [ITEM]}) as refused:
            assert refused.status == 503
        response = await in_progress
        assert response.status == 200 and (await response.json())["rewards"] == [1.0]
        await stopping
        with pytest.raises(aiohttp.ClientConnectionError):
            await http.post(f"{url}/v1/rewards", json={"items": [ITEM]})


def test_assay_serve_runs_from_the_cli_and_stops_cleanly_on_sigterm(tmp_path):
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as judge_server:
        env = {**os.environ, "ASSAY_SERVE_TOKEN": "tok"}
        process = subprocess.Popen(
            [sys.executable, "-c", "from assay.cli import main; main()", "serve", "--judge",
             f"openai-compatible:fake@{judge_server.base_url}", "--port", "0",
             "--store", str(tmp_path / "s.sqlite")],
            stderr=subprocess.PIPE, text=True, env=env)
        try:
            line = process.stderr.readline()
            url = re.search(r"(http://127\.0\.0\.1:\d+)", line).group(1)
            assert "token required" in line

            async def call():
                async with aiohttp.ClientSession() as http, http.post(
                        f"{url}/v1/rewards", json={"items": [ITEM]},
                        headers={"Authorization": "Bearer tok"}) as r:
                    return await r.json()

            body = asyncio.run(call())
            assert len(body["results"][0]["criteria"]) == 29     # the Health-SCORE bank
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
            assert "stopped" in process.stderr.read()
        finally:
            if process.poll() is None:
                process.kill()


def test_assay_serve_takes_its_judge_from_a_config_file_and_its_limits_from_flags(tmp_path):
    with FakeJudgeServer.run_in_thread(policy=keyword_policy, latency=0.05) as judge_server:
        config = tmp_path / "assay.toml"
        # a fixed attempt timeout: on a loaded machine a fitted one may give up on a slow
        # reply and send it again, which the server would count in flight twice
        config.write_text(f'[judges.local]\nspec = "openai-compatible:fake@'
                          f'{judge_server.base_url}"\ntimeout_s = 30\n')
        process = subprocess.Popen(
            [sys.executable, "-c", "from assay.cli import main; main()", "serve", "-j", "local",
             "--config", str(config), "--concurrency", "3", "--max-body-bytes", "5000",
             "--max-items", "2", "--port", "0", "--store", str(tmp_path / "s.sqlite")],
            stderr=subprocess.PIPE, text=True)
        try:
            line = process.stderr.readline()
            url = re.search(r"(http://127\.0\.0\.1:\d+)", line).group(1)

            async def call(completion, items=1):
                async with aiohttp.ClientSession() as http, http.post(
                        f"{url}/v1/rewards", json={"items": [
                            {"prompt": PROMPT, "completion": completion}] * items}) as r:
                    return r.status, await r.json()

            status, body = asyncio.run(call("Rest and see a doctor."))
            assert status == 200 and len(body["results"][0]["criteria"]) == 29
            assert judge_server.peak_in_flight == 3      # 29 calls, 3 at a time
            status, body = asyncio.run(call("x" * 6000))
            assert status == 413 and "5,000 bytes" in body["error"]
            status, body = asyncio.run(call("Rest.", items=3))
            assert status == 413 and "over the limit of 2 (assay serve --max-items)" in body["error"]
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_openrlhf_reaches_a_server_bound_beyond_loopback_by_the_token_in_its_url(tmp_path):
    bank = tmp_path / "bank.json"
    bank.write_text(Rubric(id="b", criteria=CRITERIA).model_dump_json())
    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as judge_server:
        process = subprocess.Popen(
            [sys.executable, "-c", "from assay.cli import main; main()", "serve", "--judge",
             f"openai-compatible:fake@{judge_server.base_url}", "--bank", str(bank),
             "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path / "s.sqlite")],
            stderr=subprocess.PIPE, text=True, env={**os.environ, "ASSAY_SERVE_TOKEN": "t0k"})
        try:
            port = re.search(r"http://0\.0\.0\.0:(\d+)", process.stderr.readline()).group(1)
            payload = {"query": [f"Q: {PROMPT}\nA: Rest and see a doctor."],
                       "prompts": [f"Q: {PROMPT}\nA: "], "labels": [""]}

            def post(path):  # as OpenRLHF's request_api_wrapper: JSON, no Authorization
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}{path}", data=json.dumps(payload).encode(),
                    headers={"Content-Type": "application/json"}, method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=30) as reply:
                        return reply.status, json.loads(reply.read())
                except urllib.error.HTTPError as refused:
                    return refused.code, None

            assert post("/get_reward")[0] == 401
            status, body = post("/t/t0k/get_reward")
            assert status == 200 and body["rewards"] == [1.0]
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
