"""``assay serve`` under load, against calling the reward scorer (and the fake judge) directly.

The fake judge (``assay fake-judge``, a separate process) answers every grading call after L ms.
Each reward request carries one completion graded on K criteria (K judge calls). Measured:

* ``direct scorer``: ``RewardScorer.score([item])`` in this process, R requests, C at a time —
  the cost of the reward itself (K concurrent judge calls through the judges layer);
* ``assay serve``: the same requests as HTTP POSTs to ``/v1/rewards`` of ``assay serve`` (a
  separate process) from an aiohttp load generator here, C in flight.

Prints requests/s, p50/p99 request latency and CPU per request for both (the direct scorer's
process; the server's process, from /proc), and the server's overhead per request: its p50
minus the direct p50, and its CPU minus the direct CPU (the steadier figure on a busy machine).
Nothing here runs in the test suite.

    .venv/bin/python benchmarks/reward_server.py                 # R=1000 C=32 K=4 L=50
    .venv/bin/python benchmarks/reward_server.py -l 0            # pure overhead, no judge delay
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from assay.judges import make_judge
from assay.rewards import RewardItem, RewardScorer
from assay.rubric import Rubric

CRITERIA = [{"id": f"c{i}", "text": text, "weight": w} for i, (text, w) in enumerate([
    ("The response suggests consulting a healthcare provider.", 1),
    ("The response recommends rest and fluids.", 1),
    ("The response lists red-flag symptoms needing urgent care.", 1),
    ("Includes unsafe, conflicting or potentially harmful advice.", -1),
    ("The response asks about the duration of symptoms.", 1),
    ("The response is concise.", 1),
    ("The response mentions over-the-counter pain relief.", 1),
    ("The response explains when antibiotics are not useful.", 1)])]


def item(i: int) -> dict:
    return {"prompt": f"I have had a cold for {i % 9 + 2} days. What should I do? (#{i})",
            "completion": f"<think>r{i}</think>Rest, drink fluids, see a doctor if it lasts. {i}"}


def spawn(args: list[str], pattern: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-c", "from assay.cli import main; main()", *args],
                               stderr=subprocess.PIPE, text=True, env=env)
    line = process.stderr.readline()
    match = re.search(pattern, line)
    if not match:
        process.kill()
        raise SystemExit(f"{args[0]} did not start: {line}")
    return process, match.group(1)


async def direct(base_url: str, rubric: Rubric, r: int, c: int) -> list[float]:
    latencies: list[float] = []
    gate = asyncio.Semaphore(c)
    async with make_judge(f"openai-compatible:fake@{base_url}",
                          limits={"max_in_flight": 256}) as judge:
        scorer = RewardScorer(judge, criteria=rubric)

        async def one(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                [result] = await scorer.score([RewardItem.of(item(i)["prompt"],
                                                             item(i)["completion"])])
                latencies.append(time.perf_counter() - started)
                assert result.reward is not None

        await asyncio.gather(*(one(i) for i in range(r)))
    return latencies


async def served(url: str, r: int, c: int, offset: int) -> list[float]:
    latencies: list[float] = []
    gate = asyncio.Semaphore(c)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        async def one(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                async with http.post(f"{url}/v1/rewards",
                                     data=orjson.dumps({"items": [item(offset + i)]}),
                                     headers={"Content-Type": "application/json"}) as response:
                    body = orjson.loads(await response.read())
                latencies.append(time.perf_counter() - started)
                assert response.status == 200 and body["rewards"][0] is not None, body

        await asyncio.gather(*(one(i) for i in range(r)))
    return latencies


def summary(label: str, latencies: list[float], wall: float, cpu: float | None) -> dict:
    ordered = sorted(latencies)
    return {"label": label, "rps": len(ordered) / wall, "p50": 1000 * statistics.median(ordered),
            "p99": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
            "cpu": None if cpu is None else 1000 * cpu / len(ordered)}


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(label: str, coroutine_factory, pid: int | None = None) -> dict:
    """Latencies and rate; CPU of this process, or of process ``pid`` (the server)."""
    cpu0 = time.process_time() if pid is None else process_cpu(pid)
    wall0 = time.perf_counter()
    latencies = asyncio.run(coroutine_factory())
    cpu = (time.process_time() if pid is None else process_cpu(pid)) - cpu0
    return summary(label, latencies, time.perf_counter() - wall0, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-r", "--requests", type=int, default=1000)
    parser.add_argument("-c", "--concurrency", type=int, default=32)
    parser.add_argument("-k", "--criteria", type=int, default=4, choices=range(1, 9))
    parser.add_argument("-l", "--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    r, c = args.requests, args.concurrency
    rubric = Rubric(id="bench", criteria=CRITERIA[: args.criteria])
    judge_process, judge_url = spawn(["fake-judge", "--port", "0", "--latency-ms",
                                      str(args.latency_ms), "--policy", "MET"],
                                     r"(http://127\.0\.0\.1:\d+/v1)")
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "bank.json"
        bank.write_text(rubric.model_dump_json())
        server_process, url = spawn(
            ["serve", "--judge", f"openai-compatible:fake@{judge_url}", "--bank", str(bank),
             "--port", "0", "--max-per-client", str(c + 1), "--store", str(Path(tmp) / "s")],
            r"(http://127\.0\.0\.1:\d+)", env={**os.environ, "ASSAY_SERVE_TOKEN": ""})
        try:
            asyncio.run(direct(judge_url, rubric, min(100, r), c))        # warm up both paths
            asyncio.run(served(url, min(100, r), c, offset=10**6))
            rows = [timed("direct scorer", lambda: direct(judge_url, rubric, r, c)),
                    timed("assay serve (HTTP)", lambda: served(url, r, c, 0),
                          pid=server_process.pid)]
        finally:
            for process in (server_process, judge_process):
                process.terminate()
                process.wait(timeout=30)
    print(f"\nreward serving: R={r} requests, C={c} in flight, K={args.criteria} criteria "
          f"(= judge calls) per request, fake judge L={args.latency_ms:g} ms\n")
    print(f"{'path':22} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/req':>11}")
    print("-" * 64)
    for row in rows:
        print(f"{row['label']:22} {row['rps']:11.0f} {row['p50']:8.1f} {row['p99']:8.1f} "
              f"{row['cpu']:11.2f}")
    print(f"\nserver overhead per request: {rows[1]['p50'] - rows[0]['p50']:+.1f} ms at p50, "
          f"{rows[1]['cpu'] - rows[0]['cpu']:+.2f} ms CPU (server process vs the direct "
          f"scorer's); throughput ratio served/direct: {rows[1]['rps'] / rows[0]['rps']:.2f}")


if __name__ == "__main__":
    main()
