"""Prompt caching in a run, as the providers bill it: per item, the first call of a head that
can be cached writes it and the others, sent once its reply has come, read it; a head under the
model's minimum is sent unmarked; in batches, the heads of groups where the 1-hour cache pays
are written in a first batch and read in a second. The provider's bill (the fake's) and the
run's cost agree; the summary and the report show the cached tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from tests.runs.conftest import POLICY

import assay
from assay.cli.tables.run import summary_tables
from assay.judges import JudgeConfig
from assay.judges.config import ModelPrice
from assay.judges.specs import parse_spec
from assay.report import write_report

KEY = "sk-ant-test-key-0123456789"
PRICE = {"input": 3.0, "cached_input": 0.3, "output": 15.0}
PREFLIGHT_USD = 1.01 * (3.0 + 15.0) / 1e6  # the fake bills a preflight 1 token in, 1 out
STORY = "My arm swelled up after the sting and it itches a lot. " * 110  # ~1,500 tokens
LONG, SHORT = ["long0", "long1", "long2"], ["short0"]
BINARY = {"id": "bee4", "criteria": [
    {"id": c, "text": f"Says {c}.", "weight": 1} for c in ("stinger", "ice", "doctor", "calm")]}


def write_items(path: Path) -> Path:
    items = [{"id": i, "prompt": f"Bee sting ({i}). {STORY}", "response": "Scrape it, ice it."}
             for i in LONG]
    items += [{"id": i, "prompt": f"Bee sting ({i}). What now?", "response": "Scrape it."}
              for i in SHORT]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def sonnet(server, **fields) -> JudgeConfig:
    parsed = parse_spec(f"anthropic:claude-sonnet-4-5@{server.base_url}")
    return JudgeConfig.model_validate({**parsed.model_dump(), "price": PRICE, **fields})


def item_of(request: dict) -> str:
    text = json.dumps(request["body"]["messages"])
    return next(i for i in LONG + SHORT if f"({i})" in text)


@pytest.fixture
async def cached_run(serve, tmp_path, rubric_file, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = await serve(policy=POLICY, prompt_cache=True, latency=0.05)
    run = await assay.agrade(write_items(tmp_path / "items.jsonl"), rubric=rubric_file,
                             judges=[sonnet(server)], run_dir=tmp_path / "run")
    run.server = server  # the requests it saw, and its bill
    return run


async def test_an_items_later_calls_read_the_head_its_first_call_wrote(cached_run):
    assert cached_run.status == "complete"
    bill = cached_run.server.bill.live
    # each long item's 2 binary calls share a head and a tool: one writes it, the other, sent
    # after the first reply, reads it (sent together, both would write); its 2 multi-choice
    # calls' tools list their own options (the tools open the cached prefix): nothing shared
    assert bill.cache_write_5m > 0 and bill.cache_read == bill.cache_write_5m
    totals = cached_run.report.totals
    assert totals.cached_tokens == bill.cache_read
    # the run's cost is what the provider bills (its own arithmetic: reads 0.1x, writes 1.25x),
    # but perhaps the preflight (one token in, one out)
    assert totals.cost_usd == pytest.approx(cached_run.server.bill.usd(ModelPrice(**PRICE)),
                                            abs=PREFLIGHT_USD)


async def test_the_calls_after_the_first_wait_for_its_reply(cached_run):
    arrivals: dict[tuple[str, str], list[float]] = {}
    for request in cached_run.server.requests:
        content = request["body"]["messages"][0]["content"]
        if isinstance(content, list):  # marked: a long item's head
            arrivals.setdefault((item_of(request), content[0]["text"][-40:]), []).append(
                request["time"])
    assert len(arrivals) == 3 and all(len(times) == 2 for times in arrivals.values())
    assert all(later - first >= 0.05 for first, later in arrivals.values())  # one reply's time


async def test_a_head_under_the_minimum_or_of_its_own_is_sent_unmarked(cached_run):
    short = [r for r in cached_run.server.requests if item_of(r) in SHORT]
    multi = [r for r in cached_run.server.requests if r["criterion_id"] in ("pain", "tone")]
    assert len(short) == 4 and len(multi) == 8
    assert all(isinstance(r["body"]["messages"][0]["content"], str) for r in short + multi)


async def test_the_summary_and_the_report_show_the_cached_prompt_tokens(cached_run, tmp_path):
    report = cached_run.report
    console = Console(record=True, width=200)
    for table in summary_tables(report.scores, report.totals):
        console.print(table)
    text = console.export_text()
    assert "of them cached" in text and f"{report.totals.cached_tokens:,}" in text
    html = write_report([cached_run.run_dir], tmp_path / "report.html").read_text()
    assert f"{report.totals.cached_tokens:,} prompt tokens cached" in html


async def test_batches_write_the_heads_for_an_hour_then_read_them_in_a_second_batch(
        serve, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = await serve(prompt_cache=True)
    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(BINARY))
    run = await assay.agrade(write_items(tmp_path / "items.jsonl"), rubric=tmp_path / "rubric.yaml",
                             judges=[sonnet(server)], run_dir=tmp_path / "run",
                             executor="batch", batch_poll_s=0.05)
    assert run.status == "complete"
    assert server.batches.created == 2
    bill = server.bill.batch
    head = bill.cache_write_1h // len(LONG)  # each long item's head, written once, for 1 hour
    assert bill.cache_write_5m == 0 and head > 1024
    assert bill.cache_read == 3 * bill.cache_write_1h  # its 3 other calls read it
    assert run.report.totals.cost_usd == pytest.approx(server.bill.usd(ModelPrice(**PRICE)),
                                                       abs=PREFLIGHT_USD)


async def test_with_caching_off_a_batch_run_sends_one_batch_unmarked(serve, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = await serve(prompt_cache=True)
    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(BINARY))
    run = await assay.agrade(write_items(tmp_path / "items.jsonl"), rubric=tmp_path / "rubric.yaml",
                             judges=[sonnet(server, prompt_caching=False)],
                             run_dir=tmp_path / "run", executor="batch", batch_poll_s=0.05)
    assert run.status == "complete" and server.batches.created == 1
    assert server.bill.batch.cache_read == server.bill.batch.cache_write_1h == 0
    assert all(isinstance(r["body"]["messages"][0]["content"], str) for r in server.requests)

