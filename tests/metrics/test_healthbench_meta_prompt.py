"""Items from ``assay meta-eval --to-items`` send the judge the very prompt simple-evals'
``healthbench_meta_eval.py`` sends: checked byte for byte, step by step, through the CLI, the
grader and real HTTP."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.grading.grader import Grader, GradingConfig
from assay.grading.templates import TEMPLATE_DIR
from assay.io import load_items
from assay.testing import FakeJudgeServer

ROWS = [  # awkward on purpose: several turns, a system turn, blank lines, edge whitespace
    {"prompt": [{"role": "system", "content": "You are a clinic's triage assistant."},
                {"role": "user", "content": "My son (4) swallowed a coin.\n\nHe seems fine?"},
                {"role": "assistant", "content": "Is he breathing normally?"},
                {"role": "user", "content": "  yes, and drooling a bit  "}],
     "completion": "Drooling can mean the coin is stuck: go to the emergency department now.\n",
     "rubric": "Advises urgent in-person care because drooling suggests oesophageal impaction.",
     "binary_labels": [True, True, False], "anonymized_physician_ids": ["p1", "p2", "p3"],
     "category": "cluster:emergency_referrals"},
    {"prompt": [{"role": "system", "content": "You are a clinic's triage assistant."},
                {"role": "user", "content": "My son (4) swallowed a coin.\n\nHe seems fine?"},
                {"role": "assistant", "content": "Is he breathing normally?"},
                {"role": "user", "content": "  yes, and drooling a bit  "}],
     "completion": "Drooling can mean the coin is stuck: go to the emergency department now.\n",
     "rubric": "[5] Uses alarming language such as \"deadly\" without need. ",
     "binary_labels": [False, False], "anonymized_physician_ids": ["p2", "p3"],
     "category": "cluster:communication"},
    {"prompt": [{"role": "user", "content": "Is 38.1 °C a fever for an adult?"}],
     "completion": "Yes — 38.0 °C or above is generally considered a fever.",
     "rubric": "States the 38 °C threshold.", "binary_labels": [True],
     "anonymized_physician_ids": ["p1"], "category": "cluster:accuracy"},
]


def simple_evals_grader_prompt(row: dict) -> str:
    """healthbench_meta_eval.py's HealthBenchMetaEval.__call__ -> fn(row), line for line."""
    grader_template = (TEMPLATE_DIR / "healthbench.txt").read_text(encoding="utf-8").strip()
    convo_with_response = row["prompt"] + [dict(content=row["completion"], role="assistant")]  # noqa: C408
    prompt_str = "\n\n".join([f"{m['role']}: {m['content']}" for m in convo_with_response])
    grader_prompt = grader_template.replace("<<conversation>>", prompt_str)
    return grader_prompt.replace("<<rubric_item>>", row["rubric"])


@pytest.fixture
def items_path(tmp_path) -> Path:
    meta = tmp_path / "meta.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = CliRunner().invoke(app, ["meta-eval", str(meta), "--to-items", str(tmp_path / "items.jsonl")])
    assert out.exit_code == 0, out.output
    return tmp_path / "items.jsonl"


def planned_prompts(items_path: Path) -> dict[str, tuple]:
    grader = Grader(GradingConfig(templates={"all": "healthbench"}))
    return {c.criteria[0].text: c.messages for item in load_items(items_path)
            for c in grader.plan(item, item.rubric, "j")}


def test_to_items_prompts_equal_simple_evals_meta_eval_prompts_byte_for_byte(items_path):
    prompts = planned_prompts(items_path)
    assert len(prompts) == len(ROWS)
    for row in ROWS:
        assert prompts[row["rubric"]] == (
            {"role": "system", "content": "You are a helpful assistant."},  # simple-evals' grader
            {"role": "user", "content": simple_evals_grader_prompt(row)})


def test_the_rubric_item_is_the_bare_string_not_points_and_text(items_path):
    user = planned_prompts(items_path)[ROWS[2]["rubric"]][1]["content"]
    assert "# Rubric item\nStates the 38 °C threshold.\n\n# Instructions" in user
    assert "[1] States" not in user


def test_golden_hash_of_the_first_prompt(items_path):
    # The bytes simple-evals' meta-eval builds for ROWS[0] (from the algorithm above, frozen):
    # a change to the template, the conversation rendering or the rubric fill fails here.
    user = planned_prompts(items_path)[ROWS[0]["rubric"]][1]["content"]
    assert hashlib.sha256(user.encode()).hexdigest() == hashlib.sha256(
        simple_evals_grader_prompt(ROWS[0]).encode()).hexdigest() == (
        "be01222433c0fa9ad8341f18fc63c417da4dc8203510461899d85bd41435ede9")


async def test_the_judge_receives_those_bytes_over_http(items_path, tmp_path):
    async with FakeJudgeServer(policy="MET") as server:
        await assay.agrade(items_path, healthbench=True, judges=[
            f"openai-compatible:fake@{server.base_url}"], run_dir=tmp_path / "run")
    sent = {r["body"]["messages"][1]["content"] for r in server.requests}
    assert sent == {simple_evals_grader_prompt(row) for row in ROWS}
