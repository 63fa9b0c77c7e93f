"""Issue 27.6 and 27.1 (dry runs): ``--dry-run`` counts what the run would really send (not the
calls the ``--cache`` answers, not those a resumed run has finished), writes ``--json``, and
exits non-zero when it lists an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.testing import FakeJudgeServer


def dry_run(*args: str, json_out: Path) -> tuple[int, dict]:
    out = CliRunner().invoke(app, ["grade", *args, "--dry-run", "--json", str(json_out)])
    assert "Traceback" not in out.output, out.output
    return out.exit_code, json.loads(json_out.read_text())


def test_a_dry_run_writes_its_counts_to_json(tmp_path, items_file, rubric_file):
    code, plan = dry_run(str(items_file), "--rubric", str(rubric_file), "--judge",
                         "openai-compatible:gpt-4.1-mini@http://127.0.0.1:9/v1",
                         json_out=tmp_path / "plan.json")
    assert code == 0
    assert (plan["dry_run"], plan["status"], plan["items"], plan["calls"]) == (True, "ok", 6, 24)
    [judge] = plan["judges"]
    assert judge["calls"] == 24 and judge["priced"] and judge["usd_est"] > 0
    assert judge["prompt_tokens"] > 0 and (judge["cached"], judge["finished"]) == (0, 0)


def test_a_dry_run_resuming_a_complete_run_counts_no_call(tmp_path, items_file, rubric_file):
    run = tmp_path / "run"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assert assay.grade(items_file, rubric=rubric_file, judges=[spec(server)],
                           run_dir=run).status == "complete"
    code, plan = dry_run("--resume", str(run), json_out=tmp_path / "plan.json")
    assert code == 0
    assert (plan["calls"], plan["finished"], plan["usd_est"]) == (0, 24, None)  # unpriced model
    assert plan["judges"][0]["prompt_tokens"] == 0


def test_a_dry_run_resuming_a_stopped_run_counts_the_calls_the_resume_makes(tmp_path,
                                                                            rubric_file):
    items = write_items(tmp_path / "items.jsonl", 10)  # 40 calls
    run = tmp_path / "run"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        priced = f"openai-compatible:gpt-4.1-mini@{server.base_url}"
        stopped = assay.grade(items, rubric=rubric_file, judges=[priced], run_dir=run,
                              budget_usd=0.002, concurrency=2)
        assert stopped.status == "budget"
        [(finished,)] = rows(run, "SELECT COUNT(*) FROM calls WHERE status = 'ok'")
        assert 0 < finished < 40
        code, plan = dry_run("--resume", str(run), json_out=tmp_path / "plan.json")
        server.reset()
        resumed = assay.grade(resume=run, budget_usd=10.0)
        made = {(r["response_text"], r["criterion_id"]) for r in server.requests}
    assert code == 0 and resumed.status == "complete"
    assert (plan["calls"], plan["finished"]) == (40 - finished, finished)
    assert plan["calls"] == len(made)  # what the dry run counted is what the resume sent


def test_a_dry_run_does_not_count_the_calls_the_cache_answers(tmp_path, items_file,
                                                             rubric_file):
    cache = tmp_path / "cache.sqlite"
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        assay.grade(items_file, rubric=rubric_file, judges=[spec(server)],
                    run_dir=tmp_path / "first", cache_path=cache)
        code, plan = dry_run(str(items_file), "--rubric", str(rubric_file), "--judge",
                             spec(server), "--cache", str(cache), "--run-dir",
                             str(tmp_path / "second"), json_out=tmp_path / "plan.json")
    assert code == 0
    assert (plan["calls"], plan["cached"], plan["finished"]) == (0, 24, 0)
    assert plan["preflight_requests"] == 0  # a run served from the cache sends none
    assert not (tmp_path / "second").exists()  # a dry run makes no run


def test_a_dry_run_that_lists_errors_exits_non_zero(tmp_path, rubric_file):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "q1", "prompt": "Bee?", "response": "Ice."}\n'
                     '{"id": "q2"}\n'                                  # malformed: no prompt
                     '{"id": "q3", "prompt": "Wasp?"}\n')              # no response to grade
    out = CliRunner().invoke(app, ["grade", str(items), "--rubric", str(rubric_file), "--judge",
                                   "openai-compatible:fake@http://127.0.0.1:9/v1", "--dry-run",
                                   "--json", str(tmp_path / "plan.json")])
    assert out.exit_code == 1, out.output
    assert "items.jsonl:2: messages: required field is missing" in out.output
    assert "item[q3].response: no response to grade" in out.output
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["status"] == "error" and len(plan["issues"]) == 2 and plan["calls"] == 4


def test_a_dry_run_shows_the_live_and_the_batch_price(tmp_path, items_file, rubric_file):
    code, plan = dry_run(str(items_file), "--rubric", str(rubric_file), "--judge",
                         "openai-compatible:gpt-4.1-mini@http://127.0.0.1:9/v1",
                         json_out=tmp_path / "plan.json")
    assert code == 0 and plan["usd_est"] > 0
    preflight = plan["judges"][0]["preflight_usd_est"]  # a live request either way
    assert plan["usd_batch_est"] == pytest.approx((plan["usd_est"] - preflight) / 2 + preflight,
                                                  abs=1e-6)
    assert plan["judges"][0]["usd_batch_est"] == pytest.approx(
        (plan["judges"][0]["usd_est"] - preflight) / 2 + preflight, abs=1e-6)


def test_a_dry_run_counts_each_judges_preflight_request_and_its_price(tmp_path, items_file,
                                                                     rubric_file):
    """Issue 40, point 3: the preflight is sent and paid before the first call."""
    import orjson

    from assay.judges.preflight import PREFLIGHT_MAX_TOKENS, PREFLIGHT_PROMPT, PREFLIGHT_SCHEMA
    from assay.judges.pricing import tokens_in

    code, plan = dry_run(str(items_file), "--rubric", str(rubric_file), "--judge",
                         "openai-compatible:gpt-4.1-mini@http://127.0.0.1:9/v1",
                         json_out=tmp_path / "plan.json")
    [judge] = plan["judges"]
    assert code == 0 and plan["preflight_requests"] == judge["preflight_requests"] == 1
    # gpt-4.1-mini: $0.40 in and $1.60 out per million tokens; the check's prompt and schema,
    # and its 16-token reply
    prompt = tokens_in(len(PREFLIGHT_PROMPT) + len(orjson.dumps(PREFLIGHT_SCHEMA)))
    expected = round((prompt * 0.40 + PREFLIGHT_MAX_TOKENS * 1.60) / 1e6, 6)
    assert judge["preflight_usd_est"] == pytest.approx(expected, abs=1e-9)
    assert judge["usd_est"] > judge["preflight_usd_est"] > 0  # the calls' and the preflight's
