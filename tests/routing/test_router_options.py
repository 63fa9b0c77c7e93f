"""An option a router would ignore is refused before any call: a run does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import ConfigError
from assay.routing.run import route_and_grade
from assay.runs.options import RunOptions

ITEMS = Path(__file__).parents[2] / "examples" / "taxonomy" / "pha-items.jsonl"
JUDGE = "openai-compatible:fake@http://127.0.0.1:9"  # never called: refused first


def _grade(tmp_path, *extra):
    return CliRunner().invoke(app, ["grade", str(ITEMS), "--judge", JUDGE, "--run-dir",
                                    str(tmp_path / "run"), "--quiet", *extra])


def test_a_threshold_for_the_every_leaf_router_is_refused(tmp_path):
    out = _grade(tmp_path, "--taxonomy", "starter", "--router", "all", "--router-threshold",
                 "0.5")
    assert out.exit_code == 1
    assert "--router-threshold: the all router ignores it: drop it" in out.output
    assert not (tmp_path / "run").exists()


def test_a_router_judge_for_the_embedding_router_is_refused(tmp_path):
    out = _grade(tmp_path, "--taxonomy", "starter", "--router", "embedding", "--router-judge",
                 JUDGE)
    assert out.exit_code == 1 and "--router-judge: the embedding router ignores it" in out.output


def test_router_options_without_a_taxonomy_are_refused(tmp_path):
    out = _grade(tmp_path, "--router", "catalogue")
    assert out.exit_code == 1 and "--router: applies only with --taxonomy: give it" in out.output


def test_route_run_refuses_a_threshold_the_catalogue_router_ignores(tmp_path):
    out = CliRunner().invoke(app, ["route", "run", str(ITEMS), "--taxonomy", "starter",
                                   "--router", "catalogue", "--judge", JUDGE, "--threshold",
                                   "0.5", "--out", str(tmp_path / "r.jsonl"),
                                   "--job-dir", str(tmp_path / "job")])
    assert out.exit_code == 1 and "--threshold: the catalogue router ignores it" in out.output


def test_the_library_refuses_them_too(tmp_path, tree):
    with pytest.raises(ConfigError, match="the catalogue router ignores its threshold"):
        route_and_grade([], tree, RunOptions(judges=[JUDGE]), tmp_path / "run",
                        router="catalogue", threshold=0.5)
