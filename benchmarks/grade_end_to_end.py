"""`assay grade` end to end, as a user runs it, against a bare aiohttp client in the same run.

    .venv/bin/python benchmarks/grade_end_to_end.py                 # every case, ~5 minutes
    .venv/bin/python benchmarks/grade_end_to_end.py --cases clean,warm

Data: real HealthBench rows (tests/data/healthbench/dev.jsonl, 60 examples, 800 criteria)
repeated with fresh ids to 440 examples (5,860 criteria, one call each), graded in HealthBench
mode on the physicians' ideal completions, so prompts have HealthBench's real sizes. The fake
judge runs in its own process (L = 50 ms unless a case says otherwise). Each `assay grade` is a
separate process: wall clock, its own CPU time (user + system) and its peak RSS come from the OS.

Cases (each prints one row):
  bare        a bare aiohttp client sending the same request bodies at the same concurrency
  clean       assay grade, default settings (the engine's own in-flight limit)
  c64         assay grade --concurrency 64
  warm        the clean run again on a warm response cache: calls/s, requests the server saw
  faults      10% 429 (Retry-After 1 s), 10% 500, 3% hung requests; time relative to clean
  c256        bare and assay grade at 256 in flight, L = 20 ms: the CPU-bound ceiling
  memory      per-item mode at L = 0 on 10,000 and 100,000 generated items: peak RSS of the process
  startup     `assay --help` and `import assay`, best of 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
ASSAY = str(Path(sys.executable).parent / "assay")


def healthbench_rows(path: Path, n_examples: int) -> Path:
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("ideal_completions_data")]
    with path.open("w") as out:
        for i in range(n_examples):
            row = dict(rows[i % len(rows)])
            row["prompt_id"] = f"{row['prompt_id']}-{i}"
            out.write(json.dumps(row) + "\n")
    return path


def generated_items(path: Path, n: int) -> Path:
    criteria = [{"id": f"c{k}", "text": f"The response covers point {k} of the plan.",
                 "weight": [5, 3, -4, 2, 6, -2, 4, 1][k]} for k in range(8)]
    rubric = path.with_suffix(".rubric.json")
    rubric.write_text(json.dumps({"id": "r", "criteria": criteria}))
    with path.open("w") as out:
        for i in range(n):
            out.write(json.dumps({"id": f"i{i}", "prompt": f"Question {i} about a bee sting?",
                                  "response": f"Answer {i}: scrape the stinger, ice, watch."}) + "\n")
    return rubric


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`assay fake-judge` in its own process, logging requests to count them."""

    def __init__(self, work: Path, latency_ms: float, *extra: str):
        self.port = free_port()
        self.log = work / f"requests-{self.port}.jsonl"
        self.proc = subprocess.Popen(
            [ASSAY, "fake-judge", "--port", str(self.port), "--latency-ms", str(latency_ms),
             "--log", str(self.log), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("the fake judge did not start")
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> int:
        return sum(1 for _ in self.log.open()) if self.log.exists() else 0

    def bodies(self, n: int) -> list[bytes]:
        out = []
        with self.log.open() as log:
            for line in log:
                entry = json.loads(line)
                if entry["path"].endswith("/chat/completions"):
                    out.append(json.dumps(entry["body"]).encode())
                if len(out) >= n:
                    break
        return out

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def run_grade(args: list[str]) -> dict:
    """One `assay grade` process: wall, CPU (user+sys) and peak RSS of that process alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([ASSAY, "grade", *args, "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 4):
        raise SystemExit(f"assay grade failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "peak_mb": after.ru_maxrss / 1024, "exit": proc.returncode}


async def bare_client(base_url: str, bodies: list[bytes], n: int, concurrency: int) -> dict:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(k: int) -> None:
            async with sem, session.post(f"{base_url}/chat/completions", data=bodies[k % len(bodies)],
                                         headers={"Content-Type": "application/json"}) as r:
                await r.read()

        cpu, start = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(k) for k in range(n)))
        wall = time.perf_counter() - start
    return {"wall": wall, "cpu": time.process_time() - cpu}


def row(name: str, calls: int, result: dict, bare_rate: float | None = None, note: str = "") -> None:
    rate = calls / result["wall"]
    ratio = f"{rate / bare_rate:.2f}x" if bare_rate else ""
    peak = f"{result['peak_mb']:.0f}" if "peak_mb" in result else ""
    print(f"| {name:<34} | {calls:>7,} | {rate:>8,.0f} | {ratio:>6} | "
          f"{result['cpu'] / calls * 1000:>6.3f} | {result['wall']:>7.1f} | {peak:>6} | {note}")


def header() -> None:
    print("| case                               |   calls |  calls/s | vs bare | CPU ms/call | wall s | peak MB | note")
    print("|---|---:|---:|---:|---:|---:|---:|---|")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=440)
    parser.add_argument("--cases", default="clean,c64,warm,faults,c256,memory,startup")
    parser.add_argument("--memory-items", default="10000,100000")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    work = Path(tempfile.mkdtemp(prefix="assay-e2e-"))
    data = healthbench_rows(work / "hb.jsonl", args.examples)
    calls = sum(len(json.loads(line)["rubrics"]) for line in data.open())
    header()

    def grade(server: Server, name: str, *extra: str) -> dict:
        return run_grade([str(data), "--healthbench", "--ideal", "--judge",
                          f"openai-compatible:fake@{server.base_url}", "--run-dir",
                          str(work / name), *extra])

    server = Server(work, 50)
    try:
        clean = grade(server, "clean", "--cache", str(work / "cache.sqlite"))
        bodies = server.bodies(2000)
        bare = asyncio.run(bare_client(server.base_url, bodies, calls, 64))
        bare_rate = calls / bare["wall"]
        row("bare aiohttp, C=64", calls, bare)
        row("assay grade (default)", calls, clean, bare_rate)
        if "c64" in cases:
            row("assay grade --concurrency 64", calls, grade(server, "c64", "--concurrency", "64"), bare_rate)
        if "warm" in cases:
            seen = server.requests()
            warm = grade(server, "warm", "--cache", str(work / "cache.sqlite"))
            row("assay grade, warm cache", calls, warm, None,
                f"{server.requests() - seen} requests sent")
    finally:
        server.stop()
    if "faults" in cases:
        faulty = Server(work, 50, "--429-rate", "0.1", "--500-rate", "0.1", "--timeout-rate", "0.03",
                        "--retry-after", "1")
        try:
            result = grade(faulty, "faults")
            row("faults (10% 429, 10% 500, 3% hung)", calls, result, None,
                f"{result['wall'] / clean['wall']:.2f}x the clean run's time")
        finally:
            faulty.stop()
    if "c256" in cases:
        fast = Server(work, 20)
        try:
            result = run_grade([str(data), "--healthbench", "--ideal", "--judge",
                                f"openai-compatible:fake@{fast.base_url}", "--concurrency", "256",
                                "--run-dir", str(work / "c256")])
            bare256 = asyncio.run(bare_client(fast.base_url, fast.bodies(2000), calls, 256))
            row("bare aiohttp, C=256, L=20 ms", calls, bare256)
            row("assay grade --concurrency 256", calls, result, calls / bare256["wall"])
        finally:
            fast.stop()
    if "memory" in cases:
        zero = Server(work, 0)
        try:
            for n in (int(x) for x in args.memory_items.split(",")):
                items = work / f"items{n}.jsonl"
                rubric = generated_items(items, n)
                result = run_grade([str(items), "--rubric", str(rubric), "--mode", "per-item",
                                    "--judge", f"openai-compatible:fake@{zero.base_url}",
                                    "--run-dir", str(work / f"mem{n}")])
                row(f"per-item, {n:,} items, L=0", n, result, None, "peak RSS of the whole process")
        finally:
            zero.stop()
    if "startup" in cases:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

        def best(command: list[str]) -> float:
            times = []
            for _ in range(5):
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, env=env, check=True)
                times.append(time.perf_counter() - start)
            return min(times)

        python = best([sys.executable, "-c", "pass"])
        print(f"\n`assay --help`: {best([ASSAY, '--help']):.3f} s; `import assay`: "
              f"{(best([sys.executable, '-c', 'import assay']) - python) * 1000:.0f} ms "
              f"(over a bare interpreter start of {python * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
