"""``assay validate``, ``assay convert`` and ``assay schema`` from the command line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import app
from assay.io import load_items, read_rubric

runner = CliRunner()


def test_validate_checks_several_files_and_prints_a_summary(tmp_path, healthbench_dev_path):
    bad = tmp_path / "r.json"
    bad.write_text('{"id": "r", "criteria": [{"text": "", "weight": 1}]}')
    result = runner.invoke(app, ["validate", str(healthbench_dev_path), str(bad)])
    assert result.exit_code == 1
    assert f"error {bad}:1: criteria[0].text: must not be empty" in result.output
    assert "2 files checked: 1 valid, 1 with problems, 1 issue" in result.output


def test_validate_can_cap_the_issues_printed_per_file(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("{\n" * 5)
    result = runner.invoke(app, ["validate", "--max-issues", "2", str(path)])
    assert result.exit_code == 1
    assert result.output.count("malformed JSON") == 2
    assert "and 3 more" in result.output and "5 issues" in result.output


def test_convert_healthbench_to_items_and_back_is_lossless(tmp_path, healthbench_dev_path):
    items = tmp_path / "items.yaml"
    back = tmp_path / "back.jsonl"
    assert runner.invoke(app, ["convert", str(healthbench_dev_path), str(items)]).exit_code == 0
    assert len(load_items(items)) == 60
    result = runner.invoke(app, ["convert", str(items), str(back), "--to", "healthbench"])
    assert result.exit_code == 0, result.output
    assert back.read_bytes() == healthbench_dev_path.read_bytes()


def test_convert_autorubric_list_to_an_assay_rubric_and_back(tmp_path):
    source = tmp_path / "list.json"
    source.write_text(json.dumps([{"name": "dose", "weight": 4, "requirement": "Gives a dose."}]))
    rubric_path = tmp_path / "rubric.yaml"
    assert runner.invoke(app, ["convert", str(source), str(rubric_path)]).exit_code == 0
    assert "criteria:" in rubric_path.read_text()
    again = tmp_path / "again.json"
    result = runner.invoke(app, ["convert", str(rubric_path), str(again), "--to", "autorubric"])
    assert result.exit_code == 0
    assert json.loads(again.read_text()) == [
        {"name": "dose", "weight": 4.0, "requirement": "Gives a dose."}]
    assert read_rubric(again).criteria[0].id == "dose"


def test_convert_writes_nothing_when_the_input_has_errors(tmp_path):
    source = tmp_path / "items.jsonl"
    source.write_text('{"id": "q1", "prompt": "Hi"}\n{"id": "q2"}\n')
    target = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["convert", str(source), str(target)])
    assert result.exit_code == 1
    assert f"{source}:2: messages: required field is missing" in result.output
    assert not target.exists() and list(tmp_path.iterdir()) == [source]


def test_convert_refuses_impossible_conversions(tmp_path, healthbench_dev_path):
    result = runner.invoke(app, ["convert", str(healthbench_dev_path),
                                 str(tmp_path / "r.yaml"), "--to", "rubric"])
    assert result.exit_code == 1 and "cannot convert a healthbench file to 'rubric'" in result.output


def test_schema_prints_the_rubric_json_schema_by_default():
    result = runner.invoke(app, ["schema"])
    schema = json.loads(result.output)
    assert schema["title"] == "Rubric" and schema["required"] == ["criteria"]


def test_schema_of_an_item_lists_the_allowed_roles():
    schema = json.loads(runner.invoke(app, ["schema", "item"]).output)
    assert schema["$defs"]["Message"]["properties"]["role"]["enum"] == [
        "system", "developer", "user", "assistant", "tool"]


def test_schema_covers_verdicts_taxonomies_and_healthbench_lines():
    titles = [json.loads(runner.invoke(app, ["schema", name]).output)["title"]
              for name in ("verdict", "taxonomy", "healthbench")]
    assert titles == ["Verdict", "Taxonomy", "HealthBenchExample"]


def test_schema_rejects_an_unknown_name():
    result = runner.invoke(app, ["schema", "banana"])
    assert result.exit_code == 2 and "unknown schema 'banana'" in result.output


def test_validate_checks_verdict_jsonl_files(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    path.write_text('{"item_id": "q1", "criterion_id": "a", "verdict": "MET"}\n'
                    '{"item_id": "q1", "criterion_id": "b", "verdict": "MAYBE"}\n')
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert f"error {path}:2: verdict: unknown verdict \"MAYBE\"" in result.output
    assert "1 verdict (jsonl) valid" in result.output
