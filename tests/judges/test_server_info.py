"""Local servers telling what they are (llama.cpp's /props, vLLM's max_model_len), over real
HTTP against the fake server: what `assay judges check` says, the requests in flight that follow
the server's slots, and the attempt timeout of a local preset."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

import pytest
from tests.runs.conftest import RUBRIC, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.judges import FailureKind, JudgeRequest, Limits, make_judge
from assay.testing import FakeJudgeServer
from assay.testing.server_props import llama_cpp, lm_studio, ollama, vllm

from .helpers import VERDICT, judge_for, request

LOCAL_DOCS = Path(__file__).parents[1] / "data" / "provider_docs" / "local_servers.md"

runner = CliRunner()


def test_judges_check_reports_a_llama_cpp_servers_context_and_slots():
    with FakeJudgeServer.run_in_thread(server=llama_cpp(n_ctx=2048, slots=4)) as server:
        result = runner.invoke(app, ["judges", "check", f"llamacpp:gemma@{server.base_url}"])
    assert result.exit_code == 0, result.output
    assert "server: context 2,048 tokens, 4 parallel slots (/props)" in result.output
    assert (
        "4 requests in flight (the server's parallel slots (/props total_slots)); "
        "attempts wait up to 600 s"
    ) in result.output


def test_judges_check_reports_a_vllm_servers_max_model_len():
    with FakeJudgeServer.run_in_thread(server=vllm(max_model_len=32768)) as server:
        result = runner.invoke(app, ["judges", "check", f"vllm:fake@{server.base_url}"])
    assert result.exit_code == 0, result.output
    assert "server: context 32,768 tokens (/models)" in result.output
    # vLLM says no slots: the width starts small and follows the replies' latency
    assert "2 requests in flight (latency: started at 2" in result.output


def test_judges_check_of_a_server_that_says_nothing_reports_no_context():
    with FakeJudgeServer.run_in_thread() as server:
        result = runner.invoke(
            app, ["judges", "check", f"openai-compatible:fake@{server.base_url}"]
        )
    assert result.exit_code == 0, result.output
    assert "server:" not in result.output and "attempts wait up to 60 s" in result.output


async def _peak(judge, server, calls: int = 12) -> int:
    async with judge:
        await judge.check()
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(calls)))
    assert all(reply.ok for reply in replies)
    return server.peak_in_flight


async def test_a_local_presets_requests_in_flight_follow_the_servers_slots(serve):
    server = await serve(server=llama_cpp(slots=2), latency=0.05)
    judge = judge_for(server, provider="llamacpp")
    assert await _peak(judge, server) == 2  # not 12 queued in the server
    assert judge.in_flight == {
        "max_in_flight": 2,
        "source": "the server's parallel slots (/props total_slots)",
    }


async def test_a_judge_never_checked_asks_the_server_before_its_first_requests(serve):
    # assay route run, assay serve and the Python API make no preflight: the first requests
    # wait for the one question to the server, then go out at most as many as its slots
    server = await serve(server=llama_cpp(slots=2), latency=0.05)
    judge = judge_for(server, provider="llamacpp")
    async with judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(12)))
    assert all(reply.ok for reply in replies)
    assert server.peak_in_flight == 2 and judge.server is not None
    assert judge.in_flight["max_in_flight"] == 2


async def test_a_users_limit_wins_over_the_servers_slots(serve):
    server = await serve(server=llama_cpp(slots=2), latency=0.05)
    judge = judge_for(server, provider="llamacpp", limits=Limits(max_in_flight=6))
    assert await _peak(judge, server) == 6
    assert judge.in_flight == {"max_in_flight": 6, "source": "limits.max_in_flight"}


async def test_concurrency_set_before_the_check_wins_over_the_servers_slots(serve):
    server = await serve(server=llama_cpp(slots=2), latency=0.05)
    judge = judge_for(server, provider="llamacpp")
    judge.limiter.set_max_in_flight(5)  # what --concurrency 5 does
    assert await _peak(judge, server) == 5
    assert judge.in_flight == {"max_in_flight": 5, "source": "--concurrency"}


async def test_a_hosted_preset_does_not_ask_the_server_about_itself(serve):
    server = await serve(server=llama_cpp(slots=2))
    async with judge_for(server) as judge:  # openai-compatible: not a local preset
        await judge.check()
        assert judge.server is None and judge.limiter.max_in_flight == 64


def test_local_presets_wait_longer_for_their_first_replies_and_it_is_configurable():
    local = "http://127.0.0.1:9/v1"
    assert make_judge(f"llamacpp:m@{local}").attempt_timeout_s == 600.0
    assert make_judge(f"ollama:m@{local}").attempt_timeout_s == 600.0
    assert make_judge(f"openai-compatible:m@{local}").attempt_timeout_s == 60.0
    assert make_judge(f"llamacpp:m@{local}", timeout_ceiling_s=120).attempt_timeout_s == 120.0
    assert make_judge(f"llamacpp:m@{local}", timeout_s=5).attempt_timeout_s == 5.0


async def test_an_attempt_waits_up_to_the_ceiling_for_a_slow_first_reply(serve):
    server = await serve(latency=0.4)
    async with judge_for(server, provider="llamacpp", timeout_ceiling_s=2.0) as judge:
        slow = await judge.ask(request())
    async with judge_for(
        server,
        provider="llamacpp",
        timeout_ceiling_s=0.1,
        retry=judge.config.retry.model_copy(update={"max_retries": 0}),
    ) as judge:
        cut = await judge.ask(request())
    assert slow.ok and slow.attempts == 1
    assert not cut.ok and cut.failure.kind is FailureKind.TIMEOUT


# --- Ollama, LM Studio: their own APIs (quoted in tests/data/provider_docs/local_servers.md) ---


def test_judges_check_reports_the_context_ollama_loaded_the_model_with():
    # Ollama loads a model on its first request: the preflight's; /api/ps then lists it
    with FakeJudgeServer.run_in_thread(server=ollama(context_length=8192)) as server:
        result = runner.invoke(app, ["judges", "check", f"ollama:fake@{server.base_url}"])
    assert result.exit_code == 0, result.output
    assert "server: context 8,192 tokens (/api/ps)" in result.output


async def test_an_ollama_model_not_loaded_gives_the_num_ctx_of_its_parameters(serve):
    server = await serve(server=ollama(num_ctx=2048))
    async with judge_for(server, provider="ollama") as judge:
        info = await judge.discover_server()  # before any request: not loaded
    assert (info.context_size, info.source, info.cuts_silently) == (2048, "/api/show num_ctx", True)


async def test_an_ollama_model_not_loaded_without_num_ctx_says_its_context_is_not_known(serve):
    server = await serve(server=ollama())
    async with judge_for(server, provider="ollama") as judge:
        info = await judge.discover_server()
    assert info.context_size is None and "not loaded yet" in info.describe()


def test_judges_check_reports_the_context_lm_studio_loaded_the_model_with():
    with FakeJudgeServer.run_in_thread(server=lm_studio(context_length=4096)) as server:
        result = runner.invoke(app, ["judges", "check", f"lmstudio:fake@{server.base_url}"])
    assert result.exit_code == 0, result.output
    assert "server: context 4,096 tokens (/api/v1/models)" in result.output


@pytest.mark.parametrize(("profile", "path"), [
    (ollama(context_length=4096, loaded="fake-model"), "/api/ps"),
    (lm_studio(context_length=4096), "/api/v1/models"),
])
def test_the_fake_servers_answer_in_the_shapes_their_documentation_quotes(profile, path):
    quoted = LOCAL_DOCS.read_text()
    with FakeJudgeServer.run_in_thread(server=profile) as server:
        root = server.base_url.removesuffix("/v1")
        with urllib.request.urlopen(root + path, timeout=10) as reply:
            listing = json.loads(reply.read())
    [entry] = listing["models"]
    for key in entry:  # every field the fake gives is one the documentation names
        assert f"{key}:" in quoted or f'"{key}":' in quoted, key


async def test_a_prompt_longer_than_ollamas_context_is_refused_before_it_is_sent(serve):
    # Ollama would cut it silently and answer about what is left: never sent
    server = await serve(server=ollama(context_length=1024, loaded="fake-model"))
    long_prompt = "The patient reports itching and swelling after a bee sting. " * 100  # ~1,500
    async with judge_for(server, provider="ollama") as judge:
        reply = await judge.ask(JudgeRequest(messages=({"role": "user", "content": long_prompt},),
                                             schema=VERDICT))
    assert reply.failure is not None and reply.failure.kind is FailureKind.CONTEXT_LENGTH
    assert "context of 1,024 tokens (/api/ps)" in reply.failure.message
    assert "OLLAMA_CONTEXT_LENGTH" in reply.failure.message
    assert server.requests == []


async def test_a_prompt_close_to_ollamas_context_is_sent_with_a_warning(serve, caplog):
    server = await serve(server=ollama(context_length=1024, loaded="fake-model"))
    near = "x" * 3800  # 950 tokens: within the estimate's margin of 1,024
    async with judge_for(server, provider="ollama") as judge:
        replies = [await judge.ask(request(near_id, response=near)) for near_id in ("c1", "c2")]
    assert all(reply.ok for reply in replies) and len(server.requests) == 2
    warnings = [r for r in caplog.records if "may not fit" in r.getMessage()]
    assert len(warnings) == 1  # once per judge


async def test_a_prompt_longer_than_llama_cpps_context_is_sent_for_the_server_to_refuse(serve):
    server = await serve(server=llama_cpp(n_ctx=1024, slots=2))
    async with judge_for(server, provider="llamacpp") as judge:
        reply = await judge.ask(request(response="y" * 6000))
    assert reply.ok and len(server.requests) == 1  # llama.cpp refuses by itself, exactly


# --- a local server that says no slots: AIMD on the replies' latency ---


async def _grade_all(judge, n: int) -> list:
    async with judge:
        return await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(n)))


async def test_without_slots_the_width_grows_to_about_the_servers_own_and_no_further(serve):
    # an Ollama that decodes 4 requests at once and queues the rest (it says neither)
    server = await serve(server=ollama(loaded="fake-model"), slots=4, latency=0.03)
    judge = judge_for(server, provider="ollama")
    replies = await _grade_all(judge, 240)
    assert all(reply.ok for reply in replies)
    in_flight = judge.in_flight
    assert in_flight["source"].startswith("latency: started at 2")
    assert 4 <= in_flight["reached"] <= 10  # about 1.25 x 4 slots (noise on a loaded machine), not 64
    assert server.peak_in_flight <= in_flight["reached"]


async def test_without_slots_on_a_server_that_keeps_up_the_width_keeps_growing(serve):
    # no queue of its own; 0.1 s replies, so a loaded machine's few ms of delay per request
    # as the width grows stay well within the 1.25x growth band
    server = await serve(server=ollama(loaded="fake-model"), latency=0.1)
    judge = judge_for(server, provider="ollama")
    await _grade_all(judge, 240)
    assert judge.in_flight["reached"] >= 10


async def test_a_users_limit_wins_over_the_latency(serve):
    server = await serve(server=ollama(loaded="fake-model"), slots=2, latency=0.02)
    judge = judge_for(server, provider="ollama", limits=Limits(max_in_flight=6))
    await _grade_all(judge, 24)
    assert judge.in_flight == {"max_in_flight": 6, "source": "limits.max_in_flight"}


async def test_a_runs_manifest_records_the_width_the_latency_reached(serve, tmp_path):
    server = await serve(server=ollama(loaded="fake-model"), slots=4, latency=0.02)
    (tmp_path / "rubric.json").write_text(json.dumps(RUBRIC))
    run = await assay.agrade(write_items(tmp_path / "items.jsonl", 20),
                             rubric=tmp_path / "rubric.json",
                             judges=[f"ollama:fake-model@{server.base_url}"],
                             run_dir=tmp_path / "run")
    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    [entry] = manifest["timing"]["sessions"][-1]["in_flight"].values()
    assert entry["source"].startswith("latency: started at 2") and entry["reached"] >= 3
