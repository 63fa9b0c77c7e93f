"""``--protocol simple-evals`` end to end: the model under test is asked as simple-evals' model
table samples it and the judge as its grader asks, byte for byte, with no preflight request.

The expected bodies are built here the way simple-evals' samplers and the openai / anthropic
SDKs build them (quoted in tests/data/simple_evals/sampler_request.md), independently of
Assay's request code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evaluation import aevaluate
from assay.sampling import asample
from assay.testing import ModelScript

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "healthbench" / "examples.jsonl"
QUOTED = ROOT / "tests" / "data" / "simple_evals" / "sampler_request.md"
GRADER_TEMPLATE = (ROOT / "src" / "assay" / "grading" / "templates" / "healthbench.txt").read_text(
    encoding="utf-8").strip()
API = "You are a helpful assistant."
ANSWER = "Scrape the stinger out and put ice on it."
JUDGE = "gpt-4.1-2025-04-14"


def rows() -> list[dict]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]


def sdk_bytes(body: dict) -> bytes:
    """openapi_dumps, as both SDKs serialize a request body."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def chat_sampler_body(model: str, row: dict, *, temperature=0.5, max_tokens=2048) -> bytes:
    """ChatCompletionSampler(model, system_message=OPENAI_SYSTEM_MESSAGE_API, max_tokens=...)."""
    message_list = [{"role": "system", "content": API}] + row["prompt"]
    return sdk_bytes({"messages": message_list, "model": model, "max_tokens": max_tokens,
                      "temperature": temperature})


def grader_bodies(row: dict, queried: list[dict], response: str) -> list[bytes]:
    """simple-evals' grader requests for one answer: the conversation the sampler sent."""
    convo = queried + [dict(content=response, role="assistant")]  # noqa: C408  (its key order)
    convo_str = "\n\n".join([f"{m['role']}: {m['content']}" for m in convo])
    out = []
    for rubric in row["rubrics"]:
        prompt = GRADER_TEMPLATE.replace("<<conversation>>", convo_str).replace(
            "<<rubric_item>>", f"[{rubric['points']}] {rubric['criterion']}")
        messages = [{"role": "system", "content": API}, dict(content=prompt, role="user")]  # noqa: C408
        out.append(sdk_bytes({"messages": messages, "model": JUDGE, "max_tokens": 2048,
                              "temperature": 0.5}))
    return out


def sent(server, stage: str | None = None) -> list[bytes]:
    return sorted(r["raw_body"].encode() for r in server.requests
                  if stage is None or r["stage"] == stage)


def test_the_quoted_sources_are_the_ones_the_expected_requests_follow():
    quoted = QUOTED.read_text(encoding="utf-8")
    for fragment in ('"gpt-4o-mini": ChatCompletionSampler(', 'model="gpt-4o-mini-2024-07-18"',
                     "actual_queried_message_list=message_list",
                     'self._pack_message("system", self.system_message)',
                     "reasoning_effort=self.reasoning_effort", '"reasoning_effort": reasoning_effort',
                     "prompt=actual_queried_prompt_messages", "so a parameter passed as `None`",
                     '"max_tokens": max_tokens,\n            "messages": messages,'):
        assert fragment in quoted


async def test_an_eval_sends_simple_evals_model_and_grader_requests_byte_for_byte(serve,
                                                                                 tmp_path):
    model = "gpt-4o-mini-2024-07-18"
    server = await serve(policy="MET", models={model: ModelScript(default=ANSWER)})
    result = await aevaluate(EXAMPLES, healthbench=True, protocol="simple-evals",
                             model=f"openai-compatible:{model}@{server.base_url}",
                             judges=[f"openai-compatible:{JUDGE}@{server.base_url}"],
                             run_dir=tmp_path / "ev")
    assert result.stage == "done"
    assert sent(server, f"model:{model}") == sorted(chat_sampler_body(model, r) for r in rows())
    expected = [body for r in rows() for body in grader_bodies(
        r, [{"role": "system", "content": API}] + r["prompt"], ANSWER)]
    judged = sorted(r["raw_body"].encode() for r in server.requests
                    if r["stage"] != f"model:{model}")
    assert judged == sorted(expected)
    assert server.preflights == 0  # simple-evals sends none; neither does Assay here
    assert result.metrics["overall_score:n_samples"] == 5


async def test_an_o_series_chat_entry_sends_its_reasoning_effort_and_nothing_else(serve, tmp_path):
    server = await serve(models={"o3-mini": ModelScript(default=ANSWER)})
    await asample(EXAMPLES, model=f"openai-compatible:o3-mini_high@{server.base_url}",
                  out=tmp_path / "a.jsonl", protocol="simple-evals")
    await asample(EXAMPLES, model=f"openai-compatible:o3-mini@{server.base_url}",
                  out=tmp_path / "b.jsonl", protocol="simple-evals")
    high = [sdk_bytes({"messages": r["prompt"], "model": "o3-mini", "reasoning_effort": "high"})
            for r in rows()]
    default = [sdk_bytes({"messages": r["prompt"], "model": "o3-mini", "reasoning_effort": None})
               for r in rows()]  # OChatCompletionSampler passes None: the SDK sends null
    assert sent(server) == sorted(high + default)
    assert server.preflights == 0


async def test_a_responses_entry_asks_the_responses_api(serve, tmp_path):
    server = await serve(models={"o3-2025-04-16": ModelScript(default=ANSWER)})
    result = await asample(EXAMPLES, model=f"openai-compatible:o3_low@{server.base_url}",
                           out=tmp_path / "a.jsonl", protocol="simple-evals")
    assert result.status == "complete" and {r["path"] for r in server.requests} == {
        "/v1/responses"}
    assert sent(server) == sorted(sdk_bytes({"input": r["prompt"], "model": "o3-2025-04-16",
                                             "reasoning": {"effort": "low"}}) for r in rows())
    answers = [json.loads(line)["response"] for line in (tmp_path / "a.jsonl").read_text()
               .splitlines()]
    assert answers == [ANSWER] * 5


async def test_a_claude_entry_sends_its_system_field_and_defaults(serve, tmp_path, monkeypatch):
    from assay.sampling.simple_evals import CLAUDE_SYSTEM_MESSAGE_LMSYS

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    name = "claude-3-7-sonnet-20250219"
    server = await serve(models={name: ModelScript(default=ANSWER)})
    await asample(EXAMPLES, model=f"anthropic:{name}@{server.base_url}",
                  out=tmp_path / "a.jsonl", protocol="simple-evals")
    assert sent(server) == sorted(sdk_bytes({"max_tokens": 4096, "messages": r["prompt"],
                                             "model": name, "system": CLAUDE_SYSTEM_MESSAGE_LMSYS,
                                             "temperature": 0.0}) for r in rows())


async def test_a_model_outside_the_table_is_asked_as_its_usual_entries_are(serve, tmp_path):
    server = await serve(models={"my-model": ModelScript(default=ANSWER)})
    await asample(EXAMPLES, model=f"openai-compatible:my-model@{server.base_url}",
                  out=tmp_path / "a.jsonl", protocol="simple-evals")
    assert sent(server) == sorted(chat_sampler_body("my-model", r, max_tokens=1024)
                                  for r in rows())


async def test_the_sampler_keeps_its_own_system_message_and_sends_no_seed(tmp_path):
    spec = "openai-compatible:gpt-4.1@http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match="leave --system and --condition out"):
        await asample(EXAMPLES, model=spec, out=tmp_path / "a.jsonl", protocol="simple-evals",
                      condition="single-axis")
    with pytest.raises(ConfigError, match="send no seed"):
        await asample(EXAMPLES, model=spec, out=tmp_path / "a.jsonl", protocol="simple-evals",
                      seed=1)
