"""``assay sample`` / ``assay.sample``: the model under test answers every item, resumably."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.runs.sources import ItemSource, read_responses
from assay.sampling import asample
from assay.testing import FakeJudgeServer, Faults, ModelScript

ASSAY = [str(Path(sys.executable).parent / "assay")]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "healthbench" / "examples.jsonl"
IDS = [json.loads(line)["prompt_id"] for line in EXAMPLES.read_text().splitlines()]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_every_healthbench_example_gets_one_answer_as_a_prompt_id_line(serve, tmp_path):
    server = await serve(models={"bot": ModelScript(answers={"BEE": "Scrape the stinger out."})})
    out = tmp_path / "responses.jsonl"
    result = await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}", out=out)
    assert (result.status, result.written) == ("complete", 5)
    written = lines(out)
    assert [r["prompt_id"] for r in written] == IDS
    assert written[0] == {"prompt_id": IDS[0], "response": "Scrape the stinger out.",
                          "finish_reason": "stop"}
    assert read_responses(out)[IDS[0]] == "Scrape the stinger out."


async def test_n_samples_per_item_are_numbered_and_graded_as_separate_items(serve, tmp_path):
    server = await serve(models={"bot": ModelScript(answers={"BEE": ["first", "second"]})})
    out = tmp_path / "responses.jsonl"
    await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}", out=out, n=2,
                  seed=0)
    written = lines(out)
    assert [(r["prompt_id"], r["sample"]) for r in written[:2]] == [(IDS[0], 0), (IDS[0], 1)]
    assert [r["response"] for r in written[:2]] == ["first", "second"]
    items = list(ItemSource(path=EXAMPLES, responses=read_responses(out)))
    assert [i.id for i in items[:2]] == [f"{IDS[0]}#0", f"{IDS[0]}#1"]
    assert items[1].metadata["prompt_id"] == IDS[0] and items[1].response == "second"
    assert items[1].rubric == items[0].rubric


async def test_a_rerun_after_a_failed_sample_makes_only_the_missing_call(serve, tmp_path):
    out = tmp_path / "responses.jsonl"
    faulty = await serve(models={"bot": ModelScript(default="ok")},
                         faults=Faults(server_error=1.0))
    spec = f"openai-compatible:bot@{faulty.base_url}"
    first = await asample(EXAMPLES, model=spec, out=out, n=2, seed=1, concurrency=1,
                          job_dir=tmp_path / "job")
    assert first.status == "incomplete" and len(first.failed) == 5 and first.written == 0
    faulty.faults = Faults(server_error=0.0)
    faulty.reset()
    again = await asample(EXAMPLES, model=spec, out=out, n=2, seed=1, job_dir=tmp_path / "job")
    assert again.status == "complete" and again.written == 10
    calls_after_resume = len(faulty.requests)
    third = await asample(EXAMPLES, model=spec, out=out, n=2, seed=1, job_dir=tmp_path / "job")
    assert third.resumed == 5 and len(faulty.requests) == calls_after_resume == 10


async def test_an_item_with_one_failed_sample_is_not_written(serve, tmp_path):
    server = await serve(models={"bot": ModelScript(answers={"BEE": ["a", {
        "text": "", "finish_reason": "length"}]})})
    out = tmp_path / "responses.jsonl"
    result = await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}", out=out,
                           n=2, seed=0)
    assert result.status == "incomplete" and list(result.failed) == [IDS[0]]
    assert "1 of 2 samples failed" in result.failed[IDS[0]]
    assert IDS[0] not in {r["prompt_id"] for r in lines(out)} and result.written == 8


async def test_a_named_condition_puts_its_system_prompt_before_the_conversation(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}",
                  out=tmp_path / "r.jsonl", condition="single-axis", temperature=0.7,
                  max_tokens=300)
    body = server.requests[0]["body"]
    assert body["messages"][0] == {"role": "system", "content": (
        "You are a helpful assistant. Please generate a response that follows user "
        "instructions.")}
    assert (body["temperature"], body["max_tokens"]) == (0.7, 300)


async def test_a_changed_sampling_setting_is_refused_on_resume(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    spec = f"openai-compatible:bot@{server.base_url}"
    await asample(EXAMPLES, model=spec, out=tmp_path / "r.jsonl", temperature=0.0)
    with pytest.raises(ConfigError, match="temperature"):
        await asample(EXAMPLES, model=spec, out=tmp_path / "r.jsonl", temperature=1.0)


async def test_items_output_carries_the_response_and_sample_ids(serve, tmp_path):
    server = await serve(models={"bot": ModelScript(default="Rest.")})
    out = tmp_path / "items.jsonl"
    await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}", out=out, n=2,
                  output_format="items")
    first = lines(out)[1]
    assert first["id"] == f"{IDS[0]}#1" and first["response"] == "Rest."
    assert first["rubric"]["criteria"] and first["metadata"]["sample"] == 1


def test_read_responses_refuses_a_prompt_with_and_without_sample_numbers(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"prompt_id": "p", "response": "a"}\n'
                    '{"prompt_id": "p", "response": "b", "sample": 1}\n'
                    '{"prompt_id": "q", "response": "c", "sample": "1"}\n')
    with pytest.raises(Exception) as caught:
        read_responses(path)
    message = str(caught.value)
    assert "r.jsonl:2: sample" in message and "r.jsonl:3: sample" in message


def test_the_cli_samples_then_grade_reads_its_output(tmp_path):
    with FakeJudgeServer.run_in_thread(models={"bot": {"default": "See a doctor."}}) as server:
        out = tmp_path / "responses.jsonl"
        sampled = subprocess.run(
            [*ASSAY, "sample", str(EXAMPLES), "--model",
             f"openai-compatible:bot@{server.base_url}", "--out", str(out), "--n", "2", "-q"],
            capture_output=True, text=True, cwd=tmp_path, check=False)
        assert sampled.returncode == 0, sampled.stderr
        assert "wrote 10 healthbench lines" in sampled.stdout
        graded = subprocess.run(
            [*ASSAY, "grade", str(EXAMPLES), "--healthbench",
             "--responses", str(out), "--judge", f"openai-compatible:fake@{server.base_url}",
             "--run-dir", str(tmp_path / "run"), "--quiet"],
            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert graded.returncode == 0, graded.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete"


def test_the_cli_exits_4_when_samples_failed(tmp_path):
    with FakeJudgeServer.run_in_thread(models={"bot": {}}, faults=Faults(server_error=1.0)) as s:
        done = subprocess.run(
            [*ASSAY, "sample", str(EXAMPLES), "--model",
             f"openai-compatible:bot@{s.base_url}", "--out", str(tmp_path / "r.jsonl"), "-q",
             "--config", str(tmp_path / "none.toml")],
            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 4, done.stderr
    assert "incomplete: 5 items not written" in done.stderr
