"""`assay grade` end to end, as a user runs it, against a bare aiohttp client in the same run.

    .venv/bin/python benchmarks/grade_end_to_end.py                 # every case, ~5 minutes
    .venv/bin/python benchmarks/grade_end_to_end.py --cases clean,warm

Data: real HealthBench rows (tests/data/healthbench/dev.jsonl, 60 examples, 800 criteria)
repeated with fresh ids to 440 examples (6,308 criteria, one call each; a repeat's first turn gets
a short suffix so that no two calls share a prompt and the cold run has no cache hits), graded in
HealthBench mode on the physicians' ideal completions, so prompts have HealthBench's real sizes. The fake
judge runs in its own process (L = 50 ms unless a case says otherwise). Each `assay grade` is a
separate process: wall clock, its own CPU time (user + system) and its peak RSS come from the OS.
Assay's sources are byte-compiled first, as an installed package's are.

Cases (each prints one row):
  bare        a bare aiohttp client sending the same request bodies at the same concurrency
  clean       assay grade, default settings (the engine's own in-flight limit); run in
              --rounds rounds of assay then bare, the round with the median ratio shown
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
import shutil
import signal
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
            if i >= len(rows):  # a repeated example gets its own prompts: no call is a cache hit
                first = dict(row["prompt"][0])
                first["content"] = f"{first['content']} (case {i})"
                row["prompt"] = [first, *row["prompt"][1:]]
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


SERVER = """
import asyncio, json, os, signal, sys
from assay.testing import FakeJudgeServer, Faults
port, latency, faults, counts = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
server = FakeJudgeServer(port=port, latency=latency / 1000, faults=Faults(**faults), keep_log=False,
                         log_path=sys.argv[5])

def dump():
    with open(counts + ".tmp", "w") as out:
        out.write(json.dumps({"preflights": server.preflights}))
    os.replace(counts + ".tmp", counts)

async def main():
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump)
    dump()
    await stop.wait()
    await server.stop()

asyncio.run(main())
"""


class Server:
    """The fake judge in its own process, logging requests (and counting preflights) to count
    everything a run sends."""

    def __init__(self, work: Path, latency_ms: float, **faults: float):
        self.port = free_port()
        self.log = work / f"requests-{self.port}.jsonl"
        self.counts = work / f"counts-{self.port}.json"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(self.port), str(latency_ms), json.dumps(faults),
             str(self.counts), str(self.log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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

    def preflights(self) -> int:
        """Preflight requests it has answered so far (not in the request log)."""
        before = self.counts.stat().st_mtime_ns
        self.proc.send_signal(signal.SIGUSR1)
        for _ in range(100):
            time.sleep(0.05)
            if self.counts.stat().st_mtime_ns != before:
                break
        return json.loads(self.counts.read_text())["preflights"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def run_grade(args: list[str]) -> dict:
    """One `assay grade` process: wall, CPU (user+sys) and peak RSS of that process alone."""
    start = time.perf_counter()
    proc = subprocess.Popen([ASSAY, "grade", *args, "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 4):
        raise SystemExit(f"assay grade failed ({code}): {proc.stderr.read()[-2000:]}")
    run_dir = Path(args[args.index("--run-dir") + 1])
    timing = json.loads((run_dir / "manifest.json").read_text())["timing"]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "exit": code, "phase_s": timing["wall_s"]}


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


def best_start(command: list[str], env: dict[str, str] | None = None, times: int = 5) -> float:
    """The fastest of ``times`` runs of ``command``, in seconds (a process's start-up)."""
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def speed_ratio(round_: tuple[dict, dict]) -> float:
    """A (bare, assay) round's assay calls/s over bare calls/s."""
    bare, assay = round_
    return bare["wall"] / assay["wall"]


def median_round(rounds: list[tuple[dict, dict]]) -> tuple[dict, dict]:
    """The (bare, assay) round whose assay/bare ratio is the median (the lower middle one)."""
    return sorted(rounds, key=speed_ratio)[(len(rounds) - 1) // 2]


def row(name: str, calls: int, result: dict, bare_rate: float | None = None, note: str = "") -> None:
    rate = calls / result["wall"]
    ratio = f"{rate / bare_rate:.2f}x" if bare_rate else ""
    if result.get("phase_s"):  # the engine's own time, from the run's manifest
        note = f"grading phase {calls / result['phase_s']:,.0f}/s; {note}".rstrip("; ")
    peak = f"{result['peak_mb']:.0f}" if "peak_mb" in result else ""
    print(f"| {name:<34} | {calls:>7,} | {rate:>8,.0f} | {ratio:>6} | "
          f"{result['cpu'] / calls * 1000:>6.3f} | {result['wall']:>7.1f} | {peak:>6} | {note}")


def header() -> None:
    print("| case                               |   calls |  calls/s | vs bare | CPU ms/call | wall s | peak MB | note")
    print("|---|---:|---:|---:|---:|---:|---:|---|")


def compile_sources() -> None:
    """Byte-compile assay as ``pip install`` does, so that no timed process compiles its
    sources (an editable install under PYTHONDONTWRITEBYTECODE=1 would, on every start)."""
    import assay

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(assay.__file__).parent)],
                   check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    compile_sources()
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=440)
    parser.add_argument("--cases", default="clean,c64,warm,faults,c256,memory,startup")
    parser.add_argument("--memory-items", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=3,
                        help="bare/assay rounds of the clean case (the median round is shown)")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    work = Path(tempfile.mkdtemp(prefix="assay-e2e-"))
    try:  # the 100,000-item runs leave ~1.5 GB of stores behind
        run_cases(work, cases, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_cases(work: Path, cases: set[str], args: argparse.Namespace) -> None:
    data = healthbench_rows(work / "hb.jsonl", args.examples)
    calls = sum(len(json.loads(line)["rubrics"]) for line in data.open())
    header()

    def grade(server: Server, name: str, *extra: str) -> dict:
        return run_grade([str(data), "--healthbench", "--ideal", "--judge",
                          f"openai-compatible:fake@{server.base_url}", "--run-dir",
                          str(work / name), *extra])

    server = Server(work, 50)
    try:
        # Rounds of assay (each on a cold cache of its own), then bare: on a shared machine the
        # speed drifts by 10-30% within minutes, so each round is compared within itself.
        rounds = []
        for k in range(args.rounds):
            clean = grade(server, f"clean{k}", "--cache", str(work / f"cache{k}.sqlite"))
            if k == 0:
                bodies = server.bodies(2000)
            bare = asyncio.run(bare_client(server.base_url, bodies, calls, 64))
            rounds.append((bare, clean))
        bare, clean = median_round(rounds)
        bare_rate = calls / bare["wall"]
        note = (f"median of {args.rounds} rounds by assay/bare: "
                + ", ".join(f"{speed_ratio(r):.2f}x" for r in rounds)) if args.rounds > 1 else ""
        row("bare aiohttp, C=64", calls, bare)
        row("assay grade (default)", calls, clean, bare_rate, note)
        if "c64" in cases:
            row("assay grade --concurrency 64", calls, grade(server, "c64", "--concurrency", "64"), bare_rate)
        if "warm" in cases:
            seen, checks = server.requests(), server.preflights()
            warm = grade(server, "warm", "--cache", str(work / f"cache{args.rounds - 1}.sqlite"))
            sent, preflights = server.requests() - seen, server.preflights() - checks
    finally:
        server.stop()
    if "warm" in cases:
        row("assay grade, warm cache", calls, warm, None,
            f"{sent} requests + {preflights} preflights sent")
    if "faults" in cases:
        faulty = Server(work, 50, rate_limit=0.1, server_error=0.1, timeout=0.03, retry_after=1.0,
                        hang_s=600.0)
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
        python = best_start([sys.executable, "-c", "pass"], env)
        print(f"\n`assay --help`: {best_start([ASSAY, '--help'], env):.3f} s; `import assay`: "
              f"{(best_start([sys.executable, '-c', 'import assay'], env) - python) * 1000:.0f} ms "
              f"(over a bare interpreter start of {python * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
