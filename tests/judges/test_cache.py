"""The SQLite response cache, on its own and inside a judge over loopback HTTP."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading

from assay.judges import JudgeRequest, ResponseCache
from assay.testing import Faults

from .helpers import judge_for, request


def count_rows(path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


async def test_a_second_identical_ask_is_a_hit_with_no_network_call(serve, tmp_path):
    server = await serve(policy="MET")
    cache = ResponseCache(tmp_path / "c.sqlite")
    async with judge_for(server, ) as _:
        pass
    async with judge_for(server) as first, judge_for(server) as second:
        first.cache = second.cache = cache
        miss = await first.ask(request())
        hit = await second.ask(request())
    assert not miss.cached and hit.cached and hit.data == miss.data and hit.raw == miss.raw
    assert len(server.requests) == 1
    assert (cache.stats().hits, cache.stats().misses) == (1, 1)


async def test_a_second_run_in_a_new_process_state_makes_no_call(serve, tmp_path):
    server = await serve(policy="UNMET")
    path = tmp_path / "c.sqlite"
    for _ in range(2):
        cache = ResponseCache(path)
        async with judge_for(server) as judge:
            judge.cache = cache
            replies = await asyncio.gather(*(judge.ask(request(f"c{i}")) for i in range(5)))
        cache.close()
    assert len(server.requests) == 5 and all(r.cached for r in replies)


async def test_a_hit_costs_nothing(serve, tmp_path):
    server = await serve(usage={"prompt_tokens": 1000, "completion_tokens": 100})
    async with judge_for(server, price={"input": 1.0, "output": 1.0}) as judge:
        judge.cache = ResponseCache(tmp_path / "c.sqlite")
        paid = await judge.ask(request())
        free = await judge.ask(request())
    assert paid.cost_usd > 0 and free.cost_usd == 0.0 and free.usage.total_tokens == 0


async def test_a_new_template_version_is_a_miss(serve, tmp_path):
    server = await serve()
    messages = ({"role": "user", "content": "<criterion id='x'>t</criterion>"},)
    async with judge_for(server) as judge:
        judge.cache = ResponseCache(tmp_path / "c.sqlite")
        await judge.ask(JudgeRequest(messages=messages, template_version="v1"))
        again = await judge.ask(JudgeRequest(messages=messages, template_version="v2"))
    assert not again.cached and len(server.requests) == 2


async def test_changed_judge_parameters_are_a_miss(serve, tmp_path):
    server = await serve()
    cache = ResponseCache(tmp_path / "c.sqlite")
    async with judge_for(server, temperature=0.0) as cold, judge_for(server, temperature=0.7) as warm:
        cold.cache = warm.cache = cache
        await cold.ask(request())
        reply = await warm.ask(request())
    assert not reply.cached


async def test_bypass_neither_reads_nor_writes(serve, tmp_path):
    server = await serve()
    path = tmp_path / "c.sqlite"
    async with judge_for(server) as judge:
        judge.cache = ResponseCache(path, mode="bypass")
        await judge.ask(request())
        reply = await judge.ask(request())
    assert not reply.cached and len(server.requests) == 2 and count_rows(path) == 0


async def test_refresh_calls_again_and_overwrites(serve, tmp_path):
    path = tmp_path / "c.sqlite"
    old = await serve(policy="UNMET")
    async with judge_for(old) as judge:
        judge.cache = ResponseCache(path)
        await judge.ask(request())
    new = await serve(policy="MET")
    async with judge_for(old) as judge:  # same key: same endpoint URL as before
        judge.cache = ResponseCache(path, mode="refresh")
        judge._transport.base_url = new.base_url  # the same endpoint, now answering differently
        refreshed = await judge.ask(request())
    assert not refreshed.cached and refreshed.data["verdict"] == "MET"
    async with judge_for(old) as judge:
        judge.cache = ResponseCache(path)
        assert (await judge.ask(request())).data["verdict"] == "MET"
    assert count_rows(path) == 1


async def test_an_entry_older_than_the_ttl_is_a_miss(serve, tmp_path):
    server = await serve()
    async with judge_for(server) as judge:
        judge.cache = ResponseCache(tmp_path / "c.sqlite", ttl_s=0.05)
        await judge.ask(request())
        await asyncio.sleep(0.1)
        reply = await judge.ask(request())
    assert not reply.cached and len(server.requests) == 2


async def test_failures_are_never_cached(serve, tmp_path):
    server = await serve(faults=Faults(script=["malformed"] * 3))  # the first call and 2 re-asks
    path = tmp_path / "c.sqlite"
    async with judge_for(server) as judge:
        judge.cache = ResponseCache(path)
        failed = await judge.ask(request())
        retried = await judge.ask(request())
    assert not failed.ok and retried.ok and not retried.cached and count_rows(path) == 1


def test_threads_writing_at_once_lose_nothing(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")

    def write(prefix: str) -> None:
        for i in range(100):
            cache.put(f"{prefix}{i}", judge="j", model="m", data={"i": i}, raw="{}", usage={})

    threads = [threading.Thread(target=write, args=(f"t{n}-",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.stats().entries == 400


def test_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    script = (
        "import sys\nfrom assay.judges import ResponseCache\n"
        "c = ResponseCache(sys.argv[1])\n"
        "for i in range(150):\n"
        "    c.put(f'{sys.argv[2]}-{i}', judge='j', model='m', data={'i': i}, raw='{}', usage={})\n"
        "    c.get(f'{sys.argv[2]}-{i}')\n"
        "c.close()\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"p{n}"]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    with ResponseCache(path) as cache:
        stats = cache.stats()
    assert stats.entries == 600 and stats.lifetime_hits == 600


def test_clear_can_remove_one_model_only(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("a", judge="j", model="m1", data={}, raw="", usage={})
        cache.put("b", judge="j", model="m2", data={}, raw="", usage={})
        assert cache.clear(model="m1") == 1
        assert cache.stats().by_model == {"m2": 1}


def test_hit_and_miss_counts_survive_the_process(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("a", judge="j", model="m", data={}, raw="", usage={})
        cache.get("a")
        cache.get("b")
    with ResponseCache(path) as cache:
        stats = cache.stats()
    assert (stats.lifetime_hits, stats.lifetime_misses, stats.hits) == (1, 1, 0)


def test_a_batched_write_is_readable_before_it_reaches_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("a", judge="j", model="m", data={"v": 1}, raw="", usage={})
        assert cache.get("a").data == {"v": 1}
        cache.flush()
        assert count_rows(path) == 1


async def test_cached_serves_the_stored_replies_in_one_lookup_and_ask_makes_only_the_rest(
        serve, tmp_path):
    server = await serve(policy="MET")
    cache = ResponseCache(tmp_path / "c.sqlite")
    async with judge_for(server, cache=cache) as judge:
        stored = await judge.ask(request("c1"))
        asked = [request("c1"), request("c2"), request("c3")]
        found = judge.cached(asked)
        assert [r is not None for r in found] == [True, False, False]
        assert found[0].cached and found[0].data == stored.data and found[0].raw == stored.raw
        assert found[0].cost_usd == 0.0 and found[0].attempts == 0
        replies = [await judge.ask(r) for r in asked[1:]]
    assert all(r.ok and not r.cached for r in replies)
    assert len(server.requests) == 3  # c1 once, then c2 and c3: nothing asked twice
    # each request is counted once: c1's first miss, then one hit and two misses in bulk
    assert (cache.stats().hits, cache.stats().misses) == (1, 3)
    assert judge.cached([request("c2"), request("c3")])[1].cached  # stored after the miss


async def test_cached_serves_nothing_once_the_budget_is_spent(serve, tmp_path):
    from assay.judges import Budget

    server = await serve(policy="MET")
    cache = ResponseCache(tmp_path / "c.sqlite")
    budget = Budget(0.0)
    async with judge_for(server, cache=cache) as judge:
        await judge.ask(request("c1"))
        judge.budget = budget
        budget.charge(0.01)
        assert judge.cached([request("c1")]) == [None]
        refused = await judge.ask(request("c1"))
    assert refused.failure is not None and refused.failure.kind.value == "budget"
