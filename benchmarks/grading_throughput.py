"""Grading throughput and memory against the fake judge server (run in a separate process).

    .venv/bin/python benchmarks/grading_throughput.py                 # both cases, 20,000 items
    .venv/bin/python benchmarks/grading_throughput.py --large 100000  # the 100,000-item case

Case 1: 500 HealthBench-shaped items (each with its own 12-criterion rubric) graded per
criterion, 6,000 calls, at L=50 ms and C=64, through the whole engine (prompts, judge client,
parsing, SQLite run store committing every call). In the same run a bare aiohttp client sends
6,000 requests of the same size to the same server at C=64. Printed: calls/s of both, their
ratio (target >= 0.8), CPU ms per call of the grading process, and its peak memory.

Case 2: N items in per-item mode (one call grading all 12 criteria) at L=0; prints the grading
process's resident memory at several item counts to show it stays flat as items grow.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import tempfile
import time
from pathlib import Path

from fake_judge_process import start_fake_judge

AXES = ["accuracy", "completeness", "communication_quality", "context_awareness",
        "instruction_following"]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def criteria(seed: int) -> list[dict]:
    out = []
    for k in range(12):
        points = [10, 7, 5, -5, 3, -8, 6, 4, -2, 8, 5, 2][k]
        text = (f"Criterion {k} of item {seed}: the response advises the user about step {k} of "
                f"the treatment plan, including when to seek urgent care and why.")
        out.append({"id": f"c{k}", "text": text, "weight": points,
                    "tags": [f"axis:{AXES[k % 5]}"], "axis": AXES[k % 5]})
    return out


def write_items(path: Path, n: int, *, own_rubric: bool) -> Path:
    with path.open("w") as out:
        for i in range(n):
            item = {"id": f"p{i}", "tags": ["theme:emergency_referrals"],
                    "prompt": f"I was stung by a bee on my hand ({i}). How do I treat it at home?",
                    "response": "Scrape the stinger out sideways, wash the area, apply a cold "
                                "compress, take an antihistamine, and call emergency services if "
                                f"you have trouble breathing. ({i})"}
            if own_rubric:
                item["rubric"] = {"id": f"p{i}", "criteria": criteria(i)}
            out.write(json.dumps(item) + "\n")
    return path


async def bare_client(base_url: str, n: int, concurrency: int, body: dict) -> tuple[float, float]:
    import aiohttp

    payload = json.dumps(body).encode()
    connector = aiohttp.TCPConnector(limit=concurrency)
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one() -> None:
            async with sem, session.post(f"{base_url}/chat/completions", data=payload,
                                    headers={"Content-Type": "application/json"}) as r:
                await r.read()

        cpu, start = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return n / (time.perf_counter() - start), (time.process_time() - cpu) / n * 1000


class MemoryWatch:
    """Engine progress hook that samples resident memory at chosen item counts."""

    def __init__(self, marks: list[int]):
        self.marks, self.items, self.samples = sorted(marks), 0, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def item_started(self, n_calls): ...
    def item_skipped(self): ...
    def call_done(self, *, cached, errors, cost_usd): ...

    def item_done(self):
        self.items += 1
        if self.marks and self.items >= self.marks[0]:
            self.marks.pop(0)
            self.samples.append((self.items, rss_mb()))


def judge_config(base_url: str, concurrency: int):
    from assay.judges import Limits, parse_spec

    return parse_spec(f"openai-compatible:fake@{base_url}",
                      limits=Limits(max_in_flight=concurrency))


async def case_throughput(work: Path, n_items: int, concurrency: int, latency_ms: float) -> None:
    from assay.runs import RunOptions
    from assay.runs.runner import arun
    from assay.runs.sources import ItemSource

    items = write_items(work / "hb500.jsonl", n_items, own_rubric=True)
    proc, base_url = start_fake_judge(latency_ms)
    try:
        from assay.grading.grader import Grader, GradingConfig
        from assay.io import iter_items

        sample = next(iter(iter_items(items)))
        call = Grader(GradingConfig()).plan(sample, sample.rubric, "j")[0]
        body = {"model": "fake", "messages": list(call.messages), "response_format": {
            "type": "json_schema", "json_schema": {"name": "verdict", "schema": call.schema,
                                                   "strict": True}}}
        n_calls = n_items * 12
        await bare_client(base_url, 500, concurrency, body)  # warm up the server
        bare_rate, bare_cpu = await bare_client(base_url, n_calls, concurrency, body)

        # C = requests in flight, enforced by the judge's limits (as a user sets it); the engine
        # keeps its default window of twice that, so a slot never idles while a reply is stored.
        options = RunOptions(judges=[judge_config(base_url, concurrency)],
                             run_dir=str(work / "run-throughput"))
        cpu, start = time.process_time(), time.perf_counter()
        report = await arun(ItemSource(path=items), options)
        wall, cpu_used = time.perf_counter() - start, time.process_time() - cpu
        assert report.totals.calls_ok == n_calls, report.totals
    finally:
        proc.terminate()
        proc.wait()
    grading_wall = report.manifest["timing"]["wall_s"]  # the engine's grading phase
    rate, end_to_end = n_calls / grading_wall, n_calls / wall
    print(f"\nCase 1: {n_items} HealthBench-shaped items x 12 criteria = {n_calls} calls, "
          f"L={latency_ms:g} ms, C={concurrency}")
    print(f"{'client':<40}{'calls/s':>10}{'CPU ms/call':>14}")
    print(f"{'bare aiohttp':<40}{bare_rate:>10.0f}{bare_cpu:>14.3f}")
    print(f"{'assay grading (engine + run store)':<40}{rate:>10.0f}{cpu_used / n_calls * 1000:>14.3f}")
    print(f"{'assay end to end (+ setup, scoring)':<40}{end_to_end:>10.0f}")
    print(f"ratio to bare aiohttp: {rate / bare_rate:.2f} grading, {end_to_end / bare_rate:.2f} "
          "end to end   (target >= 0.80)")
    print(f"call latency p50/p95: {report.manifest['timing']['call_latency_s']['p50'] * 1000:.0f}/"
          f"{report.manifest['timing']['call_latency_s']['p95'] * 1000:.0f} ms")
    print(f"peak memory of the grading process: {peak_mb():.0f} MB")


async def case_memory(work: Path, n_items: int) -> None:
    import yaml

    from assay.runs import RunOptions
    from assay.runs.runner import arun
    from assay.runs.sources import ItemSource

    items = write_items(work / f"items{n_items}.jsonl", n_items, own_rubric=False)
    (work / "rubric.yaml").write_text(yaml.safe_dump({"id": "hb12", "criteria": criteria(0)}))
    from assay.io import read_rubric

    proc, base_url = start_fake_judge(0)
    marks = sorted({m for m in (1000, 2000, 5000, 10000, 20000, 50000, 100000, n_items)
                    if m <= n_items})
    watch = MemoryWatch(marks)
    try:
        options = RunOptions(judges=[judge_config(base_url, 64)], mode="per-item",
                             rubric=read_rubric(work / "rubric.yaml"),
                             run_dir=str(work / "run-memory"), concurrency=64)
        start = time.perf_counter()
        report = await arun(ItemSource(path=items), options, progress=watch)
        wall = time.perf_counter() - start
        assert report.totals.items_done == n_items, report.totals
    finally:
        proc.terminate()
        proc.wait()
    print(f"\nCase 2: {n_items} items, per-item mode (12 criteria per call), L=0, C=64: "
          f"{n_items / wall:.0f} calls/s, {wall:.0f} s")
    print(f"{'items graded':>14}{'RSS MB':>10}")
    for count, mb in watch.samples:
        print(f"{count:>14,}{mb:>10.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=500, help="case 1 items (x12 calls)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--large", type=int, default=20000, help="case 2 items (100000 for the full case)")
    parser.add_argument("--only", choices=["throughput", "memory"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only != "memory":
            asyncio.run(case_throughput(work, args.items, args.concurrency, args.latency_ms))
        if args.only != "throughput":
            asyncio.run(case_memory(work, args.large))


if __name__ == "__main__":
    main()
