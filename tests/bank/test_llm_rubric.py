"""Health-SCORE's LLM-Generated baseline: a rubric written per prompt, traced, stored, reused as
the reward's criteria (assay serve / build_scorer) and as the items' rubrics (assay eval)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import app
from assay.evaluation import aevaluate
from assay.judges import run_sync
from assay.rewards import RewardItem, build_scorer
from assay.testing import FakeJudgeServer, ModelScript
from assay.testing.policies import PerCriterionPolicy

PROMPT = "My LDL came back at 168. Is that bad?"
RUBRIC = {"rubrics": [
    {"criterion": "States that an LDL of 168 mg/dL is above the usual target.", "desirable": True},
    {"criterion": "Suggests discussing treatment with a doctor.", "desirable": True},
    {"criterion": "Tells the user to start a statin on their own.", "desirable": False}]}
# the doctor criterion is not met; the undesirable one is not met either (good)
POLICY = PerCriterionPolicy({"Suggests discussing treatment with a doctor.": "UNMET",
                             "Tells the user to start a statin on their own.": "UNMET"},
                            default="MET")


EXAMPLES = Path(__file__).parents[2] / "examples"


def generations(server):
    return [r for r in server.requests if r.get("stage") == "llm_rubric"]


def test_a_prompts_rubric_is_written_once_and_rewards_against_it(tmp_path):
    store = tmp_path / "rubrics.sqlite"
    with FakeJudgeServer.run_in_thread(policy=POLICY, stages={"llm_rubric": RUBRIC}) as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        scorer = build_scorer(spec, bank="llm-generated", store=store)
        group = [RewardItem.of(PROMPT, answer) for answer in ("It is high.", "It is fine.")]
        rewards = run_sync(scorer.score(group))
        run_sync(scorer.aclose())
        again = build_scorer(spec, bank="llm-generated", store=store)  # a restarted server
        [later] = run_sync(again.score([RewardItem.of(PROMPT, "It is high.")]))
        run_sync(again.aclose())
        [generation] = generations(server)
    prompt = generation["body"]["messages"][-1]["content"]
    assert prompt.startswith("Generate a list of appropriate rubrics in natural language")
    assert f"user: {PROMPT}" in prompt
    assert [r.criteria for r in rewards] == [["llm-01", "llm-02", "llm-03"]] * 2
    # minmax: (met positives − met penalties + N₋) / (N₊ + N₋) = (1 − 0 + 1) / 3
    assert rewards[0].reward == later.reward == 2 / 3


def test_a_generated_rubric_without_a_criterion_gives_no_reward(tmp_path):
    with FakeJudgeServer.run_in_thread(stages={"llm_rubric": {"rubrics": [
            {"criterion": "  ", "desirable": True}]}}) as server:
        scorer = build_scorer(f"openai-compatible:fake@{server.base_url}", bank="llm-generated",
                              store=tmp_path / "s.sqlite")
        [reward] = run_sync(scorer.score([RewardItem.of(PROMPT, "It is high.")]))
        run_sync(scorer.aclose())
        graded = [r for r in server.requests if r.get("stage") != "llm_rubric"]
    assert reward.reward is None and not graded
    assert scorer.failures.selections == 1


def test_assay_eval_grades_answers_against_the_rubrics_assay_bank_wrote(tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"id": "ldl", "prompt": PROMPT}) + "\n")
    with FakeJudgeServer.run_in_thread(policy=POLICY, stages={"llm_rubric": RUBRIC}, models={
            "bot": ModelScript(default="It is high.")}) as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        out = CliRunner().invoke(app, ["bank", "llm-rubrics", str(prompts), "--judge", spec,
                                       "--out", str(tmp_path / "items.jsonl"), "--quiet"])
        assert out.exit_code == 0, out.output
        result = run_sync(aevaluate(tmp_path / "items.jsonl", run_dir=tmp_path / "ev",
                                    model=f"openai-compatible:bot@{server.base_url}",
                                    judges=[spec]))
        graded = {r["criterion_id"] for r in server.requests if r.get("criterion_id")}
        n_generations = len(generations(server))
    [item] = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [c["id"] for c in item["rubric"]["criteria"]] == ["llm-01", "llm-02", "llm-03"]
    assert (result.status, result.stage) == ("complete", "done")
    assert graded == {"llm-01", "llm-02", "llm-03"} and n_generations == 1


def test_the_shipped_replies_give_every_healthbench_example_a_rubric(tmp_path):
    replies = EXAMPLES / "health-score" / "llm-rubric-replies.yaml"
    with FakeJudgeServer.run_in_thread(stages=replies) as server:
        out = CliRunner().invoke(app, [
            "bank", "llm-rubrics", str(EXAMPLES / "healthbench" / "examples.jsonl"), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--out", str(tmp_path / "items.jsonl"),
            "--quiet"])
    assert out.exit_code == 0, out.output
    rubrics = [json.loads(line)["rubric"] for line in
               (tmp_path / "items.jsonl").read_text().splitlines()]
    assert len(rubrics) == 5 and all(len(r["criteria"]) == 5 for r in rubrics)
    assert "5 prompts: 5.0 generated criteria on average" in " ".join(out.output.split())
