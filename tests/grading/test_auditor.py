"""RubricsTree's auditor: "Reason: ... [1]" replies, parsed into verdicts."""

from __future__ import annotations

import pytest

from assay.grading.grader import Grader, GradingConfig
from assay.grading.parse import ReplyError, parse_bracket_reply
from assay.item import Item
from assay.rubric import Criterion, Rubric
from assay.verdict import Decision

C = Criterion(id="ldl", text="Mentions the user's LDL-C.")


@pytest.mark.parametrize("text, label", [
    ("Reason: The response correctly identifies the user's high HbA1c. [1]", Decision.MET),
    ("Reason: The response fails to mention the user's elevated LDL-C levels. [0]",
     Decision.UNMET),
    ("[1]", Decision.MET),
    ("Reason: it says [1] at first but on reflection fails. [ 0 ]", Decision.UNMET),
])
def test_the_last_bracketed_digit_decides(text, label):
    verdict = parse_bracket_reply({"output": text}, C, item_id="q")
    assert verdict.decision is label


def test_the_reason_becomes_the_explanation():
    verdict = parse_bracket_reply({"output": "Reason: Misses LDL-C. [0]"}, C, item_id="q")
    assert verdict.explanation == "Misses LDL-C."


@pytest.mark.parametrize("data", [{"output": "Reason: unclear."}, {"verdict": "MET"}, None])
def test_a_reply_without_a_bracketed_verdict_is_an_error_not_a_verdict(data):
    assert isinstance(parse_bracket_reply(data, C, item_id="q"), ReplyError)


def test_the_auditor_template_plans_one_auditor_call_per_binary_criterion():
    grader = Grader(GradingConfig(templates={"binary": "auditor"}))
    item = Item(id="q", prompt="Is my LDL ok?", response="Yes.")
    [call] = grader.plan(item, Rubric(criteria=[C]), judge="j")
    assert call.schema_name == "auditor" and call.bracket
    assert "### [Evaluation Criteria]\nMentions the user's LDL-C." in call.messages[0]["content"]
    [verdict] = grader.interpret(call, {"output": "Reason: ok. [1]"})
    assert verdict.decision is Decision.MET


@pytest.mark.parametrize("text, label", [
    ("1", Decision.MET), ("0", Decision.UNMET), (" **1** ", Decision.MET),
    ("Reason: Names the LDL-C of 168.\n0", Decision.UNMET)])
def test_a_bare_digit_reply_is_read_as_the_paper_prompt_asks(text, label):
    assert parse_bracket_reply({"output": text}, C, item_id="q").decision is label


@pytest.mark.parametrize("text", ["Reason: meets 1 of 2 goals", "10", "Reason: 1 issue."])
def test_a_digit_inside_the_reason_is_not_a_verdict(text):
    assert isinstance(parse_bracket_reply({"output": text}, C, item_id="q"), ReplyError)


def test_the_healthbench_template_keeps_the_health_memory_in_every_prompt():
    grader = Grader(GradingConfig(templates={"binary": "healthbench"}))
    item = Item(id="q", prompt="Is my LDL ok?", response="Yes.",
                health_memory={"labs": [{"name": "LDL-C", "value": 162, "unit": "mg/dL"}]})
    rubric = Rubric(criteria=[C, Criterion(id="er", text="Refers emergencies.")])
    calls = grader.plan(item, rubric, judge="j")
    assert len(calls) == 2
    assert all("<health_memory>\nLabs:\n- LDL-C: 162 mg/dL\n</health_memory>"
               in call.messages[-1]["content"] for call in calls)
