"""The fake judge on multi-choice criteria: MET picks the highest-valued option, UNMET the
lowest, a label names one, and without the rubric it says why it cannot choose."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.testing import FakeJudgeServer

ROOT = Path(__file__).parents[2]


def by_criterion(result):
    return {v.criterion_id: v for v in result.verdicts if v.item_id == "q0"}


async def grade(tmp_path, items_file, rubric_file, **server):
    async with FakeJudgeServer(**server) as fake:
        return await assay.agrade(items_file, rubric=rubric_file, judges=[spec(fake)],
                                  run_dir=tmp_path / "run")


async def test_met_answers_the_highest_valued_option(tmp_path, items_file, rubric_file):
    result = await grade(tmp_path, items_file, rubric_file, policy="MET", rubrics=[rubric_file])
    verdicts = by_criterion(result)
    assert verdicts["pain"].option == "well" and verdicts["tone"].option == "calm"
    assert "MET → 'well', the option with the highest value" in verdicts["pain"].explanation
    # stinger 5 + tweezers (a penalty, met) -3 + pain 1·4 + tone 1·2, over 5 + 4 + 2
    assert result.overall == pytest.approx(8 / 11)


async def test_unmet_answers_the_lowest_valued_option_never_the_na_one(
        tmp_path, items_file, rubric_file):
    result = await grade(tmp_path, items_file, rubric_file, policy="UNMET", rubrics=[rubric_file])
    verdicts = by_criterion(result)
    assert verdicts["pain"].option == "poorly"  # not "not discussed" (na)
    assert verdicts["tone"].option == "alarmist"  # the first of the two 0-valued options
    assert "UNMET → 'poorly', the option with the lowest value" in verdicts["pain"].explanation
    assert result.overall == pytest.approx(0.0)


async def test_a_named_option_is_answered_as_named(tmp_path, items_file, rubric_file):
    result = await grade(tmp_path, items_file, rubric_file, policy=POLICY)
    verdicts = by_criterion(result)
    assert verdicts["pain"].option == "partly" and "option 'partly'" in verdicts["pain"].explanation


async def test_without_the_rubric_met_is_cannot_assess_and_says_why(tmp_path, items_file, rubric_file):
    result = await grade(tmp_path, items_file, rubric_file, policy="MET")
    verdicts = by_criterion(result)
    assert verdicts["pain"].decision.value == "CANNOT_ASSESS" and verdicts["pain"].option is None
    assert "MET has no option on a multi-choice criterion unless the fake judge knows its rubric" \
        in verdicts["pain"].explanation
    assert verdicts["stinger"].decision.value == "MET"


async def test_an_items_file_with_per_item_rubrics_also_tells_the_options(tmp_path, rubric_file):
    import json

    import yaml

    rubric = yaml.safe_load(rubric_file.read_text())
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q0", "prompt": "Bee?", "response": "Scrape.",
                                 "rubric": rubric}) + "\n")
    async with FakeJudgeServer(policy="MET", rubrics=items) as fake:
        result = await assay.agrade(items, judges=[spec(fake)], run_dir=tmp_path / "run")
    assert by_criterion(result)["pain"].option == "well"


def test_fake_judge_cli_refuses_a_bad_rubric_file_and_says_it_is_not_a_model(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: r\ncriteria: []\n")
    out = CliRunner().invoke(app, ["fake-judge", "--port", "0", "--rubric", str(bad)])
    assert out.exit_code == 1 and "criteria" in out.output
    help_text = CliRunner().invoke(app, ["fake-judge", "--help"]).output
    assert "not a model" in help_text


def test_the_quickstart_says_plainly_the_judge_is_a_rule_based_stand_in():
    readme = (ROOT / "README.md").read_text()
    quickstart = " ".join(readme[: readme.index("## A tour")].split())
    assert "stand-in that answers by rule, not a model" in quickstart
    assert "not a model" in (ROOT / "scripts" / "quickstart.sh").read_text()
