"""Who may spend ``assay serve``'s judge calls: bounded metrics, JSON-only tokenless requests,
the token in the path for clients without headers (OpenRLHF), never logged nor a label."""

from __future__ import annotations

import logging

import aiohttp
import pytest

PROMPT = "I have had a cold for three days. What should I do?"
ITEM = {"prompt": PROMPT, "completion": "Rest and see a doctor."}
TOKEN = "tok-3f9a7c"


async def metrics_of(url, headers=None):
    async with aiohttp.ClientSession() as http, http.get(f"{url}/metrics",
                                                         headers=headers) as response:
        return await response.text()


async def test_metrics_count_unknown_paths_under_one_label(server_at):
    url, _ = await server_at()
    async with aiohttp.ClientSession() as http:
        for i in range(40):
            async with http.get(f"{url}/scan/{i}/admin.php") as response:
                assert response.status == 404
        async with http.post(f"{url}/nothing-here-{i}", json={}) as response:
            assert response.status == 404
    metrics = await metrics_of(url)
    assert 'assay_requests_total{route="(unmatched)",status="404"} 41' in metrics
    assert "admin.php" not in metrics and "nothing-here" not in metrics


async def test_without_a_token_a_post_that_is_not_json_is_refused_before_any_judge_call(
        server_at):
    url, judge_server = await server_at()
    async with aiohttp.ClientSession() as http, http.post(
            f"{url}/v1/rewards", data=b'{"items": [{"prompt": "Hi", "completion": "Hello"}]}',
            headers={"Content-Type": "text/plain"}) as response:
        assert response.status == 415
        assert "Content-Type: application/json" in (await response.json())["error"]
    assert judge_server.requests == []


async def test_without_a_token_a_foreign_host_header_is_refused(server_at):
    url, judge_server = await server_at()
    async with aiohttp.ClientSession() as http, http.post(
            f"{url}/v1/rewards", json={"items": [ITEM]},
            headers={"Host": "rebound.attacker.example"}) as response:
        assert response.status == 421
    assert judge_server.requests == []


async def test_with_a_token_a_non_json_content_type_is_not_refused(server_at):
    url, _ = await server_at(token=TOKEN)
    async with aiohttp.ClientSession() as http, http.post(
            f"{url}/v1/rewards", data=b'{"items": [{"prompt": "Hi", "completion": "Rest."}]}',
            headers={"Authorization": f"Bearer {TOKEN}",
                     "Content-Type": "text/plain"}) as response:
        assert response.status == 200


async def test_a_token_in_the_path_lets_openrlhf_in_without_a_header(server_at):
    url, _ = await server_at(token=TOKEN)
    payload = {"query": [f"Q: {PROMPT}\nA: Rest."], "prompts": [f"Q: {PROMPT}\nA: "],
               "labels": [None]}
    async with aiohttp.ClientSession() as http:   # as OpenRLHF's requests.post: no auth header
        async with http.post(f"{url}/t/{TOKEN}/get_reward", json=payload) as response:
            assert response.status == 200
            assert (await response.json())["rewards"] == [pytest.approx(2 / 3)]
        async with http.post(f"{url}/t/{TOKEN}x/get_reward", json=payload) as response:
            assert response.status == 401
        async with http.post(f"{url}/get_reward", json=payload) as response:
            assert response.status == 401


async def test_the_path_token_is_never_a_metrics_label_nor_logged(server_at, caplog):
    caplog.set_level(logging.DEBUG)
    url, _ = await server_at(token=TOKEN)
    async with aiohttp.ClientSession() as http:
        for path in (f"/t/{TOKEN}/get_reward", f"/t/{TOKEN}/v1/rewards", f"/t/{TOKEN}/nowhere"):
            async with http.post(url + path, json={"query": "not a list"}) as response:
                assert response.status in (400, 401)
        async with http.post(f"{url}/t/{TOKEN}/v1/rewards", json={"items": [ITEM]}) as response:
            assert response.status == 200
    metrics = await metrics_of(f"{url}/t/{TOKEN}")
    assert 'assay_requests_total{route="/t/{token}/v1/rewards",status="200"} 1' in metrics
    assert 'route="/t/{token}/get_reward",status="400"' in metrics
    assert TOKEN not in metrics and TOKEN not in caplog.text


async def test_without_a_token_there_is_no_path_token_route(server_at):
    url, judge_server = await server_at()
    async with aiohttp.ClientSession() as http, http.post(
            f"{url}/t/anything/v1/rewards", json={"items": [ITEM]}) as response:
        assert response.status == 404
    assert judge_server.requests == []
