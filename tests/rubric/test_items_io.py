"""Assay items in JSONL, JSON and YAML: reading, writing, and errors with line and field."""

from __future__ import annotations

import json

import pytest

from assay.errors import InputError, Issue
from assay.io import detect_format, iter_items, load_items, write_items
from assay.item import Item


@pytest.fixture
def items():
    return [
        Item(id="q1", prompt="Bee sting?", response="Scrape it out.", tags=["theme:first-aid"],
             rubric={"id": "r1", "criteria": [
                 {"id": "scrape", "text": "Says to scrape.", "weight": 5},
                 {"id": "clarity", "text": "How clear?", "kind": "ordinal", "options": [
                     {"label": "unclear", "value": 0}, {"label": "clear", "value": 1},
                     {"label": "n/a", "na": True}]}]}),
        Item(id="q2", messages=[{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Dose of ibuprofen?"}],
             context=[{"text": "Adults: 200-400 mg every 4-6 h.", "source": "leaflet"}],
             reference="200-400 mg", metadata={"split": "dev"}),
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".yaml", ".yml"])
def test_items_round_trip_through_every_syntax(items, tmp_path, suffix):
    path = tmp_path / f"items{suffix}"
    assert write_items(items, path) == 2
    assert load_items(path) == items


def test_item_jsonl_is_detected_as_items_not_healthbench(items, tmp_path):
    path = tmp_path / "items.jsonl"
    write_items(items, path)
    assert detect_format(path).kind == "items"


def test_healthbench_jsonl_is_detected_as_healthbench(healthbench_dev_path):
    assert detect_format(healthbench_dev_path).kind == "healthbench"


def test_written_item_lines_leave_defaults_out(items, tmp_path):
    path = tmp_path / "items.jsonl"
    write_items(items[1:], path)
    line = json.loads(path.read_text())
    assert "rubric" not in line and "tags" not in line and "response" not in line


def test_a_document_with_an_items_key_is_read(tmp_path):
    path = tmp_path / "items.yaml"
    path.write_text("items:\n  - id: q1\n    prompt: Hi\n  - id: q2\n    prompt: Hello\n")
    assert [i.id for i in iter_items(path)] == ["q1", "q2"]


def test_a_single_item_document_is_read(tmp_path):
    path = tmp_path / "item.json"
    path.write_text('{"id": "q1", "prompt": "Hi"}')
    assert [i.prompt for i in iter_items(path)] == ["Hi"]


def test_jsonl_item_errors_name_line_and_field(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "q1", "prompt": "Hi"}\n'
                    '{"id": "q2", "messages": [{"role": "nurse", "content": "x"}]}\n')
    issues: list[Issue] = []
    assert [i.id for i in iter_items(path, issues=issues)] == ["q1"]
    assert [(i.line, i.field) for i in issues] == [(2, "messages[0].role")]
    assert 'unknown role "nurse"' in issues[0].message


def test_yaml_item_errors_point_at_the_line_of_the_bad_field(tmp_path):
    path = tmp_path / "items.yaml"
    path.write_text("- id: q1\n  prompt: Hi\n- id: q2\n  prompt: Hello\n  rubric:\n"
                    "    criteria:\n      - text: Says hello.\n        weight: lots\n")
    with pytest.raises(InputError) as raised:
        load_items(path)
    [issue] = raised.value.issues
    assert (issue.line, issue.field) == (8, "[1].rubric.criteria[0].weight")
    assert issue.message == 'expected a number, got "lots"'


def test_a_missing_field_in_yaml_points_at_the_object_it_is_missing_from(tmp_path):
    path = tmp_path / "items.yaml"
    path.write_text("- id: q1\n  prompt: Hi\n- id: q2\n  response: Hello\n")
    [issue] = _issues(path)
    assert (issue.line, issue.field, issue.message) == (
        3, "[1].messages", "required field is missing")


def test_duplicate_item_ids_are_reported_on_the_second_occurrence(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "q1", "prompt": "a"}\n{"id": "q1", "prompt": "b"}\n')
    [issue] = _issues(path)
    assert str(issue) == f"{path}:2: id: duplicate id 'q1' (first on line 1)"


def test_malformed_yaml_names_the_line(tmp_path):
    path = tmp_path / "items.yaml"
    path.write_text("- id: q1\n  prompt: [unclosed\n")
    [issue] = _issues(path)
    assert issue.line is not None and issue.message.startswith("malformed YAML")


def test_malformed_json_document_names_the_line(tmp_path):
    path = tmp_path / "items.json"
    path.write_text('[\n {"id": "q1",\n  "prompt": }\n]')
    [issue] = _issues(path)
    assert issue.line == 3 and issue.message.startswith("malformed JSON")


def test_items_can_be_written_as_healthbench_json_lines(items, tmp_path):
    path = tmp_path / "hb.jsonl"
    write_items(items[:1], path, format="healthbench")
    row = json.loads(path.read_text())
    assert row["prompt_id"] == "q1" and row["rubrics"][0]["criterion"] == "Says to scrape."
    assert [i.id for i in iter_items(path)] == ["q1"]


def _issues(path):
    issues: list[Issue] = []
    list(iter_items(path, issues=issues))
    return issues
