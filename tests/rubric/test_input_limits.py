"""Issue 18.10: validation catches what later steps die on: NaN/Infinity weights, deep
nesting, YAML alias bombs, oversized documents and records; a huge response is never sent."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.io import iter_items, read_rubric, validate_file
from assay.limits import MAX_ALIAS_NODES, MAX_NESTING, MAX_RECORD_BYTES


def alias_bomb(levels: int = 9) -> str:
    """The classic "billion laughs": each level repeats the one before nine times."""
    lines = ["a: &a [" + ",".join(["lol"] * 9) + "]"]
    names = "bcdefghijklmnop"
    for previous, name in zip("a" + names, names[:levels - 1]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("weight", [".nan", ".inf", "-.inf"])
def test_nan_and_infinite_weights_are_refused_with_file_line_and_field(tmp_path, weight):
    path = tmp_path / "r.yaml"
    path.write_text(f"id: r\ncriteria:\n  - text: Says hi.\n    weight: 2\n"
                    f"  - text: Says bye.\n    weight: {weight}\n")
    issues = [str(i) for i in validate_file(path)]
    assert len(issues) == 1 and "r.yaml:6: criteria[1].weight:" in issues[0]
    assert "expected a finite number" in issues[0]


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert len(path.read_bytes()) < 400
    issues = [str(i) for i in validate_file(path)]  # measured, never expanded (4.3e8 nodes)
    assert len(issues) == 1 and f"more than {MAX_ALIAS_NODES:,}" in issues[0]
    out = CliRunner().invoke(app, ["convert", str(path), str(tmp_path / "out.json")])
    assert out.exit_code != 0 and not (tmp_path / "out.json").exists()


def test_ordinary_anchors_still_work(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(
        "id: r\ncriteria:\n"
        "  - {id: a, text: How clear?, kind: ordinal, options: &scale [{label: poor, value: 0},"
        " {label: good, value: 1}]}\n"
        "  - {id: b, text: How kind?, kind: ordinal, options: *scale}\n")
    assert [len(c.options) for c in read_rubric(path).criteria] == [2, 2]


def test_nesting_deeper_than_the_limit_is_refused_in_yaml_json_and_jsonl(tmp_path):
    deep = {"id": "q1", "prompt": "Hi?", "response": "Hello.", "metadata": {}}
    node = deep["metadata"]
    for _ in range(MAX_NESTING + 5):
        node["x"] = {}
        node = node["x"]
    for name, text in (("deep.json", json.dumps([deep])),
                       ("deep.yaml", "- " + json.dumps(deep)),
                       ("deep.jsonl", json.dumps(deep) + "\n")):
        path = tmp_path / name
        path.write_text(text)
        issues = [str(i) for i in validate_file(path)]
        assert issues and f"nested more than {MAX_NESTING} levels deep" in issues[0], name


def test_a_jsonl_line_nested_exactly_to_the_limit_is_read_one_level_more_is_not(tmp_path):
    """A line with at most MAX_NESTING brackets is not walked (it cannot nest deeper); the
    bound itself and brackets inside strings change nothing."""
    from assay.io.jsonl import iter_jsonl

    def nested(levels: int) -> dict:
        value: dict = {}
        for _ in range(levels - 1):
            value = {"x": value}
        return value

    brackets = {"text": "[{" * MAX_NESTING, "deep": nested(MAX_NESTING - 1)}
    lines = [nested(MAX_NESTING), nested(MAX_NESTING + 1), brackets, nested(2)]
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = [value for _, value in iter_jsonl(path)]
    assert read[0] == lines[0] and read[2] == lines[2] and read[3] == lines[3]
    assert f"nested more than {MAX_NESTING} levels deep" in str(read[1])


def test_an_oversized_jsonl_record_is_reported_and_the_next_line_read(tmp_path):
    path = tmp_path / "items.jsonl"
    huge = json.dumps({"id": "big", "prompt": "Hi?", "response": "x" * (MAX_RECORD_BYTES + 10)})
    path.write_text(huge + "\n" + json.dumps({"id": "ok", "prompt": "Hi?", "response": "Hi."}) + "\n")
    issues: list = []
    assert [i.id for i in iter_items(path, issues=issues)] == ["ok"]
    assert len(issues) == 1 and "items.jsonl:1" in str(issues[0]) and "over the limit" in str(issues[0])
