"""``assay generate --executor batch``: every stage through the batch API, the same rubrics."""

from __future__ import annotations

from tests.generate.conftest import fake

from assay.generate import agenerate


async def test_generating_through_the_batch_api_writes_the_rubrics_of_a_live_run(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    live = await agenerate(str(sample_queries), kb=sample_kb, model=fake(server),
                           out=tmp_path / "live.jsonl")
    live_requests = len(server.requests)
    server.reset()
    batch = await agenerate(str(sample_queries), kb=sample_kb, model=fake(server),
                            out=tmp_path / "batch.jsonl", executor="batch", batch_poll_s=0.02)
    assert batch.status == live.status == "complete"
    assert (tmp_path / "batch.jsonl").read_text() == (tmp_path / "live.jsonl").read_text()
    assert len(server.requests) == live_requests  # each stage call made once, in batches
    assert 1 < server.batches.created < live_requests  # a batch per stage wave, not per call
