"""Issue 32.3: a judge's consistency with itself across runs (per-item variance, ICC, α with
CIs), the flag on low self-agreement, and `assay consistency` with sweeps, one table per
factor."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.runs.conftest import spec, write_items
from typer.testing import CliRunner

from assay.cli import app
from assay.cli.consistency import MIN_SELF_AGREEMENT
from assay.metrics.consistency import DEFAULT_MIN_SELF_ALPHA, consistency
from assay.rubric import Criterion
from assay.testing import FakeJudgeServer
from assay.verdict import Verdict

ITEMS = "uvwxyz"
CRITERIA = {i: [Criterion(id="a", text="A"), Criterion(id="b", text="B")] for i in ITEMS}


def run(labels: dict[str, str], judge: str = "j") -> list[Verdict]:
    """Verdicts from 'MU..' strings per criterion (M = MET), one letter per item."""
    return [Verdict(item_id=i, criterion_id=c, decision="MET" if x == "M" else "UNMET",
                    judge=judge) for c, text in labels.items() for i, x in zip(ITEMS, text)]


SAME = {"a": "MMUUMU", "b": "MUMUMM"}


def test_per_item_variance_is_the_sample_variance_of_the_items_score_across_runs():
    other = {"a": "UMUUMU", "b": "UUMUMM"}  # item u: score 1.0, then 0.0
    c = consistency({"r1": run(SAME), "r2": run(other)}, CRITERIA).judges["j"]
    assert c.items["u"].scores == {"r1": 1.0, "r2": 0.0} and c.items["u"].variance == 0.5
    assert c.items["v"].variance == 0.0


def test_identical_runs_agree_perfectly_with_cis():
    c = consistency({"r1": run(SAME), "r2": run(SAME), "r3": run(SAME)}, CRITERIA).judges["j"]
    assert c.alpha.value == pytest.approx(1.0) and c.percent_agreement.value == 1.0
    assert c.icc["ICC(2,1)"].value == pytest.approx(1.0)
    assert c.mean_score.ci is not None and not c.flagged


def test_each_judge_is_compared_only_with_itself():
    runs = {"r1": run(SAME, "good") + run(SAME, "bad"),
            "r2": run(SAME, "good") + run({"a": "UUMMUM", "b": "UMUMUU"}, "bad")}
    report = consistency(runs, CRITERIA)
    assert report.flagged == ["bad"]


def test_a_judge_whose_self_agreement_cannot_be_measured_is_flagged():
    c = consistency({"r1": run(SAME)}, CRITERIA).judges["j"]
    assert c.flagged and "two runs" in c.flag_reason


def test_the_threshold_is_the_one_stated_in_the_cli():
    assert MIN_SELF_AGREEMENT == DEFAULT_MIN_SELF_ALPHA


@pytest.fixture
def studies(tmp_path):
    """Two studies of two repeats: one graded by a steady judge, one by a fickle one."""
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump({"id": "r", "criteria": [
        {"id": "stinger", "text": "Explains how to remove the stinger.", "weight": 1},
        {"id": "ice", "text": "Suggests a cold compress.", "weight": 1}]}))
    items = write_items(tmp_path / "items.jsonl", 6)
    seen: dict = {}

    def fickle(view):
        key = (view.criterion_text, view.response_text)
        seen[key] = seen.get(key, 0) + 1
        return "MET" if seen[key] % 2 else "UNMET"

    steady = {"stinger": "MET", "ice": "UNMET"}  # one answer each: α is defined, and 1
    for name, policy in (("steady", steady), ("fickle", fickle)):
        with FakeJudgeServer.run_in_thread(policy=policy) as server:
            CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric), "--judge",
                                     spec(server), "--run-dir", str(tmp_path / name), "-q",
                                     "--repeats", "2"])
    return tmp_path / "steady", tmp_path / "fickle"


def test_the_report_of_a_study_has_variance_icc_and_alpha_with_cis(tmp_path, studies):
    out = CliRunner().invoke(app, ["consistency", str(studies[0]), "--json",
                                   str(tmp_path / "c.json")])
    assert out.exit_code == 0, out.output
    [judge] = json.loads((tmp_path / "c.json").read_text())["consistency"]["judges"].values()
    assert judge["runs"] == ["repeat-1", "repeat-2"] and judge["n_items"] == 6
    assert set(judge) >= {"alpha", "icc", "mean_item_variance", "items", "mean_score"}
    assert judge["mean_score"]["value"] == 0.5 and judge["flagged"] is False


def test_a_sweep_gives_one_table_per_factor_with_a_row_per_level(studies):
    steady, fickle = studies
    out = CliRunner().invoke(app, [
        "consistency", "--sweep", f"temperature=0.0={steady}", "--sweep",
        f"temperature=1.0={fickle}", "--sweep", f"role=auditor={steady}"])
    assert out.exit_code == 6  # the fickle level is flagged
    assert "Sweep: temperature" in out.output and "Sweep: role" in out.output
    assert "at temperature=1.0: low self-agreement" in " ".join(out.output.split())


def test_a_bad_sweep_names_the_option():
    out = CliRunner().invoke(app, ["consistency", "--sweep", "temperature"])
    assert out.exit_code == 1 and "--sweep" in out.output and "FACTOR=LEVEL=STUDY" in out.output


def test_a_scenario_sweep_splits_a_study_by_the_items_tag(tmp_path, studies):
    out = CliRunner().invoke(app, ["consistency", str(studies[0]), "--by-tag", "theme",
                                   "--json", str(tmp_path / "c.json")])
    assert out.exit_code == 0, out.output
    assert "Sweep: scenario (theme)" in out.output
    levels = json.loads((tmp_path / "c.json").read_text())["sweep"]["scenario (theme)"]
    assert sorted(levels) == ["emergency", "hedging"]


def test_each_scenario_is_computed_on_its_items_alone(studies):
    from assay.metrics.consistency import runs_consistency, scenarios

    runs = [studies[0] / "repeat-1", studies[0] / "repeat-2"]
    groups = scenarios(runs[0], "theme")
    assert groups == {"emergency": {"q1", "q3", "q5"}, "hedging": {"q0", "q2", "q4"}}
    [judge] = runs_consistency(runs, items=groups["hedging"]).judges.values()
    assert set(judge.items) == {"q0", "q2", "q4"}
