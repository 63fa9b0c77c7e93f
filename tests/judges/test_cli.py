"""`assay cache stats|clear`, `assay fake-judge`, `assay judges check|estimate`."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.judges import ResponseCache
from assay.testing import FakeJudgeServer

runner = CliRunner()


def filled_cache(path: Path) -> Path:
    with ResponseCache(path) as cache:
        cache.put("a", judge="j", model="gpt-4.1", data={}, raw="", usage={})
        cache.put("b", judge="j", model="qwen", data={}, raw="", usage={})
        cache.get("a")
        cache.get("zz")
    return path


def test_cache_stats_prints_entries_hits_and_misses_as_json(tmp_path):
    path = filled_cache(tmp_path / "c.sqlite")
    result = runner.invoke(app, ["cache", "stats", "--path", str(path), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["entries"], stats["hits"], stats["misses"]) == (2, 1, 1)
    assert stats["by_model"] == {"gpt-4.1": 1, "qwen": 1}


def test_cache_stats_prints_a_table(tmp_path):
    path = filled_cache(tmp_path / "c.sqlite")
    result = runner.invoke(app, ["cache", "stats", "--path", str(path)])
    assert result.exit_code == 0 and "entries" in result.output and "qwen" in result.output


def test_cache_stats_reads_the_cache_named_by_the_environment(tmp_path, monkeypatch):
    path = filled_cache(tmp_path / "env.sqlite")
    monkeypatch.setenv("ASSAY_CACHE", str(path))
    result = runner.invoke(app, ["cache", "stats", "--json"])
    assert json.loads(result.output)["entries"] == 2


def test_cache_stats_without_a_cache_says_so(tmp_path):
    result = runner.invoke(app, ["cache", "stats", "--path", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 1 and "no cache yet" in result.output


def test_cache_clear_removes_one_models_entries(tmp_path):
    path = filled_cache(tmp_path / "c.sqlite")
    result = runner.invoke(app, ["cache", "clear", "--path", str(path), "--model", "qwen"])
    assert result.exit_code == 0 and "removed 1 cached replies" in result.output
    with ResponseCache(path) as cache:
        assert cache.stats().by_model == {"gpt-4.1": 1}


def test_judges_estimate_prints_tokens_and_dollars():
    result = runner.invoke(app, ["judges", "estimate", "--model", "gpt-4.1-mini", "--calls", "1000",
                                 "--prompt-tokens", "1500", "--completion-tokens", "200"])
    assert result.exit_code == 0
    assert "1,500,000 prompt + 200,000 completion tokens, $0.9200" in result.output


def test_judges_check_reports_a_reachable_and_an_unknown_judge():
    with FakeJudgeServer.run_in_thread() as server:
        result = runner.invoke(app, ["judges", "check", f"openai-compatible:m@{server.base_url}",
                                     "nope:model"])
    assert result.exit_code == 1
    assert "ok    openai-compatible:m@" in result.output
    assert "FAIL  nope:model: judge spec 'nope:model': unknown provider" in result.output


def test_fake_judge_command_serves_and_logs_requests(tmp_path):
    log = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-c", "from assay.cli import main; main()", "fake-judge", "--port", "0",
         "--policy", "UNMET", "--log", str(log)],
        stderr=subprocess.PIPE, text=True)
    try:
        line = process.stderr.readline()
        base_url = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line).group(1)
        from assay.judges import JudgeRequest, make_judge, run_sync

        judge = make_judge(f"openai-compatible:m@{base_url}")
        reply = judge.ask_sync(JudgeRequest(
            messages=({"role": "user", "content": '<criterion id="k">t</criterion>'},)))
        run_sync(judge.aclose())
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert reply.data["verdict"] == "UNMET"
    assert json.loads(log.read_text().splitlines()[0])["criterion_id"] == "k"


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_fake_judge_command_stops_cleanly_on_sigint_or_sigterm_even_with_sigint_ignored(number):
    # started as a background shell starts it: SIGINT ignored, so Python raises no
    # KeyboardInterrupt; the server must still stop on either signal, and exit 0
    ignoring_sigint = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    process = subprocess.Popen(
        [sys.executable, "-c", ignoring_sigint + "from assay.cli import main; main()",
         "fake-judge", "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        assert "fake judge listening on" in process.stderr.readline()
        process.send_signal(number)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()


def test_fake_judge_bound_beyond_loopback_warns_that_it_answers_anyone():
    process = subprocess.Popen(
        [sys.executable, "-c", "from assay.cli import main; main()", "fake-judge", "--port", "0",
         "--host", "0.0.0.0"], stderr=subprocess.PIPE, text=True)
    try:
        assert "fake judge listening on" in process.stderr.readline()
        process.terminate()  # every line is printed before it waits for a signal
        assert process.wait(timeout=10) == 0
        rest = process.stderr.read()  # not communicate(): it would skip what readline buffered
    finally:
        process.kill()
        process.wait()
    assert "warning: --host 0.0.0.0 is beyond loopback" in rest and "answers anyone" in rest
