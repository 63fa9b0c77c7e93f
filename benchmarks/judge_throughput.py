"""Judge-layer throughput against the fake judge server, compared with a bare aiohttp client.

Sends N calls at concurrency C to ``assay fake-judge`` (run in a separate process, so the CPU
figures below are the client's alone) answering after L ms, with:

* ``bare aiohttp``: one ClientSession, a semaphore, orjson in and out — the floor;
* ``assay judge``: ``make_judge(...).ask`` with the full path (limits, retries, parsing,
  schema validation, cost), cache off;
* ``assay judge + cache (cold)`` and ``(warm)``: the same with the SQLite cache, first run
  (misses + writes) and second run (all hits, no network).

Prints calls/s, client CPU ms per call (process CPU time / calls) and the ratio of calls/s to
the bare client in the same run. Targets at C=64, L=50 ms: ratio >= 0.85, CPU <= 0.6 ms/call.

    .venv/bin/python benchmarks/judge_throughput.py            # N=2000 C=64 L=50
    .venv/bin/python benchmarks/judge_throughput.py -n 5000 -c 128 -l 20
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from fake_judge_process import start_fake_judge

from assay.judges import JudgeRequest, ResponseCache, make_judge

SCHEMA = {
    "type": "object",
    "properties": {"explanation": {"type": "string"},
                   "verdict": {"type": "string", "enum": ["MET", "UNMET", "CANNOT_ASSESS"]}},
    "required": ["explanation", "verdict"],
}


def prompt(i: int) -> str:
    return (f'Grade the response against the criterion.\n<criterion id="c{i % 12}">The response '
            f"advises seeing a clinician if symptoms persist beyond {i % 7 + 2} days.</criterion>\n"
            f"<response>Rest, fluids, and see a doctor if it lasts more than 3 days. ({i})</response>")


async def bare_client(base_url: str, n: int, c: int) -> int:
    semaphore = asyncio.Semaphore(c)
    url = base_url + "/chat/completions"
    ok = 0
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector,
                                     headers={"Content-Type": "application/json"}) as session:
        async def one(i: int) -> None:
            nonlocal ok
            body = {"model": "fake", "messages": [{"role": "user", "content": prompt(i)}],
                    "response_format": {"type": "json_schema",
                                        "json_schema": {"name": "verdict", "schema": SCHEMA}}}
            async with semaphore, session.post(url, data=orjson.dumps(body)) as response:
                payload = orjson.loads(await response.read())
            data = orjson.loads(payload["choices"][0]["message"]["content"])
            ok += data.get("verdict") == "MET"

        await asyncio.gather(*(one(i) for i in range(n)))
    return ok


async def assay_judge(base_url: str, n: int, c: int, cache: ResponseCache | None = None) -> int:
    async with make_judge(f"openai-compatible:fake@{base_url}", cache=cache,
                          limits={"max_in_flight": c}) as judge:
        requests = [JudgeRequest(messages=({"role": "user", "content": prompt(i)},), schema=SCHEMA)
                    for i in range(n)]
        replies = await asyncio.gather(*(judge.ask(r) for r in requests))
    return sum(r.ok for r in replies)


def measure(label: str, factory, n: int) -> dict:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    ok = asyncio.run(factory())
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if ok != n:
        raise SystemExit(f"{label}: only {ok} of {n} calls succeeded")
    return {"label": label, "calls_s": n / wall, "cpu_ms": 1000 * cpu / n, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--calls", type=int, default=2000)
    parser.add_argument("-c", "--concurrency", type=int, default=64)
    parser.add_argument("-l", "--latency-ms", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=2, help="Best of this many rounds per client.")
    args = parser.parse_args()
    n, c = args.calls, args.concurrency
    process, base_url = start_fake_judge(args.latency_ms, "--policy", "MET")
    try:
        asyncio.run(bare_client(base_url, min(200, n), c))  # warm up both sides
        asyncio.run(assay_judge(base_url, min(200, n), c))
        rows: dict[str, dict] = {}
        for _ in range(args.rounds):
            for label, factory in (("bare aiohttp", lambda: bare_client(base_url, n, c)),
                                   ("assay judge", lambda: assay_judge(base_url, n, c))):
                result = measure(label, factory, n)
                if label not in rows or result["calls_s"] > rows[label]["calls_s"]:
                    rows[label] = result
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cache.sqlite"
            cache = ResponseCache(path)
            rows["cache cold"] = measure("assay judge + cache (cold)",
                                         lambda: assay_judge(base_url, n, c, cache), n)
            rows["cache warm"] = measure("assay judge + cache (warm)",
                                         lambda: assay_judge(base_url, n, c, cache), n)
            cache.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    bare = rows["bare aiohttp"]["calls_s"]
    print(f"\njudge throughput: N={n} calls, C={c}, L={args.latency_ms:g} ms "
          f"(fake judge in a separate process; CPU = this process only)\n")
    print(f"{'client':30} {'calls/s':>9} {'CPU ms/call':>12} {'vs bare':>8}")
    print("-" * 62)
    for row in rows.values():
        print(f"{row['label']:30} {row['calls_s']:9.0f} {row['cpu_ms']:12.3f} "
              f"{row['calls_s'] / bare:8.2f}")
    judge = rows["assay judge"]
    verdict = "PASS" if judge["calls_s"] / bare >= 0.85 and judge["cpu_ms"] <= 0.6 else "MISS"
    print(f"\ntarget (C=64, L=50 ms): ratio >= 0.85 and CPU <= 0.6 ms/call -> {verdict}")


if __name__ == "__main__":
    main()
