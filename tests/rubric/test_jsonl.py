"""The JSONL reader streams lines with their numbers and reports bad lines without stopping."""

from __future__ import annotations

import json

import pytest

from assay.errors import InputError, Issue
from assay.io import iter_items, load_items
from assay.io.jsonl import first_record, iter_jsonl, write_jsonl


def test_values_come_with_their_line_numbers_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, {"a": 2})]


def test_a_malformed_line_becomes_an_issue_and_reading_goes_on(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    values = list(iter_jsonl(path))
    assert values[0] == (1, {"a": 1}) and values[2] == (3, {"a": 3})
    line, issue = values[1]
    assert line == 2 and isinstance(issue, Issue)
    assert str(issue).startswith("x.jsonl:2: malformed JSON: ")


def test_a_file_without_trailing_newline_still_yields_its_last_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}')
    assert [v for _, v in iter_jsonl(path)] == [{"a": 1}, {"a": 2}]


def test_first_record_skips_leading_bad_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('nope\n{"a": 1}\n')
    assert first_record(path) == {"a": 1}


def test_write_jsonl_writes_one_value_per_line(tmp_path):
    path = tmp_path / "x.jsonl"
    assert write_jsonl([{"a": "é"}, [1, 2]], path) == 2
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [
        {"a": "é"}, [1, 2]]


def test_ascii_json_matches_pythons_json_dumps(tmp_path):
    path = tmp_path / "x.jsonl"
    write_jsonl([{"b": "I’m", "a": 1}], path, ascii_json=True)
    assert path.read_text() == json.dumps({"b": "I’m", "a": 1}) + "\n"


def _healthbench_file(path, dev_path, n_lines, bad_lines):
    rows = [json.loads(line) for line in dev_path.read_text().splitlines()]
    with path.open("w") as out:
        for n in range(1, n_lines + 1):
            if n in bad_lines:
                out.write(bad_lines[n] + "\n")
                continue
            row = dict(rows[n % len(rows)], prompt_id=f"p{n}")
            out.write(json.dumps(row) + "\n")


def test_bad_lines_in_a_file_of_thousands_are_all_reported_in_one_pass(
        tmp_path, healthbench_dev_path):
    dev_lines = healthbench_dev_path.read_text().splitlines()
    eight = json.loads(dev_lines[0])
    eight["prompt_id"] = "bad-points"
    eight["rubrics"][3]["points"] = "eight"
    bad = {17: json.dumps(eight), 1500: "{not json", 2999: json.dumps({"prompt_id": "x"})}
    path = tmp_path / "big.jsonl"
    _healthbench_file(path, healthbench_dev_path, 3000, bad)
    issues: list[Issue] = []
    count = sum(1 for _ in iter_items(path, issues=issues))
    assert count == 2997
    assert [(i.line, i.field) for i in issues] == [
        (17, "rubrics[3].points"), (1500, None),
        (2999, "prompt"), (2999, "rubrics"), (2999, "example_tags")]


def test_without_an_issues_list_the_first_bad_record_raises(tmp_path, healthbench_dev_path):
    path = tmp_path / "big.jsonl"
    _healthbench_file(path, healthbench_dev_path, 10, {4: "{", 7: "{"})
    seen = []
    with pytest.raises(InputError) as raised:
        for item in iter_items(path):
            seen.append(item.id)
    assert seen == ["p1", "p2", "p3"]
    assert [i.line for i in raised.value.issues] == [4]


def test_load_items_raises_one_error_listing_all_problems(tmp_path, healthbench_dev_path):
    path = tmp_path / "big.jsonl"
    _healthbench_file(path, healthbench_dev_path, 10, {4: "{", 7: "{"})
    with pytest.raises(InputError) as raised:
        load_items(path)
    assert [i.line for i in raised.value.issues] == [4, 7]
    assert "big.jsonl:4: malformed JSON" in str(raised.value)
