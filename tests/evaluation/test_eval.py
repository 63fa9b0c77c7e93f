"""``assay eval``: sample, grade, score and report in one resumable run; worst-at-k."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evaluation import aevaluate, expected_minimum, select_examples, worst_at_k
from assay.testing import FakeJudgeServer, Faults, ModelScript

ASSAY = [str(Path(sys.executable).parent / "assay")]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "healthbench" / "examples.jsonl"


def good_answers_met(view) -> str:
    """A judge that finds every criterion met in a 'good' answer and none in a 'bad' one."""
    return "MET" if "good" in (view.response_text or "") else "UNMET"


def test_expected_minimum_equals_the_mean_over_every_subset():
    scores = [0.9, 0.1, 0.4, 0.7, 0.4]
    for k in range(1, 6):
        subsets = list(itertools.combinations(scores, k))
        assert expected_minimum(scores, k) == pytest.approx(
            sum(min(s) for s in subsets) / len(subsets))


def test_worst_at_k_refuses_examples_with_different_numbers_of_answers():
    with pytest.raises(Exception, match="same number of scored answers"):
        worst_at_k({"a": [0.5, 0.5], "b": [0.5]})


def test_the_examples_subset_is_the_one_simple_evals_draws():
    lines = [f"line{i}" for i in range(20)]
    assert select_examples(lines, 5, 0) == random.Random(0).sample(lines, 5)
    assert select_examples(lines, 50, 0) == lines


async def test_an_eval_samples_grades_and_scores_with_a_worst_at_k_curve(serve, tmp_path):
    server = await serve(policy=good_answers_met,
                         models={"bot": ModelScript(default="fine", answers={
                             "BEE": ["a good answer", "a bad answer"]})})
    result = await aevaluate(EXAMPLES, healthbench=True, run_dir=tmp_path / "ev", n=2,
                             model=f"openai-compatible:bot@{server.base_url}",
                             judges=[f"openai-compatible:fake@{server.base_url}"],
                             sampling_seed=0)
    assert (result.status, result.stage) == ("complete", "done")
    scores = result.graded.scores
    bee = [v for k, v in scores.items() if k.startswith("93f54838")]
    assert sorted(bee) != [bee[0], bee[0]]  # the two answers scored differently
    by_prompt: dict[str, list[float]] = {}
    for key, value in scores.items():
        by_prompt.setdefault(key.split("#")[0], []).append(value)
    mean_min = sum(min(v) for v in by_prompt.values()) / 5
    assert result.worst_at_k[2] == pytest.approx(max(0.0, mean_min))
    assert result.worst_at_k[1] == pytest.approx(result.metrics["overall_score"])
    saved = json.loads((tmp_path / "ev" / "metrics.json").read_text())
    assert saved["overall_score:n_samples"] == 10 and "axis:accuracy" in saved
    assert set(saved["worst_at_k"]) == {"1", "2"}
    assert (tmp_path / "ev" / "report.html").stat().st_size > 0


async def test_an_eval_stops_at_a_failed_stage_and_resumes_without_repeating_calls(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()}, faults=Faults(server_error=1.0))
    spec = f"openai-compatible:bot@{server.base_url}"
    judge = f"openai-compatible:fake@{server.base_url}"
    first = await aevaluate(EXAMPLES, healthbench=True, run_dir=tmp_path / "ev", model=spec,
                            judges=[judge], examples=3)
    assert (first.status, first.stage, first.metrics) == ("incomplete", "sample", {})
    assert not (tmp_path / "ev" / "metrics.json").exists()
    server.faults = Faults()
    server.reset()
    done = await aevaluate(resume=tmp_path / "ev")
    assert done.stage == "done" and done.metrics["overall_score:n_samples"] == 3
    sampled_again = [r for r in server.requests if r["stage"] == "model:bot"]
    assert len(sampled_again) == 3  # each failed sample once; nothing finished was redone
    server.reset()
    await aevaluate(resume=tmp_path / "ev")
    assert server.requests == []


async def test_an_eval_with_other_settings_in_the_same_directory_is_refused(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    kwargs = {"healthbench": True, "run_dir": tmp_path / "ev", "judges": [
        f"openai-compatible:fake@{server.base_url}"], "model":
        f"openai-compatible:bot@{server.base_url}"}
    await aevaluate(EXAMPLES, examples=2, **kwargs)
    with pytest.raises(ConfigError, match="examples"):
        await aevaluate(EXAMPLES, examples=3, **kwargs)


def test_the_cli_prints_the_metrics_writes_json_and_exits_5_under_fail_under(tmp_path):
    with FakeJudgeServer.run_in_thread(policy="UNMET", models={"bot": {}}) as server:
        done = subprocess.run(
            [*ASSAY, "eval", str(EXAMPLES), "--healthbench", "--model",
             f"openai-compatible:bot@{server.base_url}", "--judge",
             f"openai-compatible:fake@{server.base_url}", "--run-dir", str(tmp_path / "ev"),
             "--json", str(tmp_path / "m.json"), "--fail-under", "0.5", "-q"],
            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 5, done.stderr
    assert "overall_score" in done.stdout and "below --fail-under 0.5" in done.stderr
    assert json.loads((tmp_path / "m.json").read_text())["overall_score"] < 0.5


async def test_two_conditions_are_two_evals_compared_with_paired_tests(serve, tmp_path):
    def answer(messages):
        return "a good answer" if messages[0]["role"] == "system" else "a bad answer"

    server = await serve(policy=good_answers_met, models={"bot": ModelScript(default=answer)})
    result = await aevaluate(EXAMPLES, healthbench=True, run_dir=tmp_path / "ev",
                             condition=["none", "single-axis"],
                             model=f"openai-compatible:bot@{server.base_url}",
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    assert result.stage == "done" and set(result.conditions) == {"none", "single-axis"}
    none, prompted = result.conditions["none"], result.conditions["single-axis"]
    assert none.metrics["overall_score"] < prompted.metrics["overall_score"]
    assert result.comparison.n_items == 5
    assert result.comparison.mean_difference.value == pytest.approx(
        result.comparison.mean_a.value - result.comparison.mean_b.value)
    saved = json.loads((tmp_path / "ev" / "comparison.json").read_text())
    assert saved["conditions"] == ["none", "single-axis"] and "comparison" in saved
    server.reset()
    again = await aevaluate(resume=tmp_path / "ev")
    assert again.comparison == result.comparison and server.requests == []


async def test_the_handbook_condition_renders_the_taxonomy_as_the_system_prompt(serve, tmp_path):
    from assay.io import read_taxonomy
    from assay.routing.data import STARTER_TAXONOMY
    from assay.sampling import asample, render_handbook

    server = await serve(models={"bot": ModelScript()})
    await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}",
                  out=tmp_path / "r.jsonl", condition="handbook", taxonomy="starter")
    system = server.requests[0]["body"]["messages"][0]
    assert system == {"role": "system",
                      "content": render_handbook(read_taxonomy(STARTER_TAXONOMY))}
    assert "## Medical skills" in system["content"]


async def test_the_adaptive_condition_uses_each_items_own_selection(serve, tmp_path):
    from assay.bank.shipped import load_bank
    from assay.bank.system_prompt import system_prompt
    from assay.sampling import asample

    bank = load_bank("health-score")
    ids = [json.loads(line)["prompt_id"] for line in EXAMPLES.read_text().splitlines()]
    picks = {pid: [bank.criteria[i].id, bank.criteria[i + 1].id] for i, pid in enumerate(ids)}
    selection = tmp_path / "sel.jsonl"
    selection.write_text("".join(json.dumps({"item_id": k, "selected": v}) + "\n"
                                 for k, v in picks.items()))
    server = await serve(models={"bot": ModelScript()})
    await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}",
                  out=tmp_path / "r.jsonl", condition="health-score-adaptive",
                  selection=selection, concurrency=1)
    sent = {r["body"]["messages"][0]["content"] for r in server.requests}
    expected = {system_prompt("health-score-adaptive", [bank.criterion(c) for c in v])
                for v in picks.values()}
    assert sent == expected and len(sent) == 5


async def test_an_item_without_an_adaptive_selection_is_refused_before_any_call(serve, tmp_path):
    from assay.errors import InputError
    from assay.sampling import asample

    selection = tmp_path / "sel.jsonl"
    selection.write_text(json.dumps({"item_id": "other", "selected": ["hs-01"]}) + "\n")
    server = await serve(models={"bot": ModelScript()})
    with pytest.raises(InputError, match="no selection for this item"):
        await asample(EXAMPLES, model=f"openai-compatible:bot@{server.base_url}",
                      out=tmp_path / "r.jsonl", condition="health-score-adaptive",
                      selection=selection)
    assert server.requests == []


def test_an_option_the_condition_does_not_use_is_refused():
    from assay.sampling import system_prompts

    with pytest.raises(ConfigError, match="--taxonomy is not used by --condition single-axis"):
        system_prompts(condition="single-axis", taxonomy="starter")
