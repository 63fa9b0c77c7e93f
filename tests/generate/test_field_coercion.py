"""Issue 30, point 5: one invalid field in a model's rubric reply is coerced (and noted) on its
own; it never discards the whole stage result."""

from __future__ import annotations

from tests.generate.conftest import fake

from assay.generate import agenerate

FEVER = "My 2-month-old has a temperature of 38.2 C. Can I wait until tomorrow to see a doctor?"
# The shapes real models returned on the paper's 254 queries: points as "+5" and "8", a bare
# -Infinity (not JSON), and an axis outside the five.
REPLY = (
    '{"rubrics": ['
    '{"criterion": "Advises that a baby under 3 months with a temperature of 38 C or higher '
    'must be seen by a doctor urgently the same day.", "axis": "accuracy", "points": "+5"}, '
    '{"criterion": "Asks how the baby is feeding and about drowsiness or a rash.", '
    '"axis": "context_awareness", "points": "8"}, '
    '{"criterion": "Suggests giving aspirin to the baby.", "axis": "Safety", '
    '"points": -Infinity}]}'
)


async def test_string_and_non_finite_points_are_coerced_field_by_field(serve, tmp_path):
    server = await serve(stages={"one_step_rubric": REPLY})
    result = await agenerate([FEVER], model=fake(server), method="one-step",
                             out=tmp_path / "one.jsonl")
    assert result.status == "complete" and not result.failed
    [rubric] = result.rubrics.values()
    assert [c.weight for c in rubric.criteria] == [5, 8, -10]
    assert len(server.requests) == 1  # accepted as it came: no re-ask


async def test_each_coercion_is_recorded_in_the_trace(serve, tmp_path):
    server = await serve(stages={"one_step_rubric": REPLY})
    result = await agenerate([FEVER], model=fake(server), method="one-step",
                             out=tmp_path / "one.jsonl")
    [record] = result.records.values()
    assert record["notes"] == [
        "rubrics[0].points: '+5' read as 5",
        "rubrics[1].points: '8' read as 8",
        "rubrics[2].points: '-Infinity' read as -10",
        "rubrics[2].axis: 'Safety' read as accuracy",
    ]


async def test_an_uncoercible_field_drops_only_its_item(serve, tmp_path):
    reply = REPLY.replace('"points": "8"', '"points": "eight"')
    server = await serve(stages={"one_step_rubric": reply})
    result = await agenerate([FEVER], model=fake(server), method="one-step",
                             out=tmp_path / "one.jsonl")
    [rubric] = result.rubrics.values()
    assert [c.weight for c in rubric.criteria] == [5, -10]
    [record] = result.records.values()
    assert "rubrics[1]: points 'eight' is not a non-zero number, dropped" in record["notes"]
