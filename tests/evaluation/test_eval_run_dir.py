"""An eval's directory: a failed first attempt never blocks the corrected command; other settings
over answered calls are refused with the way on; a finished eval resumes with no request; a row
that is not HealthBench's is named against the user's own file."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from assay.errors import ConfigError, InputError
from assay.evaluation import aevaluate
from assay.testing import ModelScript

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "healthbench" / "examples.jsonl"


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


async def test_a_wrong_model_url_fails_as_the_model_under_test_and_the_fix_runs_in_place(
        serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    judge = [f"openai-compatible:fake@{server.base_url}"]
    with pytest.raises(ConfigError, match=r"^model under test 'openai-compatible:bot@.*': cannot reach"):
        await aevaluate(EXAMPLES, healthbench=True, examples=2, run_dir=tmp_path / "ev",
                        model=f"openai-compatible:bot@{closed_port_url()}", judges=judge)
    fixed = await aevaluate(EXAMPLES, healthbench=True, examples=2, run_dir=tmp_path / "ev",
                            model=f"openai-compatible:bot@{server.base_url}", judges=judge)
    assert fixed.stage == "done" and fixed.settings["model"].endswith(server.base_url)


async def test_a_wrong_judge_is_replaced_and_the_answers_already_sampled_are_kept(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    args = {"healthbench": True, "examples": 2, "run_dir": tmp_path / "ev",
            "model": f"openai-compatible:bot@{server.base_url}"}
    with pytest.raises(ConfigError, match="cannot reach"):
        await aevaluate(EXAMPLES, judges=[f"openai-compatible:fake@{closed_port_url()}"], **args)
    sampled = sum(r["stage"] == "model:bot" for r in server.requests)
    assert sampled == 2
    fixed = await aevaluate(EXAMPLES, judges=[f"openai-compatible:fake@{server.base_url}"], **args)
    assert fixed.stage == "done"
    assert sum(r["stage"] == "model:bot" for r in server.requests) == sampled  # none again


async def test_other_settings_over_answered_calls_are_refused_with_the_way_on(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    args = {"healthbench": True, "run_dir": tmp_path / "ev",
            "judges": [f"openai-compatible:fake@{server.base_url}"],
            "model": f"openai-compatible:bot@{server.base_url}"}
    await aevaluate(EXAMPLES, examples=2, **args)
    with pytest.raises(ConfigError) as refused:
        await aevaluate(EXAMPLES, examples=3, temperature=0.2, **args)
    message = str(refused.value)
    assert "examples: 2 -> 3" in message and "temperature: null -> 0.2" in message
    assert f"assay eval --resume {tmp_path / 'ev'}" in message and "another --run-dir" in message


async def test_a_finished_eval_resumes_without_any_request(serve, tmp_path):
    server = await serve(models={"bot": ModelScript()})
    first = await aevaluate(EXAMPLES, healthbench=True, examples=2, run_dir=tmp_path / "ev",
                            model=f"openai-compatible:bot@{server.base_url}",
                            judges=[f"openai-compatible:fake@{server.base_url}"])
    requests, preflights = len(server.requests), server.preflights
    again = await aevaluate(resume=tmp_path / "ev")
    assert (len(server.requests), server.preflights) == (requests, preflights)
    assert again.metrics == first.metrics and again.graded is None  # read back, not graded


async def test_an_eval_stopped_before_its_record_continues_with_its_command(serve, tmp_path):
    run = tmp_path / "ev"
    run.mkdir()
    (run / "items.jsonl").write_text("half written")  # killed between the two files
    with pytest.raises(ConfigError, match="stopped before it started: run its command again"):
        await aevaluate(resume=run)
    server = await serve(models={"bot": ModelScript()})
    done = await aevaluate(EXAMPLES, healthbench=True, examples=2, run_dir=run,
                           model=f"openai-compatible:bot@{server.base_url}",
                           judges=[f"openai-compatible:fake@{server.base_url}"])
    assert done.stage == "done"


async def test_a_row_that_is_not_healthbench_is_named_in_the_users_file(tmp_path):
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    del rows[2]["rubrics"]
    rows[3]["prompt_id"] = 7
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as refused:
        await aevaluate(mine, healthbench=True, run_dir=tmp_path / "ev", model="openai:m",
                        judges=["openai:j"])
    message = str(refused.value)
    assert f"{mine}:3: rubrics:" in message and f"{mine}:4: prompt_id:" in message
    assert "items.jsonl" not in message and not (tmp_path / "ev").exists()
