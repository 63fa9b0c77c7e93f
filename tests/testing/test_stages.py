"""Scripted stage replies: the fake server answers non-grading calls by schema name."""

from __future__ import annotations

import pytest

from assay.judges import JudgeRequest, make_judge
from assay.testing import StageScript

QUERIES = {"type": "object", "required": ["queries"],
           "properties": {"queries": {"type": "array", "items": {"type": "string"}}}}


async def ask(server, stage, content="a clinical query", schema=QUERIES, spec="openai-compatible:fake"):
    async with make_judge(f"{spec}@{server.base_url}") as judge:
        return await judge.ask(JudgeRequest(({"role": "user", "content": content},), schema, stage))


async def test_a_stage_is_answered_by_its_schema_name(serve):
    server = await serve(stages={"route": {"queries": ["aspirin dose"]}})
    reply = await ask(server, "route")
    assert reply.data == {"queries": ["aspirin dose"]}
    assert server.requests[-1]["stage"] == "route"


async def test_a_request_of_no_scripted_stage_is_graded_by_the_policy(serve):
    server = await serve(policy="UNMET", stages={"route": {"queries": []}})
    schema = {"type": "object", "required": ["verdict", "explanation"],
              "properties": {"verdict": {"type": "string"}, "explanation": {"type": "string"}}}
    reply = await ask(server, "verdict", '<criterion id="c1">x</criterion><response>y</response>', schema)
    assert reply.data["verdict"] == "UNMET"
    assert server.requests[-1]["stage"] is None


async def test_a_list_answers_in_turn_so_a_malformed_reply_is_reasked(serve):
    server = await serve(stages={"route": ["this is not json", {"queries": ["fixed"]}]})
    reply = await ask(server, "route")
    assert reply.ok and reply.data == {"queries": ["fixed"]}
    assert len(server.requests) == 2  # the re-ask
    assert server.stages.count("route") == 2


async def test_by_prompt_picks_the_reply_whose_substring_occurs(serve):
    script = {"route": {"by_prompt": [["chest pain", {"queries": ["acs"]}]],
                        "default": {"queries": ["other"]}}}
    server = await serve(stages=script)
    assert (await ask(server, "route", "sudden chest pain")).data == {"queries": ["acs"]}
    assert (await ask(server, "route", "a rash")).data == {"queries": ["other"]}


async def test_a_callable_sees_the_prompt_and_the_request_number(serve):
    server = await serve(stages={"route": lambda req: {"queries": [req.text.upper(), str(req.n)]}})
    assert (await ask(server, "route", "abc")).data == {"queries": ["ABC", "0"]}
    assert (await ask(server, "route", "abc")).data == {"queries": ["ABC", "1"]}


async def test_a_fixture_file_scripts_stages(serve, tmp_path):
    path = tmp_path / "replies.yaml"
    path.write_text("route:\n  queries: [from file]\n", encoding="utf-8")
    server = await serve(stages=str(path))
    assert (await ask(server, "route")).data == {"queries": ["from file"]}


async def test_anthropic_tool_calls_are_scripted_too(serve, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    server = await serve(stages={"route": {"queries": ["via tool"]}})
    base = server.base_url
    async with make_judge(f"anthropic:claude-x@{base}") as judge:
        reply = await judge.ask(JudgeRequest(({"role": "user", "content": "q"},), QUERIES, "route"))
    assert reply.data == {"queries": ["via tool"]}
    assert server.requests[-1]["path"] == "/v1/messages"


def test_a_script_file_that_is_not_a_mapping_is_a_located_error(tmp_path):
    from assay.errors import InputError

    path = tmp_path / "replies.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match="replies.json: a stage script is a mapping"):
        StageScript.from_file(path)
