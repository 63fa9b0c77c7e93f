"""Generation batches on Ray workers: the same rubrics and traces as the local executor."""

from __future__ import annotations

from tests.generate.conftest import fake, sample_kb, sample_queries, sample_stages  # noqa: F401

from assay.generate import agenerate
from assay.jobs import CallStore


async def test_generation_on_ray_workers_writes_the_same_rubrics_as_locally(
        ray_cluster, serve, sample_kb, sample_queries, sample_stages, tmp_path):  # noqa: F811
    local_server = await serve(stages=sample_stages)
    local = await agenerate(str(sample_queries), kb=sample_kb, model=fake(local_server),
                            out=tmp_path / "local.jsonl")
    ray_server = await serve(stages=sample_stages)
    remote = await agenerate(str(sample_queries), kb=sample_kb, model=fake(ray_server),
                             out=tmp_path / "ray.jsonl", executor="ray", workers=2)
    assert remote.status == "complete" and not remote.failed
    assert {k: r.model_dump(exclude={"criteria": {"__all__": {"provenance"}}})
            for k, r in remote.rubrics.items()} == {
        k: r.model_dump(exclude={"criteria": {"__all__": {"provenance"}}})
        for k, r in local.rubrics.items()}
    assert len(ray_server.requests) == len(local_server.requests)  # every call made once, remotely
    store = CallStore.open(remote.job_dir / "calls.sqlite")
    assert store.totals().calls == len(ray_server.requests)  # traced on the driver as usual


async def test_an_unknown_executor_is_refused(serve, sample_kb, sample_queries, tmp_path):  # noqa: F811
    import pytest

    from assay.errors import ConfigError

    server = await serve()
    with pytest.raises(ConfigError, match="--executor 'spark': unknown"):
        await agenerate(str(sample_queries), kb=sample_kb, model=fake(server),
                        out=tmp_path / "x.jsonl", executor="spark")
