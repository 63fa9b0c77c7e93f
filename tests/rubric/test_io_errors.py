"""Pydantic errors become short messages at readable field paths."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assay.io.errors import describe, field_path, issues_from
from assay.rubric import Rubric


def test_field_paths_use_dots_for_names_and_brackets_for_indices():
    assert field_path(("rubrics", 3, "options", 0, "value")) == "rubrics[3].options[0].value"


def test_a_top_level_list_index_starts_the_path():
    assert field_path((2, "requirement")) == "[2].requirement"


@pytest.mark.parametrize(("error", "message"), [
    ({"type": "missing", "loc": ("a",), "msg": "", "input": {}}, "required field is missing"),
    ({"type": "float_parsing", "loc": ("w",), "msg": "", "input": "eight"},
     'expected a number, got "eight"'),
    ({"type": "string_type", "loc": ("t",), "msg": "", "input": 5}, "expected a string, got 5"),
    ({"type": "list_type", "loc": ("t",), "msg": "", "input": "x"}, 'expected a list, got "x"'),
    ({"type": "extra_forbidden", "loc": ("x",), "msg": "", "input": 1}, "unknown field"),
    ({"type": "value_error", "loc": (), "msg": "Value error, bad thing", "input": 1}, "bad thing"),
])
def test_pydantic_error_types_get_plain_messages(error, message):
    assert describe(error) == message


def test_long_bad_values_are_shortened():
    error = {"type": "string_type", "loc": ("t",), "msg": "", "input": list(range(100))}
    assert describe(error).endswith("…") and len(describe(error)) < 90


def test_model_level_errors_point_at_the_field_the_validator_names():
    with pytest.raises(ValidationError) as raised:
        Rubric(criteria=[{"id": "a", "text": "x", "weight": 0}])
    [issue] = issues_from(raised.value, source="r.yaml", line=4)
    assert str(issue) == (
        "r.yaml:4: criteria[0].weight: weight is 0: a criterion must count for or against the answer")


def test_a_prefix_and_a_renamer_translate_locations_into_the_files_vocabulary():
    with pytest.raises(ValidationError) as raised:
        Rubric(criteria=[{"text": "x", "weight": "heavy"}])
    [issue] = issues_from(raised.value, source=None, prefix=("doc",),
                          rename=lambda loc: tuple("points" if p == "weight" else p for p in loc))
    assert issue.field == "doc.criteria[0].points"
