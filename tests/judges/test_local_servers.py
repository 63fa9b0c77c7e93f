"""Local servers' own structured-output options (vLLM, llama.cpp, Ollama): the request bodies
sent over real HTTP to the fake judge on loopback, and the fallback when a server refuses."""

from __future__ import annotations

import pytest

from assay.judges import parse_spec
from assay.judges.specs import load_judge_configs

from .helpers import VERDICT, judge_for, request


@pytest.mark.parametrize(("provider", "expected_mode", "fields"), [
    ("vllm", "structured_outputs", {"structured_outputs": {"json": VERDICT}}),
    ("llamacpp", "json_object_schema",
     {"response_format": {"type": "json_object", "schema": VERDICT}}),
    ("llama.cpp", "json_object_schema",
     {"response_format": {"type": "json_object", "schema": VERDICT}}),
    ("ollama", "json_schema",  # Ollama's OpenAI endpoint turns this into its `format`
     {"response_format": {"type": "json_schema",
                          "json_schema": {"name": "verdict", "schema": VERDICT, "strict": False}}}),
])
async def test_native_structured_output_sends_the_servers_own_option(serve, provider,
                                                                     expected_mode, fields):
    server = await serve(policy="MET")
    async with judge_for(server, provider=provider, structured="native") as judge:
        assert judge.config.structured == expected_mode
        reply = await judge.ask(request())
    assert reply.ok and reply.data["verdict"] == "MET"
    body = server.requests[0]["body"]
    for key, value in fields.items():
        assert body[key] == value
    assert "JSON Schema" not in body["messages"][-1]["content"]  # constrained, not prompted


async def test_vllm_legacy_guided_json_is_the_schema_at_the_top_level(serve):
    server = await serve(policy="UNMET")
    async with judge_for(server, provider="vllm", structured="guided_json") as judge:
        reply = await judge.ask(request())
    body = server.requests[0]["body"]
    assert reply.data["verdict"] == "UNMET"
    assert body["guided_json"] == VERDICT and "response_format" not in body


async def test_a_server_refusing_its_option_falls_back_to_json_mode_then_the_prompt(serve):
    server = await serve(policy="MET", json_mode=False)  # answers 400 to any json_object
    async with judge_for(server, provider="llamacpp", structured="native") as judge:
        reply = await judge.ask(request())
        assert judge.structured_mode == "prompt"
    assert reply.ok and reply.attempts == 3
    sent = [r["body"].get("response_format") for r in server.requests]
    assert sent == [{"type": "json_object", "schema": VERDICT}, {"type": "json_object"}, None]


def test_native_in_a_judge_table_and_on_other_providers(tmp_path):
    config = tmp_path / "assay.toml"
    config.write_text('[judges.local]\nspec = "vllm:Qwen/Qwen3-8B"\nstructured = "native"\n'
                      '[judges.box]\nspec = "llamacpp:qwen"\nstructured = "guided_json"\n')
    tables = load_judge_configs(config)
    assert tables["local"].structured == "structured_outputs"
    assert tables["box"].structured == "guided_json"  # an explicit choice is kept
    assert parse_spec("openai-compatible:m@http://127.0.0.1:9/v1",
                      structured="native").structured == "json_schema"
