"""``assay serve`` under mixed good and bad requests, against calling the judge directly.

The load test of issue 28. The fake judge (``assay fake-judge``, its own process) answers each
grading call after L ms; each good request is one completion graded on K criteria (K judge
calls). For each C (requests in flight) two paths run:

* ``direct``: ``RewardScorer.score([item])`` in this process, the good requests only, C at a
  time: the judge called directly, with no server;
* ``assay serve``: the same good requests (4 in 5 to ``/v1/rewards``, 1 in 5 to OpenRLHF's
  ``/get_reward``) shuffled with B% bad ones (a role "doctor", a missing completion, an image
  content part, a completion that is a number, an unknown field, invalid JSON, a ``text/plain``
  POST, an unknown path, an OpenRLHF query that does not start with its prompt, a body over
  ``--max-body-bytes``), sent to ``assay serve`` (its own process) over HTTP, C in flight.

Each path runs ``--rounds`` times, alternating, and the best round of each is kept (the shared
machine's load varies between rounds); the ratio within each round (the two paths back to
back) is printed too, as its median and range. Checked: no good request failed, every bad one got a
4xx; printed: good requests/s of each path and their ratio (the target: at least 0.9), p50/p99
latency of good requests, and the server's CPU per good request. Nothing here runs in the tests.

    .venv/bin/python benchmarks/serve_mixed_load.py                   # R=1000 good, 20% bad
    .venv/bin/python benchmarks/serve_mixed_load.py -c 32 -c 128 -l 50 --bad-share 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from functools import partial
from pathlib import Path

import aiohttp
import orjson
from reward_server import CRITERIA, process_cpu, spawn

from assay.judges import make_judge
from assay.rewards import RewardItem, RewardScorer
from assay.rubric import Rubric

MAX_BODY = 64 * 1024
JSON = {"Content-Type": "application/json"}
TEMPLATE = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"


def good_item(i: int) -> dict:
    return {"prompt": f"I have had a cold for {i % 9 + 2} days. What should I do? (#{i})",
            "completion": f"<think>r{i}</think>Rest, drink fluids, see a doctor if it lasts. {i}"}


def good_request(i: int) -> tuple[str, str, bytes, dict]:
    """(kind, path, body, headers) of good request ``i``."""
    item = good_item(i)
    if i % 5 == 4:  # OpenRLHF's remote reward model
        prompt = TEMPLATE.format(item["prompt"])
        body = {"query": [prompt + item["completion"]], "prompts": [prompt], "labels": [None]}
        return "good /get_reward", "/get_reward", orjson.dumps(body), JSON
    return "good /v1/rewards", "/v1/rewards", orjson.dumps({"items": [item]}), JSON


def bad_request(i: int) -> tuple[str, str, bytes, dict]:
    """(kind, path, body, headers) of bad request ``i``: one of ten kinds, each a 4xx."""
    item = good_item(10**6 + i)
    kinds = [
        ("role doctor", "/v1/rewards", {"items": [{"messages": [
            {"role": "doctor", "content": item["prompt"]}], "completion": "Rest."}]}),
        ("no completion", "/v1/rewards", {"items": [{"prompt": item["prompt"]}]}),
        ("image part", "/v1/rewards", {"items": [{"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:,x"}}]}], "completion": "A."}]}),
        ("number completion", "/v1/rewards", {"items": [{**item, "completion": 42}]}),
        ("unknown field", "/v1/rewards", {"items": [{**item, "criterion": ["c0"]}]}),
        ("invalid JSON", "/v1/rewards", None),
        ("text/plain POST", "/v1/rewards", {"items": [item]}),
        ("unknown path", f"/admin/{i}", {"items": [item]}),
        ("query without its prompt", "/get_reward", {"query": ["Rest."],
                                                     "prompts": [item["prompt"]]}),
        ("body over limit", "/v1/rewards", {"items": [{**item, "completion": "x" * MAX_BODY}]}),
    ]
    kind, path, body = kinds[i % len(kinds)]
    raw = b"{not json" if body is None else orjson.dumps(body)
    headers = {"Content-Type": "text/plain"} if kind == "text/plain POST" else JSON
    return kind, path, raw, headers


async def direct(judge_url: str, rubric: Rubric, n: int, c: int, j: int) -> dict:
    latencies: list[float] = []
    gate = asyncio.Semaphore(c)
    failed = 0
    async with make_judge(f"openai-compatible:fake@{judge_url}",
                          limits={"max_in_flight": j}) as judge:
        scorer = RewardScorer(judge, criteria=rubric)

        async def one(i: int) -> None:
            nonlocal failed
            async with gate:
                started = time.perf_counter()
                item = good_item(i)
                [result] = await scorer.score([RewardItem.of(item["prompt"], item["completion"])])
                latencies.append(time.perf_counter() - started)
                failed += result.reward is None

        wall = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - wall
    return {"latencies": latencies, "wall": wall, "good_failed": failed, "bad_not_4xx": 0,
            "statuses": Counter()}


async def served(url: str, n_good: int, n_bad: int, c: int, offset: int, seed: int) -> dict:
    requests = ([(True, *good_request(offset + i)) for i in range(n_good)]
                + [(False, *bad_request(offset + i)) for i in range(n_bad)])
    random.Random(seed).shuffle(requests)
    latencies: list[float] = []
    statuses: Counter[tuple[str, int]] = Counter()
    good_failed = bad_not_4xx = 0
    gate = asyncio.Semaphore(c)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        async def one(good: bool, kind: str, path: str, body: bytes, headers: dict) -> None:
            nonlocal good_failed, bad_not_4xx
            async with gate:
                started = time.perf_counter()
                try:
                    async with http.post(url + path, data=body, headers=headers) as response:
                        reply = await response.read()
                        status = response.status
                except aiohttp.ClientError:  # e.g. the server closed an over-limit upload
                    status = 0
                statuses[(kind, status)] += 1
                if good:
                    latencies.append(time.perf_counter() - started)
                    rewards = orjson.loads(reply).get("rewards") if status == 200 else None
                    good_failed += not rewards or rewards[0] is None
                else:
                    bad_not_4xx += not 400 <= status < 500

        wall = time.perf_counter()
        await asyncio.gather(*(one(*r) for r in requests))
        wall = time.perf_counter() - wall
    return {"latencies": latencies, "wall": wall, "good_failed": good_failed,
            "bad_not_4xx": bad_not_4xx, "statuses": statuses}


def timed(run, pid: int | None = None) -> dict:
    cpu0 = time.process_time() if pid is None else process_cpu(pid)
    out = asyncio.run(run())
    out["cpu"] = (time.process_time() if pid is None else process_cpu(pid)) - cpu0
    ordered = sorted(out["latencies"])
    out.update(rps=len(ordered) / out["wall"], p50=1000 * statistics.median(ordered),
               p99=1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
               cpu_ms=1000 * out["cpu"] / len(ordered))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-r", "--good", type=int, default=1000, help="good requests per run")
    parser.add_argument("--bad-share", type=float, default=0.2,
                        help="share of bad requests in the served run")
    parser.add_argument("-c", "--concurrency", type=int, action="append",
                        help="requests in flight (repeatable; default 32 and 128)")
    parser.add_argument("-k", "--criteria", type=int, default=4, choices=range(1, 9))
    parser.add_argument("-l", "--latency-ms", type=float, default=50.0)
    parser.add_argument("-j", "--judge-concurrency", type=int, default=512,
                        help="the judge's requests in flight, both paths (assay serve "
                        "--concurrency)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-window-ms", type=float, default=5.0,
                        help="the server's micro-batching window (assay serve's default: 5)")
    args = parser.parse_args()
    levels = args.concurrency or [32, 128]
    n_good = args.good
    n_bad = round(n_good * args.bad_share / (1 - args.bad_share))
    rubric = Rubric(id="bench", criteria=CRITERIA[: args.criteria])
    judge_process, judge_url = spawn(["fake-judge", "--port", "0", "--latency-ms",
                                      str(args.latency_ms), "--policy", "MET"],
                                     r"(http://127\.0\.0\.1:\d+/v1)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "bank.json"
        bank.write_text(rubric.model_dump_json())
        server_process, url = spawn(
            ["serve", "--judge", f"openai-compatible:fake@{judge_url}", "--bank", str(bank),
             "--port", "0", "--max-per-client", str(max(levels) + 1), "--concurrency",
             str(args.judge_concurrency), "--max-body-bytes", str(MAX_BODY),
             "--store", str(Path(tmp) / "s"), "--batch-window-ms", str(args.batch_window_ms)],
            r"(http://127\.0\.0\.1:\d+)", env={**os.environ, "ASSAY_SERVE_TOKEN": ""})
        try:
            asyncio.run(direct(judge_url, rubric, 100, 32, args.judge_concurrency))  # warm up
            asyncio.run(served(url, 100, 25, 32, offset=10**7, seed=0))
            offset = 0
            for c in levels:
                best: dict[str, dict] = {}
                ratios = []
                for round_ in range(args.rounds):
                    runs = (("direct (judge, no server)", None, partial(
                                direct, judge_url, rubric, n_good, c, args.judge_concurrency)),
                            ("assay serve (HTTP, mixed)", server_process.pid, partial(
                                served, url, n_good, n_bad, c, offset, seed=round_)))
                    offset += n_good + n_bad
                    results = [timed(run, pid) for _, pid, run in runs]
                    for (label, _, _), result in zip(runs, results, strict=True):
                        if label not in best or result["rps"] > best[label]["rps"]:
                            best[label] = result
                    ratios.append(results[1]["rps"] / results[0]["rps"])
                rows.append((c, best, ratios))
        finally:
            for process in (server_process, judge_process):
                process.terminate()
                process.wait(timeout=30)
    print(f"\nassay serve under mixed load: {n_good} good requests per run (+{n_bad} bad in the "
          f"served run), K={args.criteria} criteria (judge calls) per good request, fake judge "
          f"L={args.latency_ms:g} ms, judge requests in flight {args.judge_concurrency}, best "
          f"of {args.rounds} rounds\n")
    print(f"{'C':>4} {'path':27} {'good req/s':>10} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'CPU ms/good':>11} {'good failed':>11} {'bad not 4xx':>11} {'ratio':>6}")
    print("-" * 102)
    statuses: Counter[tuple[str, int]] = Counter()
    for c, best, _ in rows:
        base = best["direct (judge, no server)"]["rps"]
        for label, r in best.items():
            statuses.update(r["statuses"])
            print(f"{c:4d} {label:27} {r['rps']:10.0f} {r['p50']:7.1f} {r['p99']:7.1f} "
                  f"{r['cpu_ms']:11.2f} {r['good_failed']:11d} {r['bad_not_4xx']:11d} "
                  f"{r['rps'] / base:6.2f}")
    print("\nratio within each round (served / direct, run back to back): " + "; ".join(
        f"C={c}: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-"
        f"{max(ratios):.2f} over {len(ratios)}" for c, _, ratios in rows))
    print("\nreplies by kind (best rounds): " + ", ".join(
        f"{kind} {status}: {n}" for (kind, status), n in sorted(statuses.items())))


if __name__ == "__main__":
    main()
