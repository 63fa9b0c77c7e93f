"""Refinement: the edit plan's rules, and the editor applying only the plan (§7)."""

from __future__ import annotations

import json

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rubric_eval import prompts
from assay.rubric_eval.refine import normalise_constraints, normalise_plan, refine_one
from assay.rubric_eval.released import Query, RubricEntry


def step(action, instruction, priority=None):
    out = {"action": action, "instruction": instruction}
    if priority is not None:
        out["priority"] = priority
    return out


def test_steps_are_ordered_high_medium_low_keeping_the_order_within_a_priority():
    steps, dropped = normalise_plan([step("ADD", "a", "LOW"), step("MODIFY", "b", "HIGH"),
                                     step("ADD", "c"), step("REMOVE", "d", "high"),
                                     step("ADD", "e", "urgent")])
    assert [(s.priority, s.action, s.instruction) for s in steps] == [
        ("HIGH", "MODIFY", "b"), ("HIGH", "REMOVE", "d"), ("MEDIUM", "ADD", "c"),
        ("MEDIUM", "ADD", "e"), ("LOW", "ADD", "a")]
    assert dropped == []


def test_unknown_actions_empty_instructions_and_duplicates_are_dropped_with_a_reason():
    steps, dropped = normalise_plan([step("ADD", "Mention fluids."), step("rewrite", "x"),
                                     step("REMOVE", "  "), "ADD this", step("add", "mention  FLUIDS.")])
    assert [s.instruction for s in steps] == ["Mention fluids."]
    assert dropped == ["unknown action 'REWRITE'", "step 3 has no instruction",
                       "step 4 is not an object", "duplicate step 5"]


def test_the_same_instruction_under_another_action_is_kept():
    steps, _ = normalise_plan([step("ADD", "fluids"), step("REMOVE", "fluids")])
    assert [s.action for s in steps] == ["ADD", "REMOVE"]


def test_the_cap_keeps_the_highest_priority_steps():
    steps, dropped = normalise_plan([step("ADD", "low", "LOW"), step("ADD", "high", "HIGH"),
                                     step("ADD", "mid")], max_steps=2)
    assert [s.instruction for s in steps] == ["high", "mid"]
    assert dropped == ["over the cap of 2 steps: 'low'"]


def test_constraints_are_non_empty_unique_strings():
    assert normalise_constraints(["No diagnosis.", " ", "No diagnosis.", {"x": 1}, 3]) == [
        "No diagnosis.", "3"]
    assert normalise_constraints("not a list") == []


QUERY = Query(index="0", question="User: nausea?", gold=[
    RubricEntry(criterion="Advises urgent care", axis="accuracy", points=9)])


async def test_an_empty_plan_leaves_the_response_unchanged_without_a_rewrite(serve, tmp_path):
    server = await serve(stages={prompts.CRITIQUE: {"edit_plan": [step("FORMAT", "bullets")],
                                                    "constraints": []}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, store)
        record = await refine_one(caller, caller, QUERY, "Drink tea.", QUERY.gold,
                                  condition="oracle")
    assert (record["refined"], record["rewritten"]) == ("Drink tea.", False)
    assert record["dropped_steps"] == ["unknown action 'FORMAT'"]
    assert [r["stage"] for r in server.requests] == [prompts.CRITIQUE]


async def test_the_editor_gets_only_the_normalised_plan(serve, tmp_path):
    server = await serve(stages={
        prompts.CRITIQUE: {"edit_plan": [step("ADD", "Advise urgent care.", "HIGH"),
                                         step("FORMAT", "bullets")],
                           "constraints": ["No diagnosis."]},
        prompts.REWRITE: {"revised_response": " Drink tea. Seek urgent care today. "}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, store)
        record = await refine_one(caller, caller, QUERY, "Drink tea.", None,
                                  condition="self-critique")
    critique, rewrite = server.requests
    user = critique["body"]["messages"][1]["content"]
    assert critique["body"]["messages"][0]["content"] == prompts.CRITIQUE_SYSTEM
    assert user.endswith("Please carefully review the draft response above.\nIdentify its main "
                         "weaknesses, missing or incorrect information,\nand propose concrete, "
                         "actionable suggestions for improvement.")
    text = rewrite["body"]["messages"][0]["content"]
    plan = [{"priority": "HIGH", "action": "ADD", "instruction": "Advise urgent care."}]
    assert "Edit plan:\n" + json.dumps(plan, indent=2) + "\n" in text
    assert "FORMAT" not in text
    assert record["refined"] == "Drink tea. Seek urgent care today." and record["rewritten"]


def test_the_critique_with_a_rubric_carries_it_as_json():
    text = prompts.critique_user("User: q", "draft", QUERY.gold)
    assert text.endswith('Rubric:\n{\n  "rubrics": [\n    {\n      "criterion": "Advises urgent '
                         'care",\n      "axis": "accuracy",\n      "points": 9\n    }\n  ]\n}')
