"""Prompt caching: every built-in per-criterion template puts what an item's calls share
(instructions, conversation, context, response) first, as one byte-identical prefix, and the
criterion after it; each planned call says how long that prefix is."""

from __future__ import annotations

import pytest

from assay.grading.grader import Grader, GradingConfig
from assay.rubric import Criterion, Rubric


def calls_by_template(item, rubric, templates):
    grouped: dict[str, list] = {}
    for call in Grader(GradingConfig(templates=templates)).plan(item, rubric, "j"):
        grouped.setdefault(call.template_version, []).append(call)
    return grouped


def assert_one_shared_prefix(calls, item):
    prefixes = {(repr(c.messages[:-1]), c.messages[-1]["content"][:c.cache_prefix]) for c in calls}
    assert len(prefixes) == 1  # byte-identical: system message and head of the user message
    [(_, head)] = prefixes
    assert item.response in head and item.messages[0].content in head
    for call in calls:
        [criterion] = call.criteria
        assert criterion.text not in head  # the criterion comes after the shared part
        assert criterion.text in call.messages[-1]["content"][call.cache_prefix:]


def test_the_assay_templates_share_one_prefix_per_template_with_the_criterion_after_it(item, rubric):
    grouped = calls_by_template(item, rubric, {})
    assert len(grouped) == 2  # binary and multi_choice
    for calls in grouped.values():
        assert len(calls) == 2 and all(c.cache_prefix > 0 for c in calls)
        assert_one_shared_prefix(calls, item)
        assert "<context>" in calls[0].messages[-1]["content"][:calls[0].cache_prefix]


@pytest.mark.parametrize("template", ["healthbench", "auditor"])
def test_the_healthbench_and_auditor_templates_share_the_conversation_before_the_criterion(
        item, binary, penalty, template):
    rubric = Rubric(id="r", criteria=[binary, penalty])
    slots = {"all": "healthbench"} if template == "healthbench" else {"binary": "auditor"}
    [calls] = calls_by_template(item, rubric, slots).values()
    assert all(c.cache_prefix > 0 for c in calls)
    assert_one_shared_prefix(calls, item)


def test_per_item_calls_mark_no_prefix(item, rubric):
    [call] = Grader(GradingConfig(mode="per-item")).plan(item, rubric, "j")
    assert call.cache_prefix == 0


def test_a_conversation_quoting_the_rubric_item_placeholder_marks_nothing(item):
    """simple-evals fills <<rubric_item>> after the conversation, also inside it: then the
    message does not start with the head, and nothing is marked (the prompt is unchanged)."""
    odd = item.model_copy(update={"response": "See <<rubric_item>> above."})
    rubric = Rubric(id="r", criteria=[Criterion(id="a", text="Says hi.", weight=1)])
    [call] = Grader(GradingConfig(templates={"all": "healthbench"})).plan(odd, rubric, "j")
    assert call.cache_prefix == 0
