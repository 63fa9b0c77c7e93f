"""Issue 40 §4: `assay agreement` and the report say, in a line before any figure, how many
labels name items or criteria that are not in the run, and list the first few."""

from __future__ import annotations

import json

from tests.metrics.test_cli import _verdicts, _write
from tests.report.conftest import AGREE, grade_run
from typer.testing import CliRunner

from assay.cli import app

STRAYS = [{"item_id": "q90", "criterion_id": "x", "verdict": "MET", "judge": "dr"},
          {"item_id": "q91", "criterion_id": "y", "verdict": "MET", "judge": "dr"},
          {"item_id": "q0", "criterion_id": "z", "verdict": "UNMET", "judge": "dr"}]


def test_agreement_says_how_many_labels_are_off_the_run_before_any_figure(tmp_path):
    labels = _write(tmp_path / "labels.jsonl", _verdicts("dr") + STRAYS)
    judged = _write(tmp_path / "v.jsonl", _verdicts("gpt", flips={(0, "x")}))
    result = CliRunner().invoke(app, ["agreement", str(judged), "--labels", str(labels),
                                      "--json", str(tmp_path / "out.json")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    line = ("labels: 3 of 19 name items or criteria not in the run (2 unknown items, 1 unknown "
            "criteria), left out of every figure: q90/x, q91/y, q0/z")
    assert line in result.output
    assert result.output.index(line) < result.output.index("Agreement with human labels")
    stray = json.loads((tmp_path / "out.json").read_text())["stray_labels"]
    assert (stray["unknown_items"], stray["unknown_criteria"]) == (2, 1)


def test_agreement_says_so_when_every_label_is_on_the_run(tmp_path):
    labels = _write(tmp_path / "labels.jsonl", _verdicts("dr"))
    judged = _write(tmp_path / "v.jsonl", _verdicts("gpt"))
    result = CliRunner().invoke(app, ["agreement", str(judged), "--labels", str(labels)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "labels: all 16 name items and criteria of the run" in result.output


async def test_the_report_says_it_before_the_agreement_figures(tmp_path):
    run = await grade_run(tmp_path, "run", [AGREE])
    rows = [{"item_id": f"q{i}", "criterion_id": "stinger", "verdict": "MET", "judge": "dr"}
            for i in range(4)]
    rows += [{"item_id": "q9", "criterion_id": "stinger", "verdict": "MET", "judge": "dr"},
             {"item_id": "q1", "criterion_id": "no-such", "verdict": "MET", "judge": "dr"}]
    labels = _write(tmp_path / "labels.jsonl", rows)
    result = CliRunner().invoke(app, ["report", str(run), "--labels", str(labels), "-o",
                                      str(tmp_path / "report.html")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    line = ("labels: 2 of 6 name items or criteria not in the run (1 unknown items, 1 unknown "
            "criteria), left out of every figure: q9/stinger, q1/no-such")
    assert line in html
    assert html.index(line) < html.index("vs human labels")
