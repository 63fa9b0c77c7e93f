"""HealthBench mode end to end (hand-computed official score), and the CLI's other paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, spec
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.testing import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "healthbench" / "examples.jsonl"


def scripted(view) -> str:
    """The fake judge's script: MET when the criterion text has an even length."""
    return "MET" if len(view.criterion_text) % 2 == 0 else "UNMET"


def hand_computed_official_score(examples: list[dict]) -> float:
    per_example = []
    for example in examples:
        met = sum(r["points"] for r in example["rubrics"] if len(r["criterion"]) % 2 == 0)
        positive = sum(r["points"] for r in example["rubrics"] if r["points"] > 0)
        per_example.append(met / positive)  # not clipped per example
    return min(1.0, max(0.0, sum(per_example) / len(per_example)))  # the mean is clipped


async def test_healthbench_score_of_a_scripted_run_equals_the_hand_computation(tmp_path):
    examples = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    async with FakeJudgeServer(policy=scripted) as server:
        result = await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[spec(server)],
                                    run_dir=tmp_path / "run")
    assert len(server.requests) == sum(len(e["rubrics"]) for e in examples)
    assert all(r["criteria"][0]["template"] == "healthbench" for r in server.requests)
    assert result.overall == pytest.approx(hand_computed_official_score(examples), abs=1e-12)
    assert result.healthbench.n == 5 and result.healthbench.metrics["overall_score:n_samples"] == 5
    # `assay score RUN` with no settings rescores with the run's own (HealthBench) formula
    out = CliRunner().invoke(app, ["score", str(result.run_dir), "--json", str(tmp_path / "s.json")])
    assert out.exit_code == 0, out.output
    rescored = json.loads((tmp_path / "s.json").read_text())["summary"]
    assert rescored["formula"] == "healthbench"
    assert rescored["healthbench"]["overall"] == result.overall


def test_cli_healthbench_mode_grades_the_given_responses_only(tmp_path):
    responses = tmp_path / "responses.jsonl"
    ids = [json.loads(line)["prompt_id"] for line in EXAMPLES.read_text().splitlines()][:2]
    responses.write_text("".join(json.dumps({"prompt_id": i, "response": "See a doctor."}) + "\n"
                                 for i in ids))
    with FakeJudgeServer.run_in_thread(policy="UNMET") as server:
        out = CliRunner().invoke(app, [
            "grade", str(EXAMPLES), "--healthbench", "--responses", str(responses),
            "--judge", spec(server), "--run-dir", str(tmp_path / "run"), "--quiet",
            "--json", str(tmp_path / "summary.json")])
    assert out.exit_code == 0, out.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["summary"]["n_items"] == 2 and summary["overall"] == 0.0
    assert {r["response_text"] for r in server.requests} == {"See a doctor."}
    assert "3 items had no response" in out.output


def test_cli_healthbench_mode_without_responses_is_a_clear_error(tmp_path):
    out = CliRunner().invoke(app, ["grade", str(EXAMPLES), "--healthbench", "--judge", "vllm:x"])
    assert out.exit_code == 1 and "--responses: HealthBench mode needs the responses" in out.output


def test_dry_run_counts_calls_and_calls_nothing(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                       "--judge", spec(server), "--judge", spec(server), "--dry-run"])
        assert server.requests == []
    assert out.exit_code == 0, out.output
    assert "dry run: 6 items" in out.output and out.output.count(" 24 ") == 2


def test_cli_grade_prints_the_summary_and_exports(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                       "--judge", spec(server), "--run-dir", str(tmp_path / "run"),
                                       "--quiet", "--export", str(tmp_path / "v.jsonl")])
    assert out.exit_code == 0, out.output
    for text in ("overall (autorubric)", "0.8182", "by axis", "by theme", "calls, tokens, cost"):
        assert text in out.output
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 24


def test_bad_item_lines_are_reported_with_file_line_and_field(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "q1", "prompt": "Bee?", "response": "Ice."}\n{"id": "q2"}\n')
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric_file),
                                       "--judge", spec(server), "--run-dir", str(tmp_path / "run"),
                                       "--quiet"])
    assert out.exit_code == 4  # incomplete: a skipped line is never a complete run
    assert "items.jsonl:2: messages: required field is missing" in out.output


def test_an_item_without_a_response_is_reported_and_the_others_are_graded(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "q1", "prompt": "Bee?", "response": "Ice."}\n{"id": "q2", "prompt": "Bee?"}\n')
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric_file),
                                       "--judge", spec(server), "--run-dir", str(tmp_path / "run"),
                                       "--quiet"])
    assert out.exit_code == 4  # incomplete
    assert "items.jsonl: item[q2].response: no response to grade" in out.output
    assert "1 / 2" in out.output and len(server.requests) == 4  # of the 2 items of the input


def test_unreachable_judge_fails_before_any_work_starts(tmp_path, items_file, rubric_file):
    import socket

    with socket.socket() as probe:  # a loopback port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run_dir = tmp_path / "run"
    out = CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                   "--judge", f"openai-compatible:fake@http://127.0.0.1:{port}/v1",
                                   "--run-dir", str(run_dir), "--quiet"])
    assert out.exit_code == 1
    assert f"127.0.0.1:{port}" in out.output
    assert not run_dir.exists()


async def test_healthbench_mode_samples_the_grader_as_simple_evals_does(tmp_path):
    async with FakeJudgeServer(policy="MET") as server:
        await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[spec(server)],
                           run_dir=tmp_path / "run")
    bodies = [r["body"] for r in server.requests]
    assert {b.get("temperature") for b in bodies} == {0.5}
    assert {b.get("max_tokens") for b in bodies} == {2048}


def test_dry_run_prices_a_known_model_from_its_planned_tokens(items_file, rubric_file):
    from assay.grading.grader import Grader, GradingConfig
    from assay.io import load_items, read_rubric
    from assay.judges.pricing import estimate_cost
    from assay.judges.specs import config_from
    from assay.runs.dryrun import REPLY_TOKENS, estimate

    config = config_from("openai-compatible:gpt-4.1-mini@http://127.0.0.1:9/v1", None)
    n_items, [judge] = estimate(iter(load_items(items_file)), Grader(GradingConfig()), [config],
                                read_rubric(rubric_file))
    cost = judge.cost
    assert (n_items, cost.n_calls) == (6, 24)
    assert cost.completion_tokens == 24 * REPLY_TOKENS
    assert cost.priced and cost.usd > 0
    assert cost.usd == estimate_cost("gpt-4.1-mini", cost.prompt_tokens, cost.completion_tokens).usd


async def test_the_healthbench_template_from_a_file_keeps_its_sampling(tmp_path):
    import shutil

    from assay.grading.templates import TEMPLATE_DIR

    for name in ("healthbench.yaml", "healthbench.txt"):
        shutil.copy(TEMPLATE_DIR / name, tmp_path / name)
    async with FakeJudgeServer(policy="MET") as server:
        await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[spec(server)],
                           template=str(tmp_path / "healthbench.yaml"), run_dir=tmp_path / "run")
    bodies = [r["body"] for r in server.requests]
    assert {(b.get("temperature"), b.get("max_tokens")) for b in bodies} == {(0.5, 2048)}


async def test_a_judge_config_overrides_the_template_sampling(tmp_path):
    from assay.judges.specs import config_from

    async with FakeJudgeServer(policy="MET") as server:
        judge = config_from(spec(server), None).model_copy(update={"temperature": 0.0})
        await assay.agrade(EXAMPLES, healthbench=True, ideal=True, judges=[judge],
                           run_dir=tmp_path / "run")
    bodies = [r["body"] for r in server.requests]
    assert {(b.get("temperature"), b.get("max_tokens")) for b in bodies} == {(0.0, 2048)}
