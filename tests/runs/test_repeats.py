"""Issue 32.3: `assay grade --repeats R` grades the same items R times, each a run with its own
recorded seed, resumable as a study, then flags a judge whose agreement with itself is low."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml
from tests.runs.conftest import spec, write_items
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer

RUBRIC = {"id": "bee", "criteria": [
    {"id": "stinger", "text": "Explains how to remove the stinger.", "weight": 5},
    {"id": "ice", "text": "Suggests a cold compress.", "weight": 2}]}
CALLS_PER_RUN = 6 * 2  # items x criteria


@pytest.fixture
def inputs(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC))
    return write_items(tmp_path / "items.jsonl", 6), rubric


def steady(view) -> str:
    """The same answer every time, and not one answer for everything (α needs two values)."""
    return "MET" if "stinger" in (view.criterion_text or "") else "UNMET"


def fickle():
    """A judge that answers MET the first time it sees a (criterion, response), then flips a
    coin keyed on how often it has seen it: its repeats disagree."""
    seen: Counter = Counter()

    def policy(view) -> str:
        key = (view.criterion_text, view.response_text)
        seen[key] += 1
        return "MET" if (seen[key] + len(view.response_text or "") + len(key[0] or "")) % 2 else "UNMET"
    return policy


def grade(inputs, server, study, *extra):
    items, rubric = inputs
    return CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric), "--judge",
                                    spec(server), "--run-dir", str(study), "-q", *extra])


def graded_calls(server) -> int:
    return sum(1 for r in server.requests if r["criterion_id"] is not None)


def test_each_repeat_is_a_run_with_its_own_recorded_seed(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        out = grade(inputs, server, tmp_path / "study", "--repeats", "3", "--seed", "5")
    assert out.exit_code == 0, out.output
    record = json.loads((tmp_path / "study" / "repeats.json").read_text())
    seeds = [r["seed"] for r in record["repeats"]]
    assert seeds[0] == 5 and len(set(seeds)) == 3
    for r in record["repeats"]:
        manifest = json.loads((tmp_path / "study" / r["run_dir"] / "manifest.json").read_text())
        assert manifest["master_seed"] == r["seed"] and manifest["status"] == "complete"


def test_a_repeat_is_a_new_draw_not_the_previous_repeats_cached_reply(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        out = grade(inputs, server, tmp_path / "study", "--repeats", "2", "--cache",
                    str(tmp_path / "cache.sqlite"))
        assert out.exit_code == 0, out.output
        assert graded_calls(server) == 2 * CALLS_PER_RUN


def test_resuming_a_study_grades_only_the_missing_repeat_with_its_recorded_seed(tmp_path,
                                                                                 inputs):
    study = tmp_path / "study"
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        assert grade(inputs, server, study, "--repeats", "2").exit_code == 0
        seed = json.loads((study / "repeats.json").read_text())["repeats"][1]["seed"]
        shutil.rmtree(study / "repeat-2")
        server.requests.clear()
        out = CliRunner().invoke(app, ["grade", "--resume", str(study), "-q"])
        assert out.exit_code == 0, out.output
        assert graded_calls(server) == CALLS_PER_RUN
    assert json.loads((study / "repeat-2" / "manifest.json").read_text())["master_seed"] == seed


def test_a_judge_that_agrees_with_itself_is_not_flagged(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        out = grade(inputs, server, tmp_path / "study", "--repeats", "2", "--json",
                    str(tmp_path / "out.json"))
    assert out.exit_code == 0, out.output
    [judge] = json.loads((tmp_path / "out.json").read_text())["consistency"]["judges"].values()
    assert judge["flagged"] is False and judge["mean_item_variance"]["value"] == 0


def test_a_judge_with_low_self_agreement_is_flagged_and_the_command_exits_6(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=fickle()) as server:
        out = grade(inputs, server, tmp_path / "study", "--repeats", "2")
    assert out.exit_code == 6, out.output
    assert "low self-agreement (α across runs" in out.output and "LOW" in out.output


def test_the_self_agreement_threshold_is_configurable(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=fickle()) as server:
        out = grade(inputs, server, tmp_path / "study", "--repeats", "2",
                    "--min-self-agreement", "-1")
    assert out.exit_code == 0, out.output


def test_a_plain_runs_config_does_not_change_with_the_repeat_setting():
    from assay.grading.grader import GradingConfig

    assert "repeat" not in GradingConfig().to_dict()
    assert GradingConfig(repeat=2).to_dict()["repeat"] == 2


def test_a_role_header_opens_the_system_message_of_every_judge_call(tmp_path, inputs):
    role = tmp_path / "bioethicist.txt"
    role.write_text("### ROLE: MEDICAL BIOETHICIST\n")
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        out = grade(inputs, server, tmp_path / "run", "--role", f"@{role}")
        assert out.exit_code == 0, out.output
        graded = [r for r in server.requests if r["criterion_id"] is not None]
    assert len(graded) == CALLS_PER_RUN
    assert all(r["body"]["messages"][0]["role"] == "system" and r["body"]["messages"][0]
               ["content"].startswith("### ROLE: MEDICAL BIOETHICIST\n\nYou are") for r in graded)


def test_a_missing_role_file_is_named(tmp_path, inputs):
    with FakeJudgeServer.run_in_thread(policy=steady) as server:
        out = grade(inputs, server, tmp_path / "run", "--role", f"@{tmp_path / 'none.txt'}")
    assert out.exit_code == 1 and "none.txt" in out.output and "--role" in out.output
