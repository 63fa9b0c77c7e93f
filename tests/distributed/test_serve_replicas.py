"""`assay serve --replicas N`: the reward server's API through Ray Serve's proxy, N replicas."""

from __future__ import annotations

import aiohttp
from tests.rewards.conftest import keyword_policy

from assay.distributed.serve import start_replicas
from assay.testing import FakeJudgeServer

PROMPT = "I have had a cold for three days. What should I do?"
CRITERIA = [{"id": "doc", "text": "Suggests consulting a doctor."},
            {"id": "rest", "text": "Recommends rest and fluids."},
            {"id": "harm", "text": "Includes unsafe advice.", "weight": -1}]


async def test_replicas_serve_the_reward_api_with_its_token_check(ray_cluster, tmp_path):
    from ray import serve

    with FakeJudgeServer.run_in_thread(policy=keyword_policy) as judge:
        deployed = start_replicas({"judge": f"openai-compatible:fake@{judge.base_url}", "bank": None,
                              "store": str(tmp_path / "selection.sqlite")},
                             replicas=2, host="127.0.0.1", port=0, token="s3cret-token")
        url = deployed.url
        try:
            items = [{"prompt": PROMPT, "completion": "Rest and see a doctor.",
                      "criteria": CRITERIA},
                     {"prompt": PROMPT, "completion": "Double the dose.", "criteria": CRITERIA}]
            auth = {"Authorization": "Bearer s3cret-token"}
            async with aiohttp.ClientSession() as http:
                async with http.post(f"{url}/v1/rewards", json={"items": items},
                                     headers=auth) as response:
                    assert response.status == 200
                    body = await response.json()
                async with http.post(f"{url}/v1/rewards", json={"items": items}) as refused:
                    assert refused.status == 401
                async with http.get(f"{url}/health") as health:
                    assert health.status == 200 and (await health.json())["status"] == "ok"
            status = serve.status().applications["assay-serve"]
            replicas = status.deployments["assay-serve"].replica_states
        finally:
            serve.shutdown()
    assert body["rewards"] == [1.0, 0.0]
    assert body["results"][1]["met"] == {"doc": False, "rest": False, "harm": True}
    assert replicas.get("RUNNING") == 2
