"""The reply fallback chain: JSON schema → JSON mode → prompt, lenient extraction, re-asks
(``max_reasks``, 2 by default, each quoting its reply's parse error)."""

from __future__ import annotations

from assay.judges import FailureKind, JudgeRequest
from assay.judges.structured import QUOTED_ERROR_CHARS, parse_reply, reask_messages, validate
from assay.testing import Faults

from .helpers import VERDICT, judge_for, request


async def test_an_endpoint_without_json_schema_falls_back_to_json_mode(serve):
    server = await serve(json_schema=False)
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
        assert judge.structured_mode == "json_mode"
    assert reply.ok and reply.attempts == 2
    assert [r["body"]["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]


async def test_the_fallback_is_remembered_for_later_calls(serve):
    server = await serve(json_schema=False)
    async with judge_for(server) as judge:
        await judge.ask(request())
        second = await judge.ask(request())
    assert second.attempts == 1


async def test_an_endpoint_without_any_json_mode_gets_the_schema_in_the_prompt(serve):
    server = await serve(json_schema=False, json_mode=False)
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok
    last = server.requests[-1]["body"]
    assert "response_format" not in last
    assert "JSON Schema" in last["messages"][-1]["content"]


async def test_json_inside_code_fences_with_chatter_is_extracted(serve):
    server = await serve(faults=Faults(fenced=1.0), policy="MET")
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.data["verdict"] == "MET" and reply.attempts == 1
    assert reply.raw.startswith("Here is my assessment")


async def test_a_malformed_reply_is_reasked_once_quoting_the_parse_error(serve):
    server = await serve(faults=Faults(script=["malformed"]), policy="UNMET")
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.data["verdict"] == "UNMET" and reply.attempts == 2
    reask = server.requests[1]["body"]["messages"]
    assert reask[-2]["role"] == "assistant"
    assert "could not be used: not valid JSON" in reask[-1]["content"]


async def test_a_reply_malformed_three_times_is_an_unparseable_failure_after_two_reasks(serve):
    server = await serve(faults=Faults(malformed=1.0))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.failure.kind is FailureKind.UNPARSEABLE and reply.data is None
    assert reply.attempts == 3 and reply.raw.endswith(" }")


async def test_a_reply_malformed_twice_then_good_succeeds_by_default(serve):
    server = await serve(faults=Faults(script=["malformed", "malformed"]), policy="UNMET")
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.data["verdict"] == "UNMET" and reply.attempts == 3


async def test_max_reasks_sets_how_many_times_a_malformed_reply_is_asked_again(serve):
    server = await serve(faults=Faults(malformed=1.0))
    for max_reasks, attempts in ((0, 1), (1, 2), (4, 5)):
        async with judge_for(server, max_reasks=max_reasks) as judge:
            reply = await judge.ask(request())
        assert reply.failure.kind is FailureKind.UNPARSEABLE and reply.attempts == attempts


async def test_reask_false_makes_no_reask_whatever_max_reasks_says(serve):
    server = await serve(faults=Faults(malformed=1.0))
    async with judge_for(server, reask=False, max_reasks=5) as judge:
        reply = await judge.ask(request())
    assert reply.attempts == 1 and len(server.requests) == 1


async def test_each_reask_quotes_the_parse_error_of_the_reply_before_it(serve):
    server = await serve(faults=Faults(script=["malformed", "schema_mismatch"]))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 3
    first, second = (server.requests[k]["body"]["messages"] for k in (1, 2))
    assert "could not be used: not valid JSON" in first[-1]["content"]
    assert "could not be used: $: missing required property" in second[-1]["content"]
    # the second re-ask carries the last bad reply only: the prompt does not grow per re-ask
    assert len(second) == len(first) == 3
    assert second[-2]["content"] == '{"answer": "yes", "confidence": 0.9}'


def test_a_reask_quotes_at_most_a_bounded_part_of_a_long_parse_error():
    error = "bad value " * 1000
    fix = reask_messages(({"role": "user", "content": "q"},), "{", error, None)[-1]["content"]
    quoted = fix.split("could not be used: ", 1)[1].split(".\n", 1)[0]
    assert len(quoted) == QUOTED_ERROR_CHARS and quoted.endswith("…")


async def test_valid_json_of_the_wrong_shape_is_a_schema_mismatch(serve):
    server = await serve(faults=Faults(schema_mismatch=1.0))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.failure.kind is FailureKind.SCHEMA_MISMATCH
    assert "missing required property" in reply.failure.message
    assert reply.raw == '{"answer": "yes", "confidence": 0.9}'


async def test_a_schema_mismatch_then_a_good_reply_succeeds_after_the_reask(serve):
    server = await serve(faults=Faults(script=["schema_mismatch"]))
    async with judge_for(server) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 2
    assert "missing required property" in server.requests[1]["body"]["messages"][-1]["content"]


def test_the_outermost_object_is_found_after_leading_text():
    result = parse_reply('Verdict follows: {"verdict": "MET", "explanation": "a {b}"} thanks', VERDICT)
    assert result.data == {"verdict": "MET", "explanation": "a {b}"}


def test_a_json_array_is_not_an_object():
    assert parse_reply("[1, 2]", None).kind is FailureKind.UNPARSEABLE


def test_an_empty_reply_is_unparseable():
    assert parse_reply("   ", VERDICT).error == "the reply is empty"


def test_validation_reports_the_path_of_a_wrong_enum():
    problem = validate({"verdicts": {"c1": {"verdict": "YES", "explanation": ""}}},
                       {"properties": {"verdicts": {"properties": {"c1": VERDICT}}}})
    assert problem.startswith("$.verdicts.c1.verdict: 'YES' is not one of")


def test_validation_rejects_a_bool_where_an_integer_is_required():
    assert validate(True, {"type": "integer"}) == "$: expected integer, got boolean"


def test_validation_rejects_extra_properties_when_forbidden():
    assert "unexpected property" in validate({"a": 1}, {"properties": {}, "additionalProperties": False})


async def test_a_placeholder_answer_is_asked_again_not_kept(serve):
    placeholder = {"rubrics": [{"criterion": "...", "axis": "Accuracy", "points": 9}]}
    good = {"rubrics": [{"criterion": "Advises rest.", "axis": "Accuracy", "points": 9}]}
    server = await serve(stages={"draft_rubric": [placeholder, good]})
    async with judge_for(server) as judge:
        reply = await judge.ask(JudgeRequest(messages=({"role": "user", "content": "draft"},),
                                             schema={"type": "object"}, schema_name="draft_rubric"))
    assert reply.ok and reply.data == good
    assert "'...' is a placeholder" in server.requests[1]["body"]["messages"][-1]["content"]


def test_an_ellipsis_inside_a_sentence_is_no_placeholder():
    assert parse_reply('{"criterion": "Lists causes (infection, injury, ...)."}', None).ok
    assert parse_reply('{"ids": ["…"]}', None).kind is FailureKind.SCHEMA_MISMATCH
