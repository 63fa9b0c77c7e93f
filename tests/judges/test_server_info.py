"""Local servers telling what they are (llama.cpp's /props, vLLM's max_model_len), over real
HTTP against the fake server: what `assay judges check` says, the requests in flight that follow
the server's slots, and the attempt timeout of a local preset."""

from __future__ import annotations

import asyncio

from typer.testing import CliRunner

from assay.cli import app
from assay.judges import FailureKind, Limits, make_judge
from assay.testing import FakeJudgeServer
from assay.testing.server_props import llama_cpp, vllm

from .helpers import judge_for, request

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
    assert "64 requests in flight (the default)" in result.output


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
