"""Issue 40 §1: a judge that answers each HealthBench criterion MET with probability P,
independently of everything (a coin: no signal), graded 10 rows three times, is flagged LOW
(exit 6) by ``assay grade --repeats 3`` and by ``assay consistency``, at P = 0.9 and 0.7; its α
is the ``krippendorff`` package's on the same units × repeats matrix."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from tests.runs.conftest import spec
from typer.testing import CliRunner

from assay.cli import app
from assay.metrics.sources import run_verdicts
from assay.testing import FakeJudgeServer
from assay.testing.policies import policy_from_string


@pytest.fixture
def ten_rows(tmp_path, healthbench_dev_path):
    """The first ten rows with an ideal completion (the answers graded)."""
    rows = [line for line in healthbench_dev_path.read_text(encoding="utf-8").splitlines()
            if json.loads(line).get("ideal_completions_data")][:10]
    path = tmp_path / "ten.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def units_by_repeat(study) -> np.ndarray:
    """The repeats × (item, criterion) matrix of the stored verdicts (1 = MET), read back."""
    runs = sorted(p for p in study.iterdir() if p.is_dir())
    answers = [{(v.item_id, v.criterion_id): v.decision.value for v in run_verdicts(run)}
               for run in runs]
    units = sorted(set().union(*answers))
    return np.array([[np.nan if u not in a else float(a[u] == "MET") for u in units]
                     for a in answers])


@pytest.mark.parametrize("p_met", [0.9, 0.7])
def test_a_coin_judge_is_flagged_low_by_grade_repeats_and_by_consistency(tmp_path, ten_rows,
                                                                         p_met):
    study = tmp_path / "study"
    # assay fake-judge --policy coin:P: MET with probability P, a fresh draw each request
    with FakeJudgeServer.run_in_thread(policy=policy_from_string(f"coin:{p_met}")) as server:
        graded = CliRunner().invoke(app, [
            "grade", str(ten_rows), "--healthbench", "--ideal", "--judge", spec(server),
            "--run-dir", str(study), "--repeats", "3", "-q"])
    assert graded.exit_code == 6, graded.output
    out = CliRunner().invoke(app, ["consistency", str(study), "--n-bootstrap", "200",
                                   "--json", str(tmp_path / "c.json")])
    assert out.exit_code == 6, out.output
    assert "LOW" in out.output and "low self-agreement" in " ".join(out.output.split())
    [judge] = json.loads((tmp_path / "c.json").read_text())["consistency"]["judges"].values()
    matrix = units_by_repeat(study)
    assert matrix.shape[0] == 3 and matrix.shape[1] > 100
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert judge["alpha"]["value"] == pytest.approx(expected, abs=1e-9)
    assert judge["alpha"]["value"] < 0.2 and judge["flagged"] is True
