"""One :class:`EvalOptions` for an eval: validated at the boundary with the flags named, each
setting tied to its stage; and the evaluation modules import one way."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from assay.errors import InputError
from assay.evaluation import EvalOptions, aevaluate

SRC = Path(__file__).resolve().parents[2] / "src" / "assay"


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_bad_values_name_their_flags_all_at_once():
    with pytest.raises(InputError) as refused:
        EvalOptions(n=0, protocol="helm", executor="cluster", examples=-1)
    message = str(refused.value)
    for flag in ("--n", "--protocol", "--executor", "--examples"):
        assert f"{flag}:" in message


def test_every_setting_belongs_to_a_stage_and_the_rest_are_operational():
    assert {EvalOptions.stage_of(n) for n in EvalOptions.setting_fields()} == {
        "items", "sample", "grade"}
    assert set(EvalOptions.setting_fields()) | set(EvalOptions.operational_fields()) == set(
        EvalOptions.model_fields)
    assert EvalOptions.stage_of("judges") == "grade" and EvalOptions.stage_of("executor") is None


def test_the_api_takes_the_options_object_not_a_keyword_per_setting():
    assert list(inspect.signature(aevaluate).parameters) == ["items", "options", "resume",
                                                             "fields"]


def test_the_eval_and_grade_command_modules_import_one_way():
    evaluation = SRC / "evaluation"
    assert "assay.evaluation.run" in imported(evaluation / "conditions.py")
    assert not {"assay.evaluation.conditions", "assay.evaluation.api"} & imported(
        evaluation / "run.py")
    cli = SRC / "cli"
    assert "assay.cli.grade_repeats" in imported(cli / "grade_command.py")
    assert "assay.cli.grade_command" not in imported(cli / "grade_repeats.py")
