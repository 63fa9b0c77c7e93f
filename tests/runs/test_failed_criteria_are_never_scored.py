"""Fail closed: an item of a run with a criterion not graded (its call failed with 500s after
the retries, or an ensemble judge did not answer it) is unscored everywhere a run is read:
``assay score`` (its table, ``--json``, ``--export`` and the exported file scored again), the
run's own summary, HealthBench's official figures, ``assay compare`` and the report; never
scored as if the criterion had abstained. The figures cover the other items and say how many
were left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from tests.runs.conftest import POLICY, POLICY_SCORE, RUBRIC, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.cli.tables.run import summary_tables
from assay.judges import parse_spec
from assay.report.data import load_run
from assay.testing import FakeJudgeServer, Faults

# The penalty criterion of item q1 fails with 500s on every attempt: had it been counted as an
# abstention, q1 would score 9/11 like every other item (its penalty is UNMET under POLICY).
FAILING = ("Answer 1: scrape", "Recommends squeezing the stinger")
FAST = {"max_retries": 1, "base_delay_s": 0.0}


def cli(*args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args])


async def graded(tmp_path: Path, *judges, name: str = "run", n: int = 4):
    items = write_items(tmp_path / "items.jsonl", n)
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC))
    return await assay.agrade(items, rubric=rubric, judges=list(judges),
                              run_dir=tmp_path / name, final_passes=0)


@pytest.fixture
async def failed_run(tmp_path):
    async with FakeJudgeServer(policy=POLICY,
                               faults=Faults(at={FAILING: ["server_error"] * 50})) as server:
        result = await graded(tmp_path, parse_spec(spec(server), retry=FAST))
    assert result.status == "incomplete"
    return result


def test_assay_score_leaves_the_item_unscored_names_it_and_counts_it(failed_run, tmp_path):
    out = tmp_path / "scores.json"
    shown = cli("score", failed_run.run_dir, "--json", out)
    assert shown.exit_code == 0, shown.output  # named, not refused: --require-complete refuses
    data = json.loads(out.read_text())
    scores = {i["item_id"]: (i["score"], i["n_ungraded"]) for i in data["items"]}
    assert scores == {"q0": (POLICY_SCORE, 0), "q1": (None, 1), "q2": (POLICY_SCORE, 0),
                      "q3": (POLICY_SCORE, 0)}
    assert data["summary"]["n_ungraded"] == 1 and data["summary"]["n_unscored"] == 1
    assert data["run_status"]["status"] == "incomplete"
    assert "a criterion not graded" in shown.output and "1 item (q1)" in shown.output
    refused = cli("score", failed_run.run_dir, "--require-complete")
    assert refused.exit_code == 4  # as report, agreement and compare with --require-complete


def test_the_run_summary_scores_only_the_items_graded_in_full(failed_run):
    scores = failed_run.report.scores
    assert (scores.n_scored, scores.n_ungraded) == (3, 1)
    assert scores.scores["q1"] is None and scores.overall == pytest.approx(POLICY_SCORE)
    # q1 is an "emergency" item (odd numbers): its theme counts only q3
    assert {k: s.n for k, s in scores.by_theme.items()} == {"emergency": 1, "hedging": 2}
    assert {k: s.n for k, s in scores.by_axis.items()} == {"accuracy": 3, "completeness": 3}
    console = Console(record=True, width=200)  # the summary assay grade prints
    for table in summary_tables(scores, failed_run.report.totals, status="incomplete"):
        console.print(table)
    shown = console.export_text()
    assert "items scored" in shown and "3 / 4" in shown
    assert "unscored: a criterion not graded" in shown and "1 item (q1)" in shown


def test_healthbench_figures_leave_the_item_out_and_say_so(failed_run, tmp_path):
    out = tmp_path / "hb.json"
    shown = cli("score", failed_run.run_dir, "--formula", "healthbench", "--json", out)
    assert shown.exit_code == 0, shown.output
    data = json.loads(out.read_text())
    assert data["summary"]["healthbench"]["n"] == 3  # overall over the three graded items
    metrics = data["summary"]["healthbench"]["metrics"]
    assert metrics["theme:emergency:n_samples"] == 1 and metrics["theme:hedging:n_samples"] == 2
    assert data["summary"]["n_ungraded"] == 1 and data["items"][1]["score"] is None
    assert "1 item (q1)" in shown.output


def test_the_exported_verdicts_scored_again_keep_the_item_unscored(failed_run, tmp_path):
    exported = tmp_path / "verdicts.jsonl"
    assert cli("score", failed_run.run_dir, "--export", exported).exit_code == 0
    out = tmp_path / "again.json"
    again = cli("score", exported, "--rubric", tmp_path / "rubric.yaml", "--json", out)
    assert again.exit_code == 0, again.output
    items = {i["item_id"]: i["score"] for i in json.loads(out.read_text())["items"]}
    assert items["q1"] is None and items["q0"] == pytest.approx(POLICY_SCORE)


def test_the_report_and_compare_leave_the_item_out(failed_run, tmp_path):
    report = load_run(failed_run.run_dir)
    assert report.scores.n_ungraded == 1 and report.scores.scores["q1"] is None
    page = tmp_path / "report.html"
    assert cli("report", failed_run.run_dir, "--out", page).exit_code == 0
    assert 'id="ungraded-1"' in page.read_text()
    compared = cli("compare", failed_run.run_dir, failed_run.run_dir, "--json", tmp_path / "c.json")
    assert compared.exit_code == 0, compared.output
    assert "A: 1 item(s) left out, a criterion not graded" in compared.output
    assert json.loads((tmp_path / "c.json").read_text())["scores"]["n_items"] == 3


async def test_an_ensemble_judge_that_did_not_answer_leaves_the_item_unscored(tmp_path):
    """Two judges; one fails q1's penalty call: the other judge's vote alone is not the
    ensemble's verdict, so q1 is unscored (it was scored from one vote)."""
    async with FakeJudgeServer(policy=POLICY) as clean, FakeJudgeServer(
            policy=POLICY, faults=Faults(at={FAILING: ["server_error"] * 50})) as faulty:
        result = await graded(tmp_path, parse_spec(spec(clean), retry=FAST),
                              parse_spec(spec(faulty).replace("fake@", "fake2@"), retry=FAST))
    assert result.status == "incomplete"
    assert result.report.scores.scores["q1"] is None and result.report.scores.n_ungraded == 1
    out = tmp_path / "scores.json"
    assert cli("score", result.run_dir, "--json", out).exit_code == 0
    assert [i["score"] is None for i in json.loads(out.read_text())["items"]] == [
        False, True, False, False]
