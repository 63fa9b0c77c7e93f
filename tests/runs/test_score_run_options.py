"""``assay score RUN``: every option applies to the run or is refused, never ignored."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.runs.conftest import POLICY, POLICY_SCORE, RUBRIC, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.io.verdicts import read_verdicts
from assay.runs import rescore
from assay.testing import FakeJudgeServer

UNMET_STINGER = 4 / 11  # judge b: (0 + 0.5*4 + 2) / 11


@pytest.fixture(scope="module")
def two_judge_run(tmp_path_factory):
    """Six items graded by judge a (stinger MET) and judge b (stinger UNMET)."""
    folder = tmp_path_factory.mktemp("score-run")
    items = write_items(folder / "items.jsonl", 6)  # responses of 8 words
    rubric = folder / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC))
    with FakeJudgeServer.run_in_thread(policy={**POLICY, "stinger": "MET"}) as a, \
            FakeJudgeServer.run_in_thread(policy={**POLICY, "stinger": "UNMET"}) as b:
        result = assay.grade(items, rubric=rubric, judges=[spec(a), spec(b)],
                             run_dir=folder / "run")
        return {"run": result.run_dir, "a": spec(a), "b": spec(b), "folder": folder,
                "items": items, "rubric": rubric}


def score(run, *args):
    out = CliRunner().invoke(app, ["score", str(run), *map(str, args)])
    return out


def mean(run, tmp_path, *args):
    out = score(run, *args, "--json", tmp_path / "s.json")
    assert out.exit_code == 0, out.output
    return json.loads((tmp_path / "s.json").read_text())["summary"]["mean"]


def test_judge_keeps_only_that_judges_votes(two_judge_run, tmp_path):
    run = two_judge_run["run"]
    assert mean(run, tmp_path) == pytest.approx(UNMET_STINGER)  # the tie goes to UNMET
    assert mean(run, tmp_path, "--judge", two_judge_run["a"]) == pytest.approx(POLICY_SCORE)
    assert mean(run, tmp_path, "--judge", two_judge_run["b"]) == pytest.approx(UNMET_STINGER)
    assert rescore(run, judge=two_judge_run["a"]).mean == pytest.approx(POLICY_SCORE)


def test_an_unknown_judge_is_an_error_naming_the_runs_judges(two_judge_run):
    out = score(two_judge_run["run"], "--judge", "nosuchjudge")
    assert out.exit_code == 1
    assert "--judge: the run has no judge 'nosuchjudge'" in out.output
    assert two_judge_run["a"] in out.output and "Scores" not in out.output


@pytest.mark.parametrize(("normalization", "expected"), [
    # judge a: stinger +1, tweezers not met 0, pain partly +0.5, tone calm +1: raw 2.5,
    # N+ = 3 desirable and N- = 1 undesirable criteria scored
    ("minmax", (2.5 + 1) / (3 + 1)), ("positive", 2.5 / 3), ("count", 2.5 / 4), ("none", 2.5)])
def test_reward_normalization_applies_to_a_run(two_judge_run, tmp_path, normalization, expected):
    got = mean(two_judge_run["run"], tmp_path, "--formula", "reward", "--judge", two_judge_run["a"],
               "--reward-normalization", normalization)
    assert got == pytest.approx(expected)


def test_reward_normalization_without_the_reward_formula_is_refused(two_judge_run):
    out = score(two_judge_run["run"], "--reward-normalization", "count")
    assert out.exit_code == 1 and "--reward-normalization: applies to the reward formula" in out.output


def test_length_penalty_uses_the_runs_stored_responses(two_judge_run, tmp_path):
    # 8 words, free up to 4, 0.5 at 12, linear: 0.5 * (8 - 4) / (12 - 4) = 0.25 off each score
    got = mean(two_judge_run["run"], tmp_path, "--judge", two_judge_run["a"],
               "--length-penalty", "4,12,0.5,1")
    assert got == pytest.approx(POLICY_SCORE - 0.25)


@pytest.mark.parametrize("option", ["--items", "--rubric"])
def test_verdict_file_options_are_refused_on_a_run(two_judge_run, option):
    path = two_judge_run["items"] if option == "--items" else two_judge_run["rubric"]
    out = score(two_judge_run["run"], option, path)
    assert out.exit_code == 1 and f"{option}: {option} is for verdict files" in out.output


def test_export_writes_the_rescored_verdicts(two_judge_run, tmp_path):
    out = score(two_judge_run["run"], "--judge", two_judge_run["a"],
                "--export", tmp_path / "v.jsonl", "--export", tmp_path / "v.csv")
    assert out.exit_code == 0, out.output
    assert "exported 24 rows to" in out.output
    verdicts = read_verdicts(tmp_path / "v.jsonl")
    assert len(verdicts) == 24 and {v.judge for v in verdicts} == {two_judge_run["a"]}
    assert len((tmp_path / "v.csv").read_text().splitlines()) == 25
    votes = score(two_judge_run["run"], "--export", tmp_path / "votes.jsonl", "--votes")
    assert votes.exit_code == 0 and len(read_verdicts(tmp_path / "votes.jsonl")) == 48


def test_export_with_an_unknown_extension_fails_before_scoring(two_judge_run, tmp_path):
    out = score(two_judge_run["run"], "--export", tmp_path / "v.xlsx")
    assert out.exit_code == 1 and "--export: cannot export to .xlsx" in out.output
    assert not (tmp_path / "v.xlsx").exists()


def test_run_options_are_refused_on_a_verdict_file(two_judge_run, tmp_path):
    assert rescore(two_judge_run["run"]).mean is not None
    from assay.runs import export

    export(two_judge_run["run"], tmp_path / "v.jsonl")
    out = score(tmp_path / "v.jsonl", "--rubric", two_judge_run["rubric"],
                "--export", tmp_path / "again.jsonl")
    assert out.exit_code == 1 and "--export: --export is for a run directory" in out.output
