"""Issue 27, point 11: a call that failed on transient faults or unparsed replies is asked again
once every call of the run has been sent (the final pass), before the status is decided; a run
that a few such calls would leave incomplete ends complete in its first session, with the clean
run's verdicts. A failure stays a failure: what fails again, or cannot be fixed by asking again,
leaves the run incomplete."""

from __future__ import annotations

import json

import pytest
from tests.runs.conftest import POLICY, rows, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.judges import ModelPrice, parse_spec
from assay.runs import engine
from assay.testing import FakeJudgeServer, Faults

CALL = ("Answer 1: scrape", "Explains how to remove the stinger.")  # item q1's stinger call
FAST = {"max_retries": 1, "base_delay_s": 0.001, "max_delay_s": 0.01}
VERDICTS = "SELECT item_id, criterion_id, verdict, option FROM verdicts ORDER BY 1, 2"
THE_CALL = "SELECT status, attempts, prompt_tokens FROM calls WHERE item_id = 'q1' AND criteria LIKE '%stinger%'"


def of_the_call(server) -> list[int]:
    """The positions of the requests of CALL among the server's requests."""
    return [
        n
        for n, r in enumerate(server.requests)
        if CALL[0] in (r["response_text"] or "") and r["criterion_text"] == CALL[1]
    ]


def final_pass(run_dir) -> dict:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return manifest["timing"]["sessions"][-1]["final_pass"]


async def test_a_call_unparsed_after_its_reasks_is_asked_again_and_the_run_completes(
    tmp_path, rubric_file
):
    items = write_items(tmp_path / "items.jsonl", 6)  # 24 calls
    async with FakeJudgeServer(policy=POLICY) as server:
        clean = await assay.agrade(
            items, rubric=rubric_file, judges=[spec(server)], run_dir=tmp_path / "clean"
        )
    faults = Faults(at={CALL: ["malformed"] * 3})  # the first reply and both re-asks
    async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
        run = await assay.agrade(
            items,
            rubric=rubric_file,
            judges=[spec(server)],
            run_dir=tmp_path / "run",
            concurrency=1,
        )
        mine, sent = of_the_call(server), len(server.requests)
    assert run.status == clean.status == "complete"
    assert rows(run.run_dir, VERDICTS) == rows(clean.run_dir, VERDICTS)
    # asked again only once every other call had been sent: its fourth request is the last
    assert len(mine) == 4 and mine[-1] == sent - 1 == 24 + 2
    assert rows(run.run_dir, THE_CALL)[0][:2] == ("ok", 4)  # the attempts of both passes
    assert final_pass(run.run_dir) == {"asked_again": 1, "recovered": 1}
    assert run.totals.errors == 0


async def test_a_call_whose_retries_ran_out_on_server_errors_is_asked_again(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    faults = Faults(at={CALL: ["server_error"] * 2})  # its first attempt and its one retry
    async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
        run = await assay.agrade(
            items,
            rubric=rubric_file,
            judges=[parse_spec(spec(server), retry=FAST)],
            run_dir=tmp_path / "run",
        )
    assert run.status == "complete"
    assert rows(run.run_dir, THE_CALL)[0][:2] == ("ok", 3)
    assert final_pass(run.run_dir) == {"asked_again": 1, "recovered": 1}


async def test_a_call_that_fails_again_in_the_final_pass_stays_failed(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    faults = Faults(at={CALL: ["malformed"] * 6})  # both passes: the reply and two re-asks each
    async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[spec(server)], run_dir=tmp_path / "run"
        )
        assert len(of_the_call(server)) == 6  # asked again once, not more
    assert run.status == "incomplete"
    assert rows(run.run_dir, THE_CALL)[0][:2] == ("error", 6)
    assert rows(run.run_dir, "SELECT kind FROM errors") == [("unparseable",)]
    assert rows(
        run.run_dir,
        "SELECT COUNT(*) FROM verdicts WHERE item_id = 'q1' AND criterion_id = 'stinger'",
    ) == [(0,)]
    assert final_pass(run.run_dir) == {"asked_again": 1, "recovered": 0}


async def test_final_passes_ask_a_failed_call_again_as_many_times_as_set(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    outcomes = {}
    for passes in (0, 1, 2):
        faults = Faults(at={CALL: ["malformed"] * 6})  # fails two passes, not a third
        async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
            run = await assay.agrade(
                items,
                rubric=rubric_file,
                judges=[spec(server)],
                final_passes=passes,
                run_dir=tmp_path / str(passes),
            )
        outcomes[passes] = (run.status, len(of_the_call(server)), final_pass(run.run_dir))
    assert outcomes == {
        0: ("incomplete", 3, {"asked_again": 0, "recovered": 0}),
        1: ("incomplete", 6, {"asked_again": 1, "recovered": 0}),
        2: ("complete", 7, {"asked_again": 2, "recovered": 1}),
    }


async def test_a_failure_that_asking_again_cannot_fix_is_not_asked_again(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    faults = Faults(at={CALL: ["context_overflow"]})  # the same request would overflow again
    async with FakeJudgeServer(policy=POLICY, faults=faults) as server:
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[spec(server)], run_dir=tmp_path / "run"
        )
        assert len(of_the_call(server)) == 1
    assert run.status == "incomplete"
    assert rows(run.run_dir, "SELECT kind FROM errors") == [("context_length",)]
    assert final_pass(run.run_dir) == {"asked_again": 0, "recovered": 0}


async def test_the_recovered_call_carries_the_tokens_and_cost_of_every_pass(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    faults = Faults(at={CALL: ["malformed"] * 3})
    usage = {"prompt_tokens": 100, "completion_tokens": 0}  # every reply, malformed ones too
    async with FakeJudgeServer(policy=POLICY, faults=faults, usage=usage) as server:
        judge = parse_spec(spec(server), price=ModelPrice(input=10_000.0, output=0.0))  # $1/reply
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[judge], run_dir=tmp_path / "run"
        )
    assert run.status == "complete"
    assert rows(run.run_dir, THE_CALL) == [("ok", 4, 400)]
    # eight calls, the three replies that did not parse, and the preflight's 1 prompt token
    assert run.totals.cost_usd == pytest.approx(8 + 3 + 0.01)
    assert run.totals.preflight_requests == 1


async def test_a_final_pass_refused_by_the_budget_records_the_failure_it_had(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)  # 8 calls
    faults = Faults(at={CALL: ["malformed"] * 3})
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    async with FakeJudgeServer(policy=POLICY, faults=faults, usage=usage) as server:
        judge = parse_spec(spec(server), price=ModelPrice(input=1000.0, output=0.0))  # $1/reply
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[judge], budget_usd=10.001,
            run_dir=tmp_path / "run"
        )  # the preflight ($0.001: one prompt token), 8 calls and 2 re-asks: $10.001
        assert len(of_the_call(server)) == 3  # the final pass was refused before it was sent
    assert run.status == "budget"
    # the call's failure is stored with its cost (never lost, never a verdict); a resume with a
    # larger budget retries it
    assert rows(run.run_dir, THE_CALL) == [("error", 3, 3000)]
    assert rows(run.run_dir, "SELECT kind FROM errors") == [("unparseable",)]
    assert run.totals.cost_usd == pytest.approx(10.001)
    assert final_pass(run.run_dir) == {"asked_again": 0, "recovered": 0}


async def test_a_run_stopped_before_its_final_pass_stores_the_failures_it_held(
    tmp_path, rubric_file, monkeypatch
):
    monkeypatch.setattr(engine, "MIN_WINDOW", 1)  # 4 calls outstanding: 4 x 1 in flight
    items = write_items(tmp_path / "items.jsonl", 6)  # 24 calls, sent 4 at a time
    faults = Faults(at={CALL: ["malformed"] * 3})
    usage = {"prompt_tokens": 1000, "completion_tokens": 0}
    async with FakeJudgeServer(policy=POLICY, faults=faults, usage=usage) as server:
        judge = parse_spec(
            spec(server), price=ModelPrice(input=1000.0, output=0.0), limits={"max_in_flight": 1}
        )
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[judge], budget_usd=16, run_dir=tmp_path / "run"
        )
        assert len(of_the_call(server)) == 3  # held, and never asked again
    assert run.status == "budget"
    assert rows(run.run_dir, THE_CALL) == [("error", 3, 3000)]
    assert rows(run.run_dir, "SELECT kind FROM errors") == [("unparseable",)]
    assert final_pass(run.run_dir) == {"asked_again": 0, "recovered": 0}


async def test_an_endpoint_that_fails_every_call_is_not_asked_again_for_all_of_them(
    tmp_path, rubric_file, monkeypatch
):
    monkeypatch.setattr(engine, "MIN_WINDOW", 1)  # 4 calls outstanding: 4 x 1 in flight
    items = write_items(tmp_path / "items.jsonl", 6)  # 24 calls
    async with FakeJudgeServer(policy=POLICY, faults=Faults(malformed=1.0)) as server:
        judge = parse_spec(spec(server), limits={"max_in_flight": 1})
        run = await assay.agrade(
            items, rubric=rubric_file, judges=[judge], run_dir=tmp_path / "run"
        )
    assert run.status == "incomplete" and run.totals.errors == 24
    # held: at most the 4 calls the engine keeps outstanding; and the calls still out when the
    # last one was sent, asked again at once
    assert final_pass(run.run_dir) == {"asked_again": 4 + 4, "recovered": 0}


def test_assay_grade_says_what_the_final_pass_recovered(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 2)
    with FakeJudgeServer.run_in_thread(
        policy=POLICY, faults=Faults(at={CALL: ["malformed"] * 3})
    ) as server:
        out = CliRunner().invoke(
            app,
            [
                "grade",
                str(items),
                "--rubric",
                str(rubric_file),
                "--judge",
                spec(server),
                "--run-dir",
                str(tmp_path / "run"),
                "--json",
                str(tmp_path / "out.json"),
                "--quiet",
            ],
        )
    assert out.exit_code == 0, out.output
    assert (
        "final pass: 1 failed call asked again once every call had been sent; 1 recovered"
        in out.output
    )
    payload = json.loads((tmp_path / "out.json").read_text())
    assert payload["status"] == "complete"
    assert payload["final_pass"] == {"asked_again": 1, "recovered": 1}
