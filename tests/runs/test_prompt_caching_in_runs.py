"""Prompt caching in a run: an Anthropic judge's calls of one item share a marked prefix, the
provider's cached tokens are stored, priced as cached, and shown in the summary and the report."""

from __future__ import annotations

import pytest
from rich.console import Console
from tests.runs.conftest import POLICY

import assay
from assay.cli.tables.run import summary_tables
from assay.judges import JudgeConfig
from assay.judges.specs import parse_spec
from assay.report import write_report

KEY = "sk-ant-test-key-0123456789"
PRICE = {"input": 3.0, "cached_input": 0.3, "output": 15.0}


@pytest.fixture
async def cached_run(serve, tmp_path, items_file, rubric_file, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = await serve(policy=POLICY, prompt_cache=True, prompt_cache_min_tokens=64)
    parsed = parse_spec(f"anthropic:fake@{server.base_url}")
    judge = JudgeConfig.model_validate({**parsed.model_dump(), "price": PRICE})
    run = await assay.agrade(items_file, rubric=rubric_file, judges=[judge],
                             run_dir=tmp_path / "run")
    run.server = server  # the requests it saw
    return run


async def test_an_items_later_calls_read_its_shared_prefix_from_the_prompt_cache(cached_run):
    totals = cached_run.report.totals
    assert cached_run.status == "complete"
    marked = [m for r in cached_run.server.requests for m in r["body"]["messages"]]
    assert marked and all(m["content"][0]["cache_control"] == {"type": "ephemeral"} for m in marked)
    # 6 items x 2 templates: the first call of each writes the prefix, the other 12 read it
    assert 0 < totals.cached_tokens < totals.prompt_tokens
    uncached = (totals.prompt_tokens * 3.0 + totals.completion_tokens * 15.0) / 1e6
    # reads at 0.1x the input price, writes at 1.25x (Anthropic's prices)
    written = cached_run.server.prompt_cache.written_tokens
    assert written > 0
    assert totals.cost_usd == pytest.approx(uncached - totals.cached_tokens * (3.0 - 0.3) / 1e6
                                            + written * 3.0 * 0.25 / 1e6)


async def test_the_summary_and_the_report_show_the_cached_prompt_tokens(cached_run, tmp_path):
    report = cached_run.report
    console = Console(record=True, width=200)
    for table in summary_tables(report.scores, report.totals):
        console.print(table)
    text = console.export_text()
    assert "of them cached" in text and f"{report.totals.cached_tokens:,}" in text
    html = write_report([cached_run.run_dir], tmp_path / "report.html").read_text()
    assert f"{report.totals.cached_tokens} prompt tokens cached" in html
