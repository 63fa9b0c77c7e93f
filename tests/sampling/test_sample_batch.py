"""``assay sample --executor batch``: the model under test answers through its batch API; the
job keeps the batches, so running the same command again waits for them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.sampling import asample
from assay.testing import BatchScript, ModelScript

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "healthbench" / "examples.jsonl"
BOT = ModelScript(answers={"BEE": ["first", "second"]}, default="fine")


async def test_sampling_through_the_batch_api_writes_the_answers_of_a_live_run(serve, tmp_path):
    server = await serve(models={"bot": BOT})
    spec = f"openai-compatible:bot@{server.base_url}"
    await asample(EXAMPLES, model=spec, out=tmp_path / "live.jsonl", n=2, seed=0)
    batch = await asample(EXAMPLES, model=spec, out=tmp_path / "batch.jsonl", n=2, seed=0,
                          executor="batch", batch_poll_s=0.02)
    assert batch.status == "complete" and server.batches.created == 1
    assert (tmp_path / "batch.jsonl").read_text() == (tmp_path / "live.jsonl").read_text()
    first_line = json.loads(next(iter(server.batches.files.values())).splitlines()[0])
    assert first_line["url"] == "/v1/chat/completions" and first_line["body"]["model"] == "bot"


async def test_a_sample_job_stopped_while_its_batch_is_pending_waits_for_it_when_run_again(
        serve, tmp_path):
    server = await serve(models={"bot": BOT}, batches=BatchScript(complete_after_s=0.5))
    args = {"model": f"openai-compatible:bot@{server.base_url}", "out": tmp_path / "out.jsonl",
            "job_dir": tmp_path / "job", "executor": "batch", "batch_poll_s": 0.02}
    first = asyncio.ensure_future(asample(EXAMPLES, **args))
    while server.batches.created == 0:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # the batch is recorded in the job; then the process "dies"
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    again = await asample(EXAMPLES, **args)
    assert again.status == "complete" and again.written == 5
    assert server.batches.created == 1


async def test_a_budget_is_refused_with_the_batch_executor(tmp_path):
    with pytest.raises(ConfigError, match="--budget"):
        await asample(EXAMPLES, model="openai-compatible:bot@http://127.0.0.1:9/v1",
                      out=tmp_path / "o.jsonl", executor="batch", budget=1.0)
