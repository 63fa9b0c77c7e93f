"""`assay meta-eval` over the meta-eval fixture (data/healthbench_meta_fixture.jsonl).

Hand-worked values (see test_healthbench_meta.py for the working), grader labels T T F T on
rows 1-4: pairwise_model_f1_balanced = 0.5; cluster:B balanced F1 = (0.8 + 2/3)/2;
cluster:A has no negative grader label, so its balanced F1 is undefined; the physicians'
balanced F1 has mean ((0.8 + 2/3)/2 + 0.5)/2 (p3 undefined).
A grader that says T on every row: precision_pos = (2 + 0 + 1 + 2)/9 = 5/9 and no negative
label, so its balanced F1 is undefined.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import app
from assay.io import load_items
from assay.metrics.healthbench_meta import read_meta_eval
from assay.testing.policies import PerCriterionPolicy
from assay.testing.server import FakeJudgeServer

META = Path(__file__).parent / "data" / "healthbench_meta_fixture.jsonl"
GRADER = [True, True, False, True]
PHYSICIAN_MEAN = ((0.8 + 2 / 3) / 2 + 0.5) / 2


def _grades(path, labels, judge="grader", rows=None):
    rows = rows or read_meta_eval(META)
    path.write_text("".join(
        json.dumps({"item_id": r.item_id, "criterion_id": r.criterion_id,
                    "verdict": "MET" if g else "UNMET", "judge": judge}) + "\n"
        for r, g in zip(rows, labels)))
    return path


def _run(*args):
    return CliRunner().invoke(app, ["meta-eval", *map(str, args)])


def test_meta_eval_prints_tables_and_writes_the_hand_worked_pairwise_f1(tmp_path):
    grades = _grades(tmp_path / "grades.jsonl", GRADER)
    result = _run(META, "--grades", grades, "--json", tmp_path / "out.json")
    assert result.exit_code == 0, result.output
    assert "HealthBench meta-eval: grader vs physicians" in result.output
    assert "cluster:B" in result.output
    data = json.loads((tmp_path / "out.json").read_text())
    report = data["reports"]["grader"]
    assert data["n_rows"] == 4 and report["n_rows_without_verdict"] == 0
    assert abs(report["headline"]["value"] - 0.5) < 1e-12
    balanced_b = report["model"]["cluster:B: pairwise_model_f1_balanced"]["value"]
    assert abs(balanced_b - (0.8 + 2 / 3) / 2) < 1e-12
    physicians = report["physician_mean"]["pairwise_physician_f1_balanced"]["value"]
    assert abs(physicians - PHYSICIAN_MEAN) < 1e-12


def test_an_undefined_category_f1_is_null_with_its_reason_in_the_json(tmp_path):
    grades = _grades(tmp_path / "grades.jsonl", GRADER)
    assert _run(META, "--grades", grades, "--json", tmp_path / "out.json").exit_code == 0
    metric = json.loads((tmp_path / "out.json").read_text())["reports"]["grader"]["model"][
        "cluster:A: pairwise_model_f1_balanced"]
    assert metric["value"] is None
    assert metric["reason"] == "no comparison where the model said neg"


def test_each_judge_in_the_grades_gets_its_own_report(tmp_path):
    grades = tmp_path / "grades.jsonl"
    _grades(tmp_path / "a.jsonl", GRADER, judge="a")
    _grades(tmp_path / "b.jsonl", [True] * 4, judge="b")
    grades.write_text((tmp_path / "a.jsonl").read_text() + (tmp_path / "b.jsonl").read_text())
    assert _run(META, "--grades", grades, "--json", tmp_path / "out.json").exit_code == 0
    reports = json.loads((tmp_path / "out.json").read_text())["reports"]
    assert abs(reports["a"]["headline"]["value"] - 0.5) < 1e-12
    assert reports["b"]["model"]["pairwise_model_precision_pos"]["value"] == 5 / 9
    assert reports["b"]["headline"]["value"] is None


def test_to_items_writes_one_item_per_completion_with_the_rows_ids(tmp_path):
    result = _run(META, "--to-items", tmp_path / "items.jsonl")
    assert result.exit_code == 0, result.output
    items = load_items(tmp_path / "items.jsonl")
    rows = read_meta_eval(META)
    assert [i.id for i in items] == [rows[0].item_id, rows[2].item_id]
    assert [c.id for c in items[0].rubric.criteria] == [rows[0].criterion_id, rows[1].criterion_id]
    assert items[1].response == rows[2].completion
    assert items[1].messages[0].content == rows[2].prompt[0]["content"]


def test_grading_the_items_with_assay_grade_then_meta_eval_gives_the_hand_worked_value(tmp_path):
    """End to end: --to-items, `assay grade` (HealthBench template) against the fake judge
    answering the grader labels by criterion text, then meta-eval of the run directory."""
    rows = read_meta_eval(META)
    answers = {r.rubric: "MET" if g else "UNMET" for r, g in zip(rows, GRADER)}
    assert _run(META, "--to-items", tmp_path / "items.jsonl").exit_code == 0
    runner = CliRunner()
    policy = PerCriterionPolicy(answers, default="CANNOT_ASSESS")
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        graded = runner.invoke(app, [
            "grade", str(tmp_path / "items.jsonl"), "--template", "healthbench",
            "--judge", f"openai-compatible:fake@{server.base_url}",
            "--run-dir", str(tmp_path / "run"), "-q"])
    assert graded.exit_code == 0, graded.output
    result = _run(META, "--grades", tmp_path / "run", "--json", tmp_path / "out.json")
    assert result.exit_code == 0, result.output
    [report] = json.loads((tmp_path / "out.json").read_text())["reports"].values()
    assert report["n_rows_without_verdict"] == 0
    assert abs(report["headline"]["value"] - 0.5) < 1e-12


def test_a_bad_meta_eval_row_is_reported_with_file_line_and_field(tmp_path):
    meta = tmp_path / "meta.jsonl"
    bad = json.loads(META.read_text().splitlines()[1])
    bad["prompt"][0]["role"] = "robot"
    meta.write_text(META.read_text().splitlines()[0] + "\n" + json.dumps(bad) + "\n")
    result = _run(meta, "--to-items", tmp_path / "items.jsonl")
    assert result.exit_code == 1
    assert "meta.jsonl:2: prompt" in result.output and "'robot'" in result.output
    assert not (tmp_path / "items.jsonl").exists()


def test_a_bad_grade_line_is_reported_with_file_line_and_field(tmp_path):
    grades = _grades(tmp_path / "grades.jsonl", GRADER)
    lines = grades.read_text().splitlines()
    lines[2] = lines[2].replace('"UNMET"', '"NO"')
    grades.write_text("\n".join(lines) + "\n")
    result = _run(META, "--grades", grades)
    assert result.exit_code == 1
    assert "grades.jsonl:3: verdict" in result.output


def test_grades_that_match_no_row_are_an_error_that_points_to_to_items(tmp_path):
    grades = tmp_path / "grades.jsonl"
    grades.write_text('{"item_id": "q1", "criterion_id": "c1", "verdict": "MET", "judge": "g"}\n')
    result = _run(META, "--grades", grades)
    assert result.exit_code == 1
    assert "item_id/criterion_id" in result.output and "--to-items" in result.output


def test_meta_eval_needs_grades_or_to_items():
    result = _run(META)
    assert result.exit_code == 1 and "--grades" in result.output
