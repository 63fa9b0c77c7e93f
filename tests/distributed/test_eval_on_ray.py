"""``assay eval --executor ray``: both stages' calls made by Ray workers, with the same answers,
verdicts and metrics as a local eval, and the workers' calls kept in the driver's stores."""

from __future__ import annotations

from tests.evaluation.test_resume_every_stage import items

from assay.evaluation import aevaluate
from assay.testing import FakeJudgeServer, ModelScript


async def test_an_eval_on_ray_equals_a_local_eval(ray_cluster, tmp_path):
    async with FakeJudgeServer(models={"bot": ModelScript()}) as server:
        args = {"healthbench": True, "n": 2, "sampling_seed": 0,
                "model": f"openai-compatible:bot@{server.base_url}",
                "judges": [f"openai-compatible:fake@{server.base_url}"]}
        local = await aevaluate(items(tmp_path), run_dir=tmp_path / "local", **args)
        n_local = len(server.requests)
        on_ray = await aevaluate(items(tmp_path), run_dir=tmp_path / "ray", executor="ray",
                                 workers=2, **args)
        stages = [r["stage"] for r in server.requests[n_local:]]
        assert len(server.requests) == 2 * n_local  # every call made once, by the workers
        assert stages.count("model:bot") == 10  # asked as free text, not as a judge
    assert on_ray.stage == "done" and on_ray.metrics == local.metrics
    assert on_ray.sampled.totals.calls == 10 and on_ray.executor == "ray"
    assert (tmp_path / "ray" / "responses.jsonl").read_text() == (
        tmp_path / "local" / "responses.jsonl").read_text()
