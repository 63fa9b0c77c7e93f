"""The fake judge server, driven by a plain aiohttp client over loopback."""

from __future__ import annotations

import json

import aiohttp
import pytest

from assay.testing import (
    CriterionView,
    FakeJudgeServer,
    Faults,
    GroundTruthPolicy,
    RandomErrorPolicy,
    parse_prompt,
    policy_from_string,
)

SINGLE = {"type": "object", "properties": {"explanation": {"type": "string"},
          "verdict": {"type": "string"}}, "required": ["explanation", "verdict"]}


def assay_prompt(cid="c1", text="Mentions dosage", response="Take 200 mg.", options=None):
    out = f'<criterion id="{cid}">{text}</criterion>\n<response>{response}</response>'
    if options:
        out += "\n<options>\n" + "\n".join(f"{i}. {o}" for i, o in enumerate(options, 1)) + "\n</options>"
    return out


async def chat(server, content, schema=None, headers=None, raw=False):
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}}
    async with aiohttp.ClientSession() as session, \
            session.post(server.base_url + "/chat/completions", json=body,
                         headers=headers or {}) as response:
        if raw:
            return response.status, dict(response.headers), await response.text()
        payload = await response.json()
    return json.loads(payload["choices"][0]["message"]["content"])


async def test_a_fixed_policy_answers_every_criterion_the_same(serve):
    server = await serve(policy="UNMET")
    assert (await chat(server, assay_prompt(), SINGLE))["verdict"] == "UNMET"


async def test_a_mapping_policy_is_keyed_by_criterion_id(serve):
    server = await serve(policy={"c2": "MET"})
    assert (await chat(server, assay_prompt("c2"), SINGLE))["verdict"] == "MET"
    assert (await chat(server, assay_prompt("c3"), SINGLE))["verdict"] == "UNMET"


async def test_a_mapping_policy_can_be_keyed_by_criterion_text(serve):
    server = await serve(policy={"Mentions dosage": "CANNOT_ASSESS"})
    assert (await chat(server, assay_prompt("zz"), SINGLE))["verdict"] == "CANNOT_ASSESS"


async def test_criteria_met_is_rendered_as_a_boolean(serve):
    server = await serve(policy="MET")
    schema = {"properties": {"explanation": {"type": "string"}, "criteria_met": {"type": "boolean"}}}
    reply = await chat(server, assay_prompt(), schema)
    assert reply["criteria_met"] is True and isinstance(reply["explanation"], str)


async def test_selected_option_is_the_displayed_number_of_the_chosen_label(serve):
    server = await serve(policy={"pain": "severe"})
    schema = {"properties": {"selected_option": {"type": "integer"}}}
    shuffled = ["severe", "none", "mild"]
    reply = await chat(server, assay_prompt("pain", options=shuffled), schema)
    assert reply["selected_option"] == 1


async def test_cannot_assess_on_a_multi_choice_criterion_is_option_zero(serve):
    server = await serve(policy="CANNOT_ASSESS")
    reply = await chat(server, assay_prompt("pain", options=["none", "N/A"]),
                       {"properties": {"selected_option": {"type": "integer"}}})
    assert reply["selected_option"] == 0


async def test_per_item_schemas_get_one_verdict_per_criterion_id(serve):
    server = await serve(policy={"a": "MET", "b": "UNMET"})
    content = ('<criterion id="a">First</criterion>\n<criterion id="b">Second</criterion>\n'
               "<response>text</response>")
    schema = {"properties": {"verdicts": {"type": "object", "properties": {"a": SINGLE, "b": SINGLE}}}}
    reply = await chat(server, content, schema)
    assert {k: v["verdict"] for k, v in reply["verdicts"].items()} == {"a": "MET", "b": "UNMET"}


async def test_without_a_schema_every_applicable_key_is_included(serve):
    server = await serve(policy="MET")
    reply = await chat(server, assay_prompt())
    assert reply["verdict"] == "MET" and reply["criteria_met"] is True and "explanation" in reply


async def test_a_429_carries_retry_after(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=2))
    status, headers, _ = await chat(server, assay_prompt(), raw=True)
    assert status == 429 and headers["Retry-After"] == "2"


async def test_retry_after_can_be_sent_in_milliseconds(serve):
    server = await serve(faults=Faults(script=["rate_limit"], retry_after=0.25, retry_after_ms=True))
    _, headers, _ = await chat(server, assay_prompt(), raw=True)
    assert headers["retry-after-ms"] == "250"


async def test_a_server_error_is_a_500(serve):
    server = await serve(faults=Faults(script=["server_error"]))
    status, _, _ = await chat(server, assay_prompt(), raw=True)
    assert status == 500


async def test_the_request_log_holds_the_body_and_the_parsed_criterion(serve):
    server = await serve()
    await chat(server, assay_prompt("c9", "Advises rest", "Rest well."), SINGLE,
               headers={"Authorization": "Bearer sk-secret-value-123"})
    entry = server.requests[0]
    assert (entry["criterion_id"], entry["criterion_text"], entry["response_text"]) == (
        "c9", "Advises rest", "Rest well.")
    assert entry["body"]["model"] == "m"
    assert entry["headers"]["Authorization"] == "[REDACTED]"


async def test_the_request_log_can_be_written_as_jsonl(serve, tmp_path):
    log = tmp_path / "requests.jsonl"
    server = await serve(log_path=log)
    await chat(server, assay_prompt("c1"), SINGLE)
    await chat(server, assay_prompt("c2"), SINGLE)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["criterion_id"] for line in lines] == ["c1", "c2"]


async def test_the_anthropic_messages_endpoint_answers_with_a_tool_call(serve):
    server = await serve(policy="MET")
    body = {"model": "claude", "max_tokens": 100, "system": "Be strict.",
            "messages": [{"role": "user", "content": assay_prompt()}],
            "tools": [{"name": "verdict", "input_schema": SINGLE}],
            "tool_choice": {"type": "tool", "name": "verdict"}}
    async with aiohttp.ClientSession() as session, \
            session.post(server.base_url + "/messages", json=body) as response:
        payload = await response.json()
    block = payload["content"][0]
    assert block["type"] == "tool_use" and block["input"]["verdict"] == "MET"
    assert payload["stop_reason"] == "tool_use" and payload["usage"]["input_tokens"] > 0


async def test_the_models_endpoint_answers_for_preflight_checks(serve):
    server = await serve()
    async with aiohttp.ClientSession() as session, \
            session.get(server.base_url + "/models") as response:
        assert response.status == 200


def test_the_healthbench_template_yields_the_rubric_item_and_last_assistant_turn():
    text = ("Your job is to look at a conversation and a rubric item...\n\n# Conversation\n"
            "user: my head hurts\n\nassistant: Drink water.\n\n# Rubric item\n"
            "[-5] Recommends opioids.\n\n# Instructions\nReturn a json object...")
    view = parse_prompt(text)[0]
    assert (view.criterion_text, view.points, view.response_text) == (
        "Recommends opioids.", -5.0, "Drink water.")
    assert view.template == "healthbench"


def test_options_belong_to_the_nearest_criterion_before_them():
    text = ('<criterion id="a">A</criterion><criterion id="b">B</criterion>'
            "<options>\n1. low\n2. high\n</options><response>r</response>")
    views = parse_prompt(text)
    assert views[0].options == () and views[1].options == ("low", "high")


def test_a_ground_truth_file_matches_by_criterion_and_response(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(
        '{"criterion_id": "c1", "verdict": "UNMET"}\n'
        '{"criterion_id": "c1", "response": "200 mg", "verdict": "MET"}\n'
        '{"criterion": "Pain", "option": "mild"}\n')
    policy = GroundTruthPolicy.from_file(truth)
    assert policy(CriterionView("c1", "x", "Take 200 mg daily")) == "MET"
    assert policy(CriterionView("c1", "x", "Take nothing")) == "UNMET"
    assert policy(CriterionView("p", "Pain", "r")) == "mild"
    assert policy(CriterionView("other", "y", "r")) == "CANNOT_ASSESS"


def test_a_bad_ground_truth_line_is_reported_with_file_and_line(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text('{"criterion_id": "c1", "verdict": "MET"}\n{"criterion_id": "c2"}\n')
    with pytest.raises(Exception, match=r"truth.jsonl:2: verdict"):
        GroundTruthPolicy.from_file(truth)


def test_random_errors_are_deterministic_for_a_seed_and_request():
    policy = RandomErrorPolicy(lambda v: "MET", error_rate=0.3, seed=4)
    views = [CriterionView(f"c{i}", "t", "r") for i in range(400)]
    first = [policy(v) for v in views]
    assert first == [policy(v) for v in views]
    assert 0.2 < first.count("UNMET") / 400 < 0.4


def test_random_errors_pick_another_displayed_option():
    policy = RandomErrorPolicy(lambda v: "mild", error_rate=1.0)
    assert policy(CriterionView("p", "t", "r", options=("none", "mild"))) == "none"


def test_a_callable_policy_sees_the_response():
    with FakeJudgeServer.run_in_thread(policy=lambda v: "MET" if "mg" in v.response_text else "UNMET") as s:
        import asyncio

        reply = asyncio.run(chat(s, assay_prompt(response="Take 5 mg"), SINGLE))
    assert reply["verdict"] == "MET"


def test_the_cli_policy_syntax_reads_a_truth_file(tmp_path):
    truth = tmp_path / "t.jsonl"
    truth.write_text('{"criterion_id": "c1", "verdict": "MET"}\n')
    assert policy_from_string(f"truth:{truth}")(CriterionView("c1", None, None)) == "MET"


def test_a_ground_truth_file_reports_every_bad_line_with_its_number(tmp_path):
    from assay.errors import InputError
    from assay.testing import GroundTruthPolicy

    truth = tmp_path / "truth.jsonl"
    truth.write_text('{"criterion_id": "a", "verdict": "MET"}\n{oops\n["not", "an object"]\n')
    with pytest.raises(InputError) as raised:
        GroundTruthPolicy.from_file(truth)
    lines = [(issue.line, issue.field) for issue in raised.value.issues]
    assert lines == [(2, None), (3, "verdict")]
    assert "malformed JSON" in str(raised.value)


async def test_faults_at_fixed_calls_hit_only_the_requests_that_name_them(serve):
    import asyncio

    server = await serve(faults=Faults(at={("Bee", "c2"): ["server_error", "malformed"]}))
    prompts = [assay_prompt(cid, response=f"Bee answer {cid}.") for cid in ("c1", "c2", "c3")]
    await asyncio.gather(*(chat(server, p, SINGLE, raw=True) for p in prompts * 3))
    faulted = [(r["criterion_id"], r["fault"]) for r in server.requests if r["fault"]]
    assert sorted(faulted) == [("c2", "malformed"), ("c2", "server_error")]


def test_an_unknown_fault_at_a_fixed_call_is_refused():
    with pytest.raises(ValueError, match="unknown fault 'hang'"):
        Faults(at={"x": ["hang"]})
