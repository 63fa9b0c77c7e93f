"""Health-SCORE's Single-Axis and Multi-Axes baselines as reward criteria (seed 004 Table 2)."""

from __future__ import annotations

import json

import pytest

from assay.bank.baselines import baseline_rubric
from assay.bank.shipped import load_bank
from assay.bank.system_prompt import MULTI_AXES, system_prompt
from assay.evaluation import aevaluate
from assay.judges import run_sync
from assay.rewards import RewardItem, build_scorer
from assay.runs.options import load_rubric
from assay.testing import FakeJudgeServer, ModelScript
from assay.testing.policies import PerCriterionPolicy

# Health-SCORE §4.3 (arXiv text, seed 004 line 129): the Single-Axis rubric, quoted
PAPER_SINGLE_AXIS = ('**Single-Axis** Single-Axis Instruction-only rubrics use a single-axis, '
                     'generic rubric applied across domains: "You are a helpful assistant. Please '
                     'generate a response that follows user instructions."')


def test_the_single_axis_criterion_is_the_papers_rubric_word_for_word():
    [criterion] = load_bank("single-axis").criteria
    assert f'"{criterion.text}"' == PAPER_SINGLE_AXIS.split("domains: ")[1]
    assert criterion.text == system_prompt("single-axis")  # the in-context condition's text
    assert criterion.weight == 1


def test_the_multi_axes_criteria_are_the_multi_axes_system_prompts_five():
    rubric = load_bank("multi-axes")
    assert [c.text for c in rubric.criteria] == [c.text for c in MULTI_AXES]
    assert {c.axis for c in rubric.criteria} == {"accuracy", "completeness",
                                                 "communication_quality", "context_awareness",
                                                 "instruction_following"}
    prompt = system_prompt("multi-axes")
    assert prompt is not None and all(c.text in prompt for c in rubric.criteria)


def test_a_baseline_name_is_a_run_wide_rubric_for_grade_and_eval():
    assert load_rubric("multi-axes") == (baseline_rubric("multi-axes"), "multi-axes")


def test_a_reward_scorer_over_multi_axes_rewards_each_axis(tmp_path):
    policy = PerCriterionPolicy({MULTI_AXES[0].text: "UNMET"}, default="MET")
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        scorer = build_scorer(spec, bank="multi-axes")
        [reward] = run_sync(scorer.score([RewardItem.of("Is 168 LDL bad?", "It is high.")]))
        run_sync(scorer.aclose())
        graded = {r["criterion_text"] for r in server.requests}
    assert reward.criteria == [c.id for c in MULTI_AXES]
    assert graded == {c.text for c in MULTI_AXES}  # one HealthBench-template call per axis
    assert reward.reward == pytest.approx(4 / 5)  # minmax over five positive criteria


async def test_assay_eval_grades_the_model_against_the_single_axis_rubric(serve, tmp_path):
    items = tmp_path / "prompts.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i}", "prompt": p}) + "\n"
                             for i, p in enumerate(["Is 168 LDL bad?", "Why am I tired?"])))
    server = await serve(policy="MET", models={"bot": ModelScript(default="See a doctor.")})
    result = await aevaluate(items, rubric="single-axis", run_dir=tmp_path / "ev",
                             model=f"openai-compatible:bot@{server.base_url}",
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    assert (result.status, result.stage) == ("complete", "done")
    graded = [r for r in server.requests if r.get("criterion_id") == "single-axis"]
    assert len(graded) == 2 and result.graded.scores == {"q0": 1.0, "q1": 1.0}
