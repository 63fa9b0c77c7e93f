"""`assay compare` and `assay agreement` on runs: ensembles, the run's own formula, one p-value
per pair whichever command shows it, and labels that match nothing."""

from __future__ import annotations

import json

import pytest
from tests.report.conftest import AGREE, DISAGREE, write_run_inputs
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.judges.specs import parse_spec
from assay.report import compare_runs, load_run
from assay.runs.results import rescore_run
from assay.testing import FakeJudgeServer

runner = CliRunner()
LENIENT = {**AGREE, "pain": "well", "tweezers": "MET"}


async def _grade(tmp_path, name, policies, **options):
    items, rubric = write_run_inputs(tmp_path)
    servers = [await FakeJudgeServer(policy=p).start() for p in policies]
    try:
        await assay.agrade(items, rubric=rubric, run_dir=tmp_path / name,
                           judges=[parse_spec(f"openai-compatible:m@{s.base_url}", id=f"judge{i}")
                                   for i, s in enumerate(servers)], **options)
    finally:
        for server in servers:
            await server.stop()
    return tmp_path / name


def _compare(*args):
    result = runner.invoke(app, ["compare", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def _json(tmp_path, *args):
    out = tmp_path / "out.json"
    _compare(*args, "--json", out)
    return json.loads(out.read_text())


async def test_compare_of_two_ensemble_runs_scores_their_aggregated_verdicts(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE, DISAGREE, DISAGREE])
    b = await _grade(tmp_path, "b", [AGREE, LENIENT, LENIENT])
    data = _json(tmp_path, a, b)
    assert data["scores"]["n_items"] == 4
    assert data["scores"]["mean_a"]["value"] == pytest.approx(rescore_run(a).table.mean)
    assert data["scores"]["mean_b"]["value"] == pytest.approx(rescore_run(b).table.mean)
    assert data["compared"].startswith("aggregated verdicts")


async def test_compare_with_judge_scores_that_judges_votes_alone(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE, DISAGREE, DISAGREE])
    b = await _grade(tmp_path, "b", [AGREE, LENIENT, LENIENT])
    data = _json(tmp_path, a, b, "--judge", "judge1")
    assert data["scores"]["mean_a"]["value"] == pytest.approx(
        rescore_run(a, judge="judge1").table.mean)
    assert data["scores"]["mean_b"]["value"] == pytest.approx(
        rescore_run(b, judge="judge1").table.mean)
    assert data["compared"] == "judge judge1's votes"


async def test_compare_and_the_report_show_the_same_p_values_for_the_same_pair(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE, DISAGREE, DISAGREE])
    b = await _grade(tmp_path, "b", [AGREE, LENIENT, LENIENT])
    shown = _json(tmp_path, a, b)["scores"]
    reported = compare_runs(load_run(a), load_run(b)).scores
    assert shown["permutation"]["p_value"] == reported.permutation.p_value
    assert shown["permutation"]["details"]["n_resamples"] == reported.permutation.details[
        "n_resamples"]
    assert shown["mean_difference"]["ci"] == reported.mean_difference.ci.model_dump()


async def test_compare_scores_with_the_formula_of_run_a_by_default(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE], formula="raw")
    b = await _grade(tmp_path, "b", [LENIENT], formula="raw")
    data = _json(tmp_path, a, b)
    assert data["formula"] == "raw"
    assert data["scores"]["mean_a"]["value"] == pytest.approx(rescore_run(a).table.mean)
    assert rescore_run(a).table.mean != pytest.approx(rescore_run(a, formula="autorubric")
                                                      .table.mean)


async def test_agreement_scores_with_the_runs_own_formula_by_default(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE], formula="raw")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"item_id": "q1", "criterion_id": "stinger", "verdict": "MET",
                                  "judge": "dr"}) + "\n")
    out = tmp_path / "agreement.json"
    result = runner.invoke(app, ["agreement", str(a), "--labels", str(labels), "--json", str(out),
                                 "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["formula"] == "raw"


def _labels_on_another_item(tmp_path):
    """A label file whose one label is on an item no run graded."""
    labels = tmp_path / "other.jsonl"
    labels.write_text(json.dumps({"item_id": "elsewhere-7", "criterion_id": "stinger",
                                  "verdict": "MET", "judge": "dr"}) + "\n")
    return labels


async def test_labels_that_match_no_item_are_an_error_for_agreement(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    labels = _labels_on_another_item(tmp_path)
    result = runner.invoke(app, ["agreement", str(a), "--labels", str(labels)])
    assert result.exit_code == 1
    assert "other.jsonl: --labels: none of the 1 labels" in result.output


async def test_labels_that_match_no_item_are_an_error_for_compare(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    labels = _labels_on_another_item(tmp_path)
    result = runner.invoke(app, ["compare", str(a), str(a), "--labels", str(labels)])
    assert result.exit_code == 1
    assert "other.jsonl: --labels: none of the 1 labels" in result.output


async def test_labels_that_match_no_item_are_an_error_for_the_report(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    labels = _labels_on_another_item(tmp_path)
    result = runner.invoke(app, ["report", str(a), "--labels", str(labels),
                                 "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert "other.jsonl: --labels: none of the 1 labels" in result.output
