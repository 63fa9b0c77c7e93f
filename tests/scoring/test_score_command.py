"""``assay score``: stored verdicts scored from the command line, checked by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.rubric import derive_criterion_id

RUBRIC_YAML = """\
id: dose
criteria:
  - {id: a, text: States the dose., weight: 6}
  - {id: b, text: Advises seeing a doctor., weight: 4}
  - {id: p, text: Recommends an unsafe dose., weight: -5}
"""


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def verdict(item, criterion, label, judge="default"):
    return {"item_id": item, "criterion_id": criterion, "verdict": label, "judge": judge}


@pytest.fixture
def rubric_file(tmp_path):
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC_YAML)
    return path


@pytest.fixture
def verdict_file(tmp_path):
    return write_jsonl(tmp_path / "verdicts.jsonl", [
        verdict("q1", "a", "MET"), verdict("q1", "b", "UNMET"), verdict("q1", "p", "MET"),
        verdict("q2", "a", "MET"), verdict("q2", "b", "MET"), verdict("q2", "p", "UNMET"),
    ])


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize(
    ("formula", "q1", "q2"),
    [
        ("autorubric", 0.1, 1.0),        # (6 - 5) / 10 ; 10 / 10
        ("raw", 1.0, 10.0),              # 6 - 5 ; 6 + 4
        ("healthbench", 0.1, 1.0),
        ("pass-rate", 6 / 15, 1.0),      # a passes (6), b fails, p met fails: 6 / 15
        ("reward", 1 / 3, 1.0),          # (1 - 1 + 1) / (2 + 1) ; (2 + 1) / 3
    ],
)
def test_each_formula_matches_the_hand_computation(tmp_path, rubric_file, verdict_file,
                                                   formula, q1, q2):
    out = tmp_path / "scores.json"
    result = run("score", verdict_file, "--rubric", rubric_file, "--formula", formula,
                 "--json", out)
    assert result.exit_code == 0, result.output
    scores = {row["item_id"]: row["score"] for row in json.loads(out.read_text())["items"]}
    assert scores["q1"] == pytest.approx(q1)
    assert scores["q2"] == pytest.approx(q2)


def test_abstention_strategy_is_applied(tmp_path, rubric_file):
    verdicts = write_jsonl(tmp_path / "v.jsonl", [
        verdict("q1", "a", "CANNOT_ASSESS"), verdict("q1", "b", "MET"), verdict("q1", "p", "UNMET"),
    ])
    out = tmp_path / "s.json"
    assert run("score", verdicts, "-r", rubric_file, "--abstain", "partial:0.5",
               "--json", out).exit_code == 0
    # (0.5 * 6 + 4) / 10
    assert json.loads(out.read_text())["items"][0]["score"] == pytest.approx(0.7)


def test_healthbench_formula_reports_the_official_clipped_mean(tmp_path, healthbench_dev_path):
    rows = [json.loads(line) for line in healthbench_dev_path.read_text().splitlines()[:2]]
    lines = []
    # example 1: every positive criterion met, no penalty -> 1.0
    for r in rows[0]["rubrics"]:
        lines.append(verdict(rows[0]["prompt_id"], derive_criterion_id(r["criterion"]),
                             "MET" if r["points"] > 0 else "UNMET"))
    # example 2: only the first criterion (+8) met -> 8 / 122
    for i, r in enumerate(rows[1]["rubrics"]):
        lines.append(verdict(rows[1]["prompt_id"], derive_criterion_id(r["criterion"]),
                             "MET" if i == 0 else "UNMET"))
    verdicts = write_jsonl(tmp_path / "v.jsonl", lines)
    out = tmp_path / "s.json"
    result = run("score", verdicts, "--rubric", healthbench_dev_path, "--formula", "healthbench",
                 "--json", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())["summary"]["healthbench"]
    assert report["overall"] == pytest.approx((1.0 + 8 / 122) / 2)
    assert report["n"] == 2
    assert report["metrics"]["theme:hedging"] == 1.0
    assert "HealthBench" in result.output


def test_bad_verdict_lines_are_all_reported_with_file_line_and_field(tmp_path, rubric_file):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(verdict("q1", "a", "MET")) + "\n"
        + "{not json\n"
        + json.dumps(verdict("q1", "b", "MAYBE")) + "\n"
    )
    result = run("score", path, "--rubric", rubric_file)
    assert result.exit_code == 1
    assert "bad.jsonl:2: malformed JSON" in result.output
    assert "bad.jsonl:3: verdict:" in result.output


def test_two_judges_on_one_criterion_need_a_choice(tmp_path, rubric_file):
    path = write_jsonl(tmp_path / "v.jsonl", [
        verdict("q1", "a", "MET", judge="x"), verdict("q1", "a", "UNMET", judge="y"),
        verdict("q1", "b", "MET", judge="x"), verdict("q1", "b", "MET", judge="y"),
        verdict("q1", "p", "UNMET", judge="x"), verdict("q1", "p", "UNMET", judge="y"),
    ])
    assert "more than one verdict" in run("score", path, "-r", rubric_file).output
    out = tmp_path / "s.json"
    assert run("score", path, "-r", rubric_file, "--judge", "y", "--json", out).exit_code == 0
    assert json.loads(out.read_text())["items"][0]["score"] == 0.4


def test_verdict_for_an_unknown_criterion_is_an_error(tmp_path, rubric_file):
    path = write_jsonl(tmp_path / "v.jsonl", [verdict("q1", "zzz", "MET")])
    result = run("score", path, "-r", rubric_file)
    assert result.exit_code == 1
    assert "criteria not in rubric 'dose': zzz" in result.output


def test_unknown_formula_is_a_clear_error(verdict_file, rubric_file):
    result = run("score", verdict_file, "-r", rubric_file, "--formula", "holistic")
    assert result.exit_code == 1
    assert "--formula: unknown formula 'holistic'" in result.output


def test_unknown_abstention_strategy_names_the_option(verdict_file, rubric_file):
    result = run("score", verdict_file, "-r", rubric_file, "--abstain", "ignore")
    assert result.exit_code == 1
    assert "--abstain: unknown abstention strategy 'ignore'" in result.output


def test_an_item_without_a_verdict_on_a_criterion_is_unscored_and_named(tmp_path, rubric_file):
    """A missing verdict is a criterion not graded (a failed or skipped call), never an
    abstention: q1 lacks the penalty's verdict, so it has no score, the mean is q2's alone and
    the count of such items is said before the figures."""
    path = write_jsonl(tmp_path / "v.jsonl", [
        verdict("q1", "a", "MET"), verdict("q1", "b", "MET"),
        verdict("q2", "a", "MET"), verdict("q2", "b", "UNMET"), verdict("q2", "p", "UNMET"),
    ])
    out = tmp_path / "s.json"
    result = run("score", path, "-r", rubric_file, "--json", out)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [(i["item_id"], i["score"], i["n_ungraded"]) for i in data["items"]] == [
        ("q1", None, 1), ("q2", 0.6, 0)]
    assert data["summary"]["mean"] == 0.6
    assert (data["summary"]["n_unscored"], data["summary"]["n_ungraded"]) == (1, 1)
    assert "a criterion not graded" in result.output and "1 item (q1)" in result.output
