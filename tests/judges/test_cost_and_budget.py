"""Usage, pricing, cost sums, dry-run estimates and the budget stop."""

from __future__ import annotations

import asyncio
import json

import pytest

from assay.errors import InputError
from assay.judges import Budget, FailureKind, ModelPrice, Pricing, Usage, estimate_cost

from .helpers import judge_for, request

USAGE = {"prompt_tokens": 1000, "completion_tokens": 200, "cached_tokens": 400}
PRICE = {"input": 2.0, "cached_input": 0.5, "output": 8.0}
PER_CALL = (600 * 2.0 + 400 * 0.5 + 200 * 8.0) / 1e6  # 0.003


async def test_each_call_is_priced_from_its_usage(serve):
    server = await serve(usage=USAGE)
    async with judge_for(server, price=PRICE) as judge:
        reply = await judge.ask(request())
    assert reply.cost_usd == pytest.approx(PER_CALL)


async def test_costs_and_tokens_sum_over_calls(serve):
    server = await serve(usage=USAGE)
    async with judge_for(server, price=PRICE) as judge:
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(7)))
    assert sum(r.cost_usd for r in replies) == pytest.approx(7 * PER_CALL)
    assert judge.total_cost_usd == pytest.approx(7 * PER_CALL)
    total = sum((r.usage for r in replies), Usage())
    assert total == Usage(7000, 1400, 2800, 0) == judge.total_usage


async def test_a_reask_adds_the_tokens_of_both_attempts(serve):
    from assay.testing import Faults

    server = await serve(usage=USAGE, faults=Faults(script=["malformed"]))
    async with judge_for(server, price=PRICE) as judge:
        reply = await judge.ask(request())
    assert reply.attempts == 2 and reply.usage.prompt_tokens == 2000
    assert reply.cost_usd == pytest.approx(2 * PER_CALL)


async def test_an_attempt_abandoned_on_its_timeout_is_billed_at_its_estimate(serve):
    """Issue 40, point 3: the provider generated the abandoned attempt's reply and bills it;
    its usage never came back, so it is counted at its reservation and marked estimated."""
    from assay.testing import Faults

    server = await serve(usage=USAGE, faults=Faults(script=["timeout"], hang_s=5.0))
    budget = Budget(max_usd=10.0)
    async with judge_for(server, price=PRICE, timeout_s=0.2) as judge:
        judge.budget = budget
        estimate = judge.estimator.estimate(request().messages, request().schema,
                                            judge.completion_limit(request()))
        reply = await judge.ask(request())
    assert reply.ok and reply.attempts == 2 and reply.abandoned == 1
    assert reply.estimated_usd == pytest.approx(estimate) and estimate > PER_CALL
    assert reply.cost_usd == pytest.approx(PER_CALL + estimate)
    assert budget.spent_usd == pytest.approx(PER_CALL + estimate)  # the budget counts it too
    assert judge.estimated_cost_usd == pytest.approx(estimate)


async def test_an_unpriced_judges_abandoned_attempt_costs_nothing(serve):
    from assay.testing import Faults

    server = await serve(faults=Faults(script=["timeout"], hang_s=5.0))
    async with judge_for(server, timeout_s=0.2) as judge:
        reply = await judge.ask(request())
    assert reply.ok and reply.abandoned == 1 and reply.cost_usd == reply.estimated_usd == 0.0


async def test_the_preflight_is_reserved_from_the_budget_and_settled_at_its_cost(serve):
    server = await serve()
    budget = Budget(max_usd=1.0)
    async with judge_for(server, price=PRICE) as judge:
        judge.budget = budget
        await judge.check()
        spent = judge.take_preflight()
    # the fake judge's preflight reply: 1 prompt and 1 completion token
    assert (spent.requests, spent.prompt_tokens, spent.completion_tokens) == (1, 1, 1)
    assert spent.cost_usd == pytest.approx((2.0 + 8.0) / 1e6)
    assert budget.spent_usd == pytest.approx(spent.cost_usd) == judge.total_cost_usd
    assert judge.take_preflight().requests == 0  # taken once, for one store


async def test_a_preflight_cancelled_in_flight_is_billed_at_its_estimate_without_a_budget(serve):
    """Sent and abandoned: the provider bills it, so it costs its estimate, as an abandoned
    call does, whether or not a budget reserved it."""
    server = await serve()
    server.preflight_delay_s = 5.0
    async with judge_for(server, price=PRICE) as judge:
        check = asyncio.create_task(judge.check())
        while server.preflights == 0:
            await asyncio.sleep(0.01)
        check.cancel()
        with pytest.raises(asyncio.CancelledError):
            await check
        spent = judge.take_preflight()
    assert spent.requests == 1 and spent.cost_usd > 0
    assert judge.total_cost_usd == pytest.approx(spent.cost_usd)


async def test_a_budget_too_small_for_the_preflight_is_refused_before_any_call(serve):
    from assay.errors import ConfigError

    server = await serve()
    async with judge_for(server, price=PRICE) as judge:
        judge.budget = Budget(max_usd=1e-9)
        with pytest.raises(ConfigError, match="cannot pay for its preflight request"):
            await judge.check()
    assert server.preflights == 0


async def test_a_model_priced_in_the_shipped_table_costs_its_list_price(serve):
    server = await serve(usage={"prompt_tokens": 1_000_000, "completion_tokens": 0})
    async with judge_for(server) as judge:
        judge.config = judge.config  # the model is "fake-model": unpriced
        free = await judge.ask(request())
    assert free.cost_usd == 0.0
    from assay.judges import make_judge

    async with make_judge(f"openai-compatible:gpt-4.1-mini@{server.base_url}") as judge:
        priced = await judge.ask(request())
    assert priced.cost_usd == pytest.approx(0.40)


async def test_the_budget_stops_calls_once_spent_and_keeps_what_is_done(serve):
    server = await serve(usage=USAGE)
    budget = Budget(max_usd=PER_CALL * 3)
    # max_tokens bounds each reservation (200 completion tokens: $0.0016 plus the prompt's);
    # from the first reply on, a call reserves the dearest call seen, PER_CALL
    async with judge_for(server, price=PRICE, max_tokens=200) as judge:
        judge.budget = budget
        replies = [await judge.ask(request(f"c{i}")) for i in range(6)]
    assert [r.ok for r in replies] == [True, True, True, False, False, False]
    assert all(r.failure.kind is FailureKind.BUDGET and r.attempts == 0 for r in replies[3:])
    assert len(server.requests) == 3 and budget.exhausted and budget.refused == 3


async def test_one_budget_is_shared_by_several_judges(serve):
    server = await serve(usage=USAGE)
    budget = Budget(max_usd=PER_CALL * 2)
    async with judge_for(server, price=PRICE) as a, judge_for(server, price=PRICE, id="b") as b:
        a.budget = b.budget = budget
        await a.ask(request())
        await b.ask(request())
        late = await a.ask(request("c2"))
    assert late.failure.kind is FailureKind.BUDGET


async def test_concurrent_calls_never_spend_more_than_the_budget(serve):
    # the fake judge counts about 4 characters a token, as the reservation does, and its
    # replies are far below max_tokens: each call costs at most its estimate
    server = await serve(latency=0.01)
    async with judge_for(server, price=PRICE, max_tokens=40,
                         limits={"max_in_flight": 16}) as judge:
        one_call = judge.estimator.estimate(request().messages, request().schema)
        budget = judge.budget = Budget(max_usd=one_call * 8.5)  # about half the calls' cost
        replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(80)))
    spent = sum(r.cost_usd for r in replies)
    assert budget.spent_usd == pytest.approx(spent) and budget.refused > 0
    assert budget.max_usd - one_call < spent <= budget.max_usd  # stops within one estimate
    assert all(r.ok or r.failure.kind is FailureKind.BUDGET for r in replies)
    assert len(server.requests) == sum(r.ok for r in replies)  # no reply lost, none refused late


async def test_a_reservation_that_does_not_fit_waits_for_the_calls_in_flight():
    budget = Budget(max_usd=1.0)
    assert await budget.reserve(0.6)
    waiting = asyncio.ensure_future(budget.reserve(0.6))  # 0.6 + 0.6 > 1.0 while 0.6 is held
    await asyncio.sleep(0.01)
    assert not waiting.done()
    budget.settle(0.6, 0.2)  # the call in flight cost less than its estimate: room for 0.6
    assert await waiting and budget.reserved_usd == pytest.approx(0.6)
    assert not budget.exhausted


async def test_a_reservation_is_refused_when_nothing_in_flight_can_make_room():
    budget = Budget(max_usd=1.0)
    assert await budget.reserve(0.5)
    budget.settle(0.5, 0.5)
    assert not await budget.reserve(0.6)  # 0.5 spent + 0.6 > 1.0, nothing in flight
    assert budget.exhausted and budget.spent_usd == 0.5
    assert not await budget.reserve(0.01)  # exhausted: every later call is refused


async def test_waiting_reservations_are_all_refused_when_the_last_call_in_flight_settles():
    budget = Budget(max_usd=1.0)
    assert await budget.reserve(0.9)
    waiting = [asyncio.ensure_future(budget.reserve(0.3)) for _ in range(3)]
    await asyncio.sleep(0.01)
    budget.settle(0.9, 0.9)
    assert await asyncio.gather(*waiting) == [False, False, False]
    assert budget.exhausted and budget.reserved_usd == 0.0


def test_an_estimate_uses_max_tokens_and_learns_the_dearest_call():
    from assay.judges.budget import DEFAULT_COMPLETION_TOKENS, CallEstimator

    price = ModelPrice(input=1.0, output=10.0)
    messages = [{"role": "user", "content": "x" * 400}]  # 100 prompt tokens
    assert CallEstimator(price, 50).estimate(messages, None) == pytest.approx(600 / 1e6)
    unbounded = CallEstimator(price)
    assert unbounded.estimate(messages, None) == pytest.approx(
        (100 + 10 * DEFAULT_COMPLETION_TOKENS) / 1e6)
    unbounded.observe(0.5)
    assert unbounded.estimate(messages, None) == 0.5
    assert CallEstimator(None).estimate(messages, None) == 0.0  # an unpriced model is free


def test_dated_snapshots_use_the_base_model_price():
    assert Pricing.default().price_for("gpt-4.1-mini-2025-04-14").input == 0.40


def test_a_vendor_prefix_is_ignored_when_pricing():
    assert Pricing.default().price_for("openai/gpt-4o-mini").output == 0.60


def test_an_unknown_model_is_unpriced():
    estimate = estimate_cost("my-local-llama", 1000, 100, 10)
    assert estimate.usd == 0.0 and not estimate.priced


def test_a_dry_run_estimate_multiplies_by_the_number_of_calls():
    estimate = estimate_cost("gpt-4.1", prompt_tokens=2000, completion_tokens=250, n_calls=1000)
    assert (estimate.prompt_tokens, estimate.completion_tokens) == (2_000_000, 250_000)
    assert estimate.usd == pytest.approx(2 * 2.0 + 0.25 * 8.0)


def test_a_user_pricing_file_overrides_the_shipped_table(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"gpt-4.1": {"input": 1.0, "output": 1.0}}}))
    table = Pricing.default().merged(Pricing.load(path))
    assert table.price_for("gpt-4.1") == ModelPrice(input=1.0, output=1.0)


def test_the_pricing_environment_variable_is_merged(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[models.house-model]\ninput = 0.1\noutput = 0.2\n')
    monkeypatch.setenv("ASSAY_PRICING", str(path))
    assert Pricing.default().price_for("house-model").output == 0.2


def test_a_bad_price_names_the_file_and_field(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"m": {"input": -1, "output": 1}}}))
    with pytest.raises(InputError, match=r"prices.json: models.m.input: "):
        Pricing.load(path)
