"""S_d (Eq. 4 per core dimension) for taxonomy runs, by level-1 or level-2 branch, with no leaf
tagged by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.routing.conftest import hand_built_tree
from typer.testing import CliRunner

from assay.cli import app
from assay.rubric import Taxonomy
from assay.testing import FakeJudgeServer

ITEMS = Path(__file__).parents[2] / "examples" / "taxonomy" / "pha-items.jsonl"
# a3 ("Uses plain language", Medical skills > Communication) fails, every other leaf passes
AUDITOR = {"auditor": {"by_prompt": [["plain language", {"output": "Reason: jargon. [0]"}]],
                       "default": {"output": "Reason: fine. [1]"}}}


def _by_axis(tmp_path, *extra):
    tree = tmp_path / "tree.yaml"
    tree.write_text(yaml.safe_dump(hand_built_tree().model_dump(mode="json")))
    with FakeJudgeServer.run_in_thread(stages=AUDITOR) as server:
        out = CliRunner().invoke(app, [
            "grade", str(ITEMS), "--judge", f"openai-compatible:fake@{server.base_url}",
            "--template", "auditor", "--run-dir", str(tmp_path / "run"), "--quiet",
            "--json", str(tmp_path / "run.json"), "--taxonomy", str(tree), "--router", "all",
            *extra])
    assert out.exit_code == 0, out.output
    by_axis = json.loads((tmp_path / "run.json").read_text())["by_axis"]
    return {name: stat["mean"] for name, stat in by_axis.items()}


def test_level_1_dimensions_are_scored_with_eq4_over_their_own_leaves(tmp_path):
    # Medical skills: a1 (1/8) and a2 (1/8) pass, a3 (1/4) fails -> (1/8 + 1/8) / (1/2) = 1/2
    # Health memory: b1 passes -> 1
    assert _by_axis(tmp_path) == pytest.approx({"Medical skills": 0.5, "Health memory": 1.0})


def test_level_2_dimensions_split_each_capability_into_its_sub_aspects(tmp_path):
    assert _by_axis(tmp_path, "--dimension-level", "2") == pytest.approx({
        "Medical skills > Safety": 1.0, "Medical skills > Communication": 0.0,
        "Health memory > Labs": 1.0})


def test_a_leaf_that_states_its_own_axis_keeps_it():
    tree = Taxonomy(id="t", root={"id": "r", "name": "r", "children": [
        {"id": "A", "name": "Skills", "children": [
            {"id": "a", "name": "a", "criterion": {"id": "a", "text": "A.", "axis": "safety"}},
            {"id": "b", "name": "b", "criterion": {"id": "b", "text": "B."}}]}]})
    assert {c.id: c.axis for c in tree.to_rubric().criteria} == {"a": "safety", "b": "Skills"}


def test_dimension_level_without_a_taxonomy_is_refused(tmp_path):
    out = CliRunner().invoke(app, ["grade", str(ITEMS), "--judge", "vllm:x",
                                   "--dimension-level", "2"])
    assert out.exit_code == 1 and "--dimension-level: applies only with --taxonomy" in out.output
