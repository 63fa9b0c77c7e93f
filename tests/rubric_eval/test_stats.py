"""``assay rubric stats``: seed 000 §5.2's table, reproduced by hand on a small file."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import app
from assay.rubric_eval import read_rubric_set, rubric_stats

ROWS = [
    {"index": 0, "rubrics": [{"criterion": "a", "axis": "accuracy", "points": 10},
                             {"criterion": "b", "axis": "completeness", "points": 5},
                             {"criterion": "c", "axis": "accuracy", "points": -8}]},
    {"index": 1, "original_query": "User: q", "generated_rubrics": [
        {"criterion": "d", "axis": "context_awareness", "points": 7},
        {"criterion": "e", "axis": "safety", "points": -3},
        {"criterion": "f", "axis": "accuracy", "points": 0},
        {"criterion": "g", "axis": "completeness", "points": 4},
        {"criterion": "h", "axis": "completeness", "points": -2}]},
]
# By hand: items 3 + 5 = 8; per query 3 / 4.0 / 5; negatives c, e, h = 3; zero-point f = 1;
# Σ positive: q0 10 + 5 = 15, q1 7 + 4 = 11 → mean 13.0;
# Σ |points|: q0 10 + 5 + 8 = 23, q1 7 + 3 + 0 + 4 + 2 = 16 → mean 19.5;
# axes: accuracy 3, completeness 3, context_awareness 1, safety 1 (off-schema).


def write(tmp_path):
    path = tmp_path / "rubrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_the_statistics_match_the_hand_computed_table(tmp_path):
    s = rubric_stats(read_rubric_set(write(tmp_path)))
    assert (s.queries, s.items, s.per_query_min, s.per_query_mean, s.per_query_max) == (
        2, 8, 3, 4.0, 5)
    assert (s.negatives, s.zero_points, s.mean_positive_points, s.mean_abs_points) == (
        3, 1, 13.0, 19.5)
    assert s.axis_counts == {"accuracy": 3, "completeness": 3, "context_awareness": 1,
                             "safety": 1}
    assert s.off_schema_axes == ["safety"]


def test_the_command_prints_the_table(tmp_path):
    result = CliRunner().invoke(app, ["rubric", "stats", str(write(tmp_path))],
                                env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = result.output
    for row in ("items total │ 8", "3 / 4.00 / 5", "negative items │ 3", "13.0", "19.5",
                "axis safety (off-schema) │ 1"):
        assert row in " ".join(out.split()) or row in out, row


def test_the_command_reports_a_bad_file_by_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"index": 0, "rubrics": [{"criterion": "a", "points": "x"}]}\n')
    result = CliRunner().invoke(app, ["rubric", "stats", str(path)])
    assert result.exit_code == 1
    assert f"{path}:1: rubrics[0].points:" in result.output
