"""Score-level agreement on partly labelled items: both sides are scored on the same criteria."""

from __future__ import annotations

import pytest

from assay.metrics.sources import Rubrics
from assay.metrics.summary import agreement_summary
from assay.rubric import Rubric
from assay.verdict import Verdict

RUBRIC = Rubric(id="r", criteria=[{"id": "x", "text": "Explains x.", "weight": 5},
                                  {"id": "y", "text": "Explains y.", "weight": 3},
                                  {"id": "z", "text": "Avoids z.", "weight": -2}])
ANSWERS = {"q0": "MUM", "q1": "UMU", "q2": "MMM", "q3": "UUM"}  # x, y, z per item


def _verdicts(judge, criteria_of=lambda item: "xyz"):
    return [Verdict(item_id=item, criterion_id=c, judge=judge,
                    decision="MET" if answers["xyz".index(c)] == "M" else "UNMET")
            for item, answers in ANSWERS.items() for c in criteria_of(item)]


def _summary(labels):
    rubrics = Rubrics(per_item={item: RUBRIC for item in ANSWERS})
    return agreement_summary(_verdicts("judge"), labels, rubrics, n_resamples=0)


def test_a_judge_agreeing_with_every_label_of_partly_labelled_items_scores_zero_error():
    # q0 and q1 are labelled on x only: their judge scores must use x only, as the labels do
    labels = _verdicts("dr", lambda item: "x" if item in ("q0", "q1") else "xyz")
    [report] = _summary(labels).reports
    scores = report.scores
    assert scores.n == 4
    assert scores.rmse.value == 0.0 and scores.bias.value == 0.0
    assert scores.pearson.value == pytest.approx(1.0)


def test_the_number_of_partly_labelled_items_is_reported():
    labels = _verdicts("dr", lambda item: "x" if item in ("q0", "q1") else "xyz")
    [report] = _summary(labels).reports
    assert report.scores.partly_labelled == 2


def test_fully_labelled_items_are_not_counted_as_partly_labelled():
    [report] = _summary(_verdicts("dr")).reports
    assert report.scores.partly_labelled == 0 and report.scores.mae.value == 0.0


def test_the_agreement_command_says_how_many_items_are_partly_labelled(tmp_path):
    import json

    import yaml
    from typer.testing import CliRunner

    from assay.cli import app

    def write(name, verdicts):
        path = tmp_path / name
        path.write_text("".join(json.dumps(v.model_dump(mode="json", exclude_none=True)) + "\n"
                                for v in verdicts))
        return path

    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC.model_dump(mode="json", exclude_none=True)))
    labels = write("labels.jsonl", _verdicts("dr", lambda item: "x" if item == "q3" else "xyz"))
    result = CliRunner().invoke(app, ["agreement", str(write("v.jsonl", _verdicts("judge"))),
                                      "--labels", str(labels), "--rubric", str(rubric),
                                      "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    lines = result.output.split("Score-level agreement")[1].splitlines()
    row = next(line for line in lines if line.startswith("│ judge"))
    assert [cell.strip() for cell in row.split("│")[1:4]] == ["judge", "4", "1"]
    assert "partly labelled" in result.output
