"""The job engine: traced stage calls, resumable batches, job directories."""

from __future__ import annotations

import pytest

from assay.errors import AssayError, ConfigError
from assay.jobs import CallStore, JobDir, StageCaller, StageError, run_batch
from assay.judges import FailureKind, make_judge
from assay.judges.completion import CompletionBudget
from assay.testing import Faults

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


def prompt(text):
    return [{"role": "user", "content": text}]


async def test_a_stage_call_is_traced_with_tokens_and_reply(serve, tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        data = await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    [call] = store.calls("q1")
    assert data == {"answer": "42"}
    assert (call.stage, call.ok, call.messages, call.data) == ("facts", True, prompt("q"), data)
    assert call.prompt_tokens > 0 and call.completion_tokens > 0


async def test_a_finished_call_is_not_made_again_on_resume(serve, tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    store.close()
    reopened = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        again = await StageCaller(judge, reopened).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    assert again == {"answer": "42"}
    assert len(server.requests) == 1


async def test_a_stage_that_keeps_failing_raises_after_storing_its_trace(serve, tmp_path):
    server = await serve(stages={"facts": "never json"})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        with pytest.raises(StageError, match="item 'q1': stage 'facts': unparseable") as failed:
            await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    [call] = store.calls("q1")
    assert not call.ok and call.raw == "never json" and "unparseable" in call.failure
    assert len(server.requests) == 3  # the judges layer re-asked twice (max_reasks)
    assert failed.value.kind is FailureKind.UNPARSEABLE and not failed.value.refused


async def test_a_batch_resumes_without_redoing_finished_items(tmp_path):
    store = CallStore.open(tmp_path / "calls.sqlite")
    seen = []

    async def worker(x):
        seen.append(x)
        if x == 3:
            raise AssayError("bad item")
        return {"square": x * x}

    first = await run_batch([1, 2, 3], worker, store=store, item_id=str, quiet=True)
    assert first.failed == {"3": "bad item"} and not first.complete
    assert first.results == {"1": {"square": 1}, "2": {"square": 4}}
    second = await run_batch([1, 2, 3, 4], worker, store=store, item_id=str, quiet=True)
    assert seen == [1, 2, 3, 3, 4]
    assert second.resumed == 2 and list(second.results) == ["1", "2", "4"]


async def test_duplicate_item_ids_are_refused(tmp_path):
    store = CallStore.open(tmp_path / "calls.sqlite")

    async def worker(x):
        return x

    with pytest.raises(AssayError, match="duplicate item ids: a"):
        await run_batch(["a", "a"], worker, store=store, item_id=str, quiet=True)


def test_a_job_directory_refuses_another_config_naming_the_change(tmp_path):
    JobDir.open(tmp_path / "job", kind="generate", config={"seed": 0}).finish(status="complete")
    with pytest.raises(ConfigError, match=r"seed: 0 -> 1"):
        JobDir.open(tmp_path / "job", kind="generate", config={"seed": 1})
    with pytest.raises(ConfigError, match="holds a 'generate' job"):
        JobDir.open(tmp_path / "job", kind="rag", config={"seed": 0})


def test_a_job_directory_has_one_writer(tmp_path):
    first = JobDir.open(tmp_path / "job", kind="generate", config={})
    with pytest.raises(ConfigError, match="another process is running this job"):
        JobDir.open(tmp_path / "job", kind="generate", config={})
    first.close()
    JobDir.open(tmp_path / "job", kind="generate", config={}).close()


def test_a_store_that_is_not_sqlite_is_a_clear_error(tmp_path):
    path = tmp_path / "calls.sqlite"
    path.write_bytes(b"garbage" * 200)
    with pytest.raises(ConfigError, match="not a readable Assay call store"):
        CallStore.open(path)


async def test_a_refused_stage_call_says_so_in_its_error(serve, tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}}, faults=Faults(script=["refusal"]))
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        with pytest.raises(StageError) as failed:
            await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    assert failed.value.kind is FailureKind.REFUSAL and failed.value.refused


async def test_a_resumed_job_seeds_its_judges_attempt_timeout_from_its_stored_calls(serve,
                                                                                   tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, store)
        for k in range(20):
            await caller.ask("facts", prompt(f"q{k}"), SCHEMA, item_id=f"q{k}")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as fresh:
        assert fresh.attempt_timeout_s == 60.0
        StageCaller(fresh, store)  # a resumed job's caller, before any call
        assert fresh.attempt_timeout_s < 60.0


async def test_a_stage_reply_cut_at_its_cap_fails_the_stage_as_truncated(serve, tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}}, faults=Faults(truncated=1.0))
    store = CallStore.open(tmp_path / "calls.sqlite")
    budget = CompletionBudget(64, cap=256)
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        with pytest.raises(StageError, match="stage 'facts': truncated: facts: the reply was cut "
                                             "at max_tokens=256") as failed:
            await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1",
                                                budget=budget)
    assert failed.value.kind is FailureKind.TRUNCATED and not failed.value.refused
    [call] = store.calls("q1")
    assert "truncated" in call.failure and call.attempts == 2


async def test_a_stage_prompt_over_the_context_fails_the_stage_as_context_length(serve, tmp_path):
    server = await serve(stages={"facts": {"answer": "42"}},
                         faults=Faults(script=["context_overflow"]))
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        with pytest.raises(StageError, match=r"context_length \(HTTP 400\): facts: the request "
                                             r"\(2,300 tokens\) does not fit") as failed:
            await StageCaller(judge, store).ask("facts", prompt("q"), SCHEMA, item_id="q1")
    assert failed.value.kind is FailureKind.CONTEXT_LENGTH and len(server.requests) == 1


async def test_a_jobs_totals_count_its_judges_preflight_and_abandoned_attempts(serve, tmp_path):
    """Issue 40, point 3: what the provider bills besides the stage calls' replies."""
    server = await serve(stages={"facts": {"answer": "42"}},
                         faults=Faults(script=["timeout"], hang_s=5.0),
                         usage={"prompt_tokens": 1000, "completion_tokens": 0})
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with make_judge(f"openai-compatible:fake@{server.base_url}", timeout_s=0.3,
                          price={"input": 1000.0, "output": 0.0}) as judge:
        await judge.check()
        caller = StageCaller(judge, store)
        await caller.ask("facts", prompt("q"), SCHEMA, item_id="q1")
        StageCaller(judge, store)  # another caller of the judge: its preflight counted once
    [call] = store.calls("q1")
    assert call.abandoned == 1 and call.estimated_usd > 0
    assert call.cost_usd == pytest.approx(1.0 + call.estimated_usd)
    totals = store.totals()
    assert (totals.preflight_requests, totals.abandoned) == (1, 1)
    assert totals.cost_usd == pytest.approx(1.0 + call.estimated_usd + 0.001)
    assert totals.estimated_usd == pytest.approx(call.estimated_usd)


def test_a_call_store_written_before_the_billing_columns_is_brought_up_to_date(tmp_path):
    import sqlite3

    path = tmp_path / "calls.sqlite"
    old = sqlite3.connect(path)  # the store as written before issue 40
    old.executescript("""
CREATE TABLE calls (
    key TEXT PRIMARY KEY, stage TEXT NOT NULL, item_id TEXT NOT NULL, judge TEXT NOT NULL,
    model TEXT NOT NULL, messages TEXT NOT NULL, data TEXT, raw TEXT,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
    latency_s REAL NOT NULL, cached INTEGER NOT NULL, attempts INTEGER NOT NULL,
    failure TEXT, finished_at REAL NOT NULL);
INSERT INTO calls VALUES ('k', 'facts', 'q1', 'j', 'm', '[]', '{"answer": "1"}', '', 10, 2,
                          0.5, 0.1, 0, 1, NULL, 1.0);""")
    old.commit()
    old.close()
    store = CallStore.open(path)
    [call] = store.calls()
    assert (call.cost_usd, call.estimated_usd, call.abandoned) == (0.5, 0.0, 0)
    assert store.totals().cost_usd == 0.5


async def test_preflight_requests_made_after_the_caller_was_made_are_counted(serve, tmp_path):
    """A caller made before its store is attached (routing) or before the judge's check (a
    deferred check, a local server's own question): the job's totals still count them."""
    server = await serve(stages={"facts": {"answer": "42"}})
    async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
        caller = StageCaller(judge, None)
        await judge.check()
        caller.store = store = CallStore.open(tmp_path / "calls.sqlite")
        await caller.ask("facts", prompt("q"), SCHEMA, item_id="q1")
        await caller.ask("facts", prompt("r"), SCHEMA, item_id="q2")
    totals = store.totals()
    assert (totals.calls, totals.preflight_requests) == (2, 1)
