"""Issue 8.1: one typed RunOptions. Bad values name their flag (every one at once); the config
fields and only they make the run's config hash; ``assay grade`` and ``assay.grade`` build the
same options from the same settings, under one name per option."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pydantic import ValidationError
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.errors import InputError
from assay.grading.fewshot import FewShot
from assay.item import Item
from assay.rubric import Rubric
from assay.runs import RunOptions, plan_run
from assay.runs.manifest import config_hash
from assay.runs.sources import ItemSource
from assay.scoring import FORMULAS, Formula
from assay.testing import FakeJudgeServer

RUBRIC = Rubric.model_validate({"id": "r", "criteria": [{"id": "c", "text": "Says ice."}]})
OTHER_RUBRIC = Rubric.model_validate({"id": "r", "criteria": [{"id": "c", "text": "Says heat."}]})
BASE = {"judges": ["vllm:a"], "rubric": RUBRIC}
# a changed value of every config field (the paths are hashed as what they hold: the rubric
# as its hash, the few-shot files as their digest)
CHANGED = {"judges": ["vllm:b"], "weights": [2.0], "rubric": OTHER_RUBRIC, "mode": "per-item",
           "templates": {"binary": "auditor"}, "shuffle": False, "seed": 7,
           "few_shot": FewShot(n=2), "aggregation": "any", "abstention": "zero",
           "formula": "pass-rate", "max_reasks": 3, "repeat": 1,
           "role": "You are a Medical Bioethicist."}
PATHS = {"rubric_path", "few_shot_items", "few_shot_labels"}
OPERATIONAL = {"run_dir": "elsewhere", "budget_usd": 1.5, "concurrency": 3,
               "cache_path": "cache.sqlite", "quiet": False, "judge_config_file": "assay.toml",
               "executor": "ray", "ray_address": "auto", "workers": 4, "batch_retry": "live",
               "batch_poll_s": 5.0, "final_passes": 2}


def _hash(options: RunOptions) -> str:
    source = ItemSource(items=[Item(id="q0", prompt="Bee?", response="Ice it.")])
    return config_hash(plan_run(source, options).config)


@pytest.mark.parametrize(("values", "says"), [
    ({"formula": "bogus"}, "--formula: unknown formula 'bogus'"),
    ({"mode": "per-day"}, "--mode: unknown call mode 'per-day'"),
    ({"executor": "dask"}, "--executor: expected local, ray or batch, got 'dask'"),
    ({"abstention": "maybe"}, "--abstain: unknown abstention strategy 'maybe'"),
    ({"aggregation": "sometimes"}, "--aggregate: aggregation: unknown strategy 'sometimes'"),
    ({"seed": -1}, "--seed: expected a whole number >= 0, got -1"),
    ({"seed": True}, "--seed: expected a whole number, got True"),
    ({"budget_usd": -0.5}, "--budget: expected a number >= 0, got -0.5"),
    ({"concurrency": 0}, "--concurrency: expected a whole number >= 1, got 0"),
    ({"workers": 0, "executor": "ray"}, "--workers: expected a whole number >= 1, got 0"),
    ({"weights": [1.0, -1.0], "judges": ["vllm:a", "vllm:b"]}, "--weight: expected a number >= 0"),
    ({"weights": [1.0, 2.0], "judges": ["vllm:a"]}, "--weight: 2 weights for 1 judges"),
    ({"workers": 2}, "--executor: --workers and --ray-address need --executor ray"),
    ({"max_reasks": 11}, "--max-reasks: expected a whole number <= 10, got 11"),
    ({"max_reasks": -1}, "--max-reasks: expected a whole number >= 0, got -1"),
    ({"budget": 3}, "budget: not a run option"),
])
def test_a_bad_value_is_an_input_error_naming_its_flag(values, says):
    with pytest.raises(InputError) as refused:
        RunOptions(**values)
    assert says in str(refused.value)
    assert isinstance(refused.value, ValueError)


def test_every_bad_value_is_reported_at_once_and_options_stay_valid():
    with pytest.raises(InputError) as refused:
        RunOptions(formula="bogus", abstention="maybe", concurrency=0)
    assert [i.field for i in refused.value.issues] == ["--abstain", "--formula", "--concurrency"]
    options = RunOptions(**BASE)
    with pytest.raises(ValidationError, match="frozen"):  # a change goes through replace()
        options.seed = 3  # type: ignore[misc]
    with pytest.raises(InputError, match="--seed"):
        options.replace(seed=-3)
    assert options.replace(seed=3).seed == 3 and options.seed == 0


def test_the_literals_are_the_scoring_cores_formulas():
    assert get_args(Formula) == FORMULAS


def test_the_fields_are_split_into_config_and_operational_once():
    fields = set(RunOptions.model_fields)
    config, operational = set(RunOptions.config_fields()), set(RunOptions.operational_fields())
    assert config | operational == fields and not config & operational
    # a new config field needs a hash test here (protocol's needs HealthBench: its own test)
    assert config == set(CHANGED) | PATHS | {"protocol"}
    assert operational == set(OPERATIONAL)
    assert RunOptions.flag("budget_usd") == "--budget" and RunOptions.flag("abstention") == "--abstain"


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_config_field_changes_the_config_hash(name):
    base = RunOptions(**BASE)
    changed = base.replace(**{name: CHANGED[name]})
    assert _hash(changed) != _hash(base)


def test_the_simple_evals_protocol_changes_the_config_hash():
    base = RunOptions.build(judges=["vllm:a"], healthbench=True)
    source = ItemSource(items=[Item(id="q0", prompt="Bee?", response="Ice it.")])
    exact = base.replace(protocol="simple-evals")
    assert config_hash(plan_run(source, exact).config) != config_hash(plan_run(source, base).config)


@pytest.mark.parametrize("name", sorted(OPERATIONAL))
def test_no_operational_field_changes_the_config_hash(name):
    base = RunOptions(**BASE, executor="ray")
    assert _hash(base.replace(**{name: OPERATIONAL[name]})) == _hash(base)


def test_operational_settings_carry_over_by_name():
    now = RunOptions(budget_usd=2, cache_path="c.sqlite", executor="ray", workers=3)
    assert now.operational() == {**{k: getattr(RunOptions(), k) for k in OPERATIONAL},
                                 "budget_usd": 2, "cache_path": "c.sqlite", "executor": "ray",
                                 "workers": 3}


def test_the_cli_and_the_api_build_the_same_run(tmp_path, items_file, rubric_file):
    settings = ["--aggregate", "any", "--abstain", "partial:0.25", "--seed", "3",
                "--budget", "10", "--cache", str(tmp_path / "cache.sqlite"), "--no-shuffle",
                "--concurrency", "2", "--max-reasks", "3"]
    with FakeJudgeServer.run_in_thread(policy=POLICY) as a, \
            FakeJudgeServer.run_in_thread(policy=POLICY) as b:
        out = CliRunner().invoke(app, [
            "grade", str(items_file), "--rubric", str(rubric_file), "--judge", spec(a),
            "--judge", spec(b), "--weight", "2", "--weight", "1", *settings,
            "--run-dir", str(tmp_path / "cli"), "--quiet"])
        assert out.exit_code == 0, out.output
        result = assay.grade(items_file, rubric=rubric_file, judges=[spec(a), spec(b)],
                             weights=[2, 1], aggregation="any", abstention="partial:0.25",
                             seed=3, budget_usd=10, cache_path=tmp_path / "cache.sqlite",
                             shuffle=False, concurrency=2, max_reasks=3,
                             run_dir=tmp_path / "api")
    cli = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert cli["config_hash"] == result.manifest["config_hash"]
    assert [j["settings"]["max_reasks"] for j in cli["config"]["judges"]] == [3, 3]
    assert cli["config"]["scoring"] == {"aggregation": "binary=any,ordinal=mean,nominal=mode",
                                        "abstention": "partial:0.25", "formula": "autorubric"}
    # the former keyword names still work, and mean the same
    assert result.rescore(abstain="zero").overall == result.rescore(abstention="zero").overall
    with pytest.raises(TypeError, match="give abstention= only"):
        result.rescore(abstain="zero", abstention="zero")


async def test_the_former_api_names_build_the_same_options(tmp_path, items_file, rubric_file):
    with pytest.raises(TypeError, match="give aggregation= only"):
        await assay.agrade(items_file, rubric=rubric_file, judges=["vllm:m"], aggregate="any",
                           aggregation="any")
    with pytest.raises(InputError, match="--abstain: unknown abstention strategy 'often'"):
        await assay.agrade(items_file, rubric=rubric_file, judges=["vllm:m"], abstain="often",
                           run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_bad_value_on_the_command_line_names_the_flag_before_any_call(tmp_path, items_file,
                                                                         rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, [
            "grade", str(items_file), "--rubric", str(rubric_file), "--judge", spec(server),
            "--abstain", "often", "--budget", "-1", "--run-dir", str(tmp_path / "run")])
        assert server.requests == [] and server.preflights == 0
    assert out.exit_code == 1, out.output
    text = out.output.replace("\n", " ")
    assert "--abstain: unknown abstention strategy 'often'" in text
    assert "--budget: expected a number >= 0, got -1.0" in text
    assert not (tmp_path / "run").exists()
