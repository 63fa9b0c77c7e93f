"""`assay sample` end to end, as a user runs it, against a bare aiohttp client in the same run.

    .venv/bin/python benchmarks/sample_end_to_end.py                 # ~1 minute
    .venv/bin/python benchmarks/sample_end_to_end.py --examples 440 --n 4 --rounds 3

Data: the real HealthBench conversations of tests/data/healthbench/dev.jsonl, repeated with
fresh ids to --examples items, each sampled --n times (one free-text call per sample). The fake
server plays the model under test in its own process (latency L = 50 ms, answers of ~300
characters). `assay sample` runs as its own process (wall clock, CPU time user + system and peak
RSS from the OS), then a bare aiohttp client sends the same request bodies (read back from the
server's log) at the same concurrency, twice: as a process of its own (interpreter start and
aiohttp's import included, as for `assay sample`: the like-for-like comparison) and inside this
benchmark's process (aiohttp already imported: the calls alone). Rounds alternate and the median
round (by assay over the bare process) is shown.

CPU per call is shown two ways: the whole process's CPU over its calls, and what one more call
costs: the difference between a run of 2 x --n samples and one of --n samples, over the calls
the larger one adds (start-up, intake and exit cancel out).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from grade_end_to_end import (
    ASSAY,
    bare_client,
    compile_sources,
    free_port,
    healthbench_rows,
    speed_ratio,
)

ANSWER = ("Scrape the stinger out sideways with a card, wash the area with soap and water, and "
          "put a cold pack on it for ten minutes. Take an antihistamine for itching. Call "
          "emergency services at once if you have trouble breathing, swelling of the face or "
          "throat, dizziness or hives spreading over the body.")

SERVER = """
import asyncio, signal, sys
from assay.testing import FakeJudgeServer
port, latency, log, answer = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
server = FakeJudgeServer(port=port, latency=latency / 1000, keep_log=False, log_path=log,
                         models={"bot": {"default": answer}})

async def main():
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop()

asyncio.run(main())
"""


def start_server(work: Path, latency_ms: float) -> tuple[subprocess.Popen, str, Path]:
    import socket

    port, log = free_port(), work / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(latency_ms), str(log),
                             ANSWER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/v1", log
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the fake server did not start")


def run_sample(items: Path, base_url: str, out: Path, n: int, concurrency: int) -> dict:
    """One `assay sample` process: wall, CPU (user+sys) and peak RSS of that process alone."""
    start = time.perf_counter()
    proc = subprocess.Popen([ASSAY, "sample", str(items), "--model", f"openai-compatible:bot@{base_url}",
                             "--out", str(out), "--n", str(n), "--concurrency", str(concurrency),
                             "--seed", "0", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"assay sample failed: {proc.stderr.read()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


# The bare client as a script of its own: grade_end_to_end's bare_client, word for word.
BARE_PROCESS = "\n".join([
    "import asyncio, sys, time",
    inspect.getsource(bare_client),
    "bodies = open(sys.argv[2], 'rb').read().split(b'\\n')",
    "asyncio.run(bare_client(sys.argv[1], bodies, int(sys.argv[3]), int(sys.argv[4])))",
])


def run_bare_process(base_url: str, sent: list[bytes], work: Path, calls: int,
                     concurrency: int) -> dict:
    """The bare aiohttp client as a process of its own: wall, CPU and peak RSS, as for assay."""
    path = work / "bodies.jsonl"
    path.write_bytes(b"\n".join(sent))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", BARE_PROCESS, base_url, str(path), str(calls),
                             str(concurrency)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the bare client failed: {proc.stderr.read()[-2000:]!r}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def bodies(log: Path, n: int) -> list[bytes]:
    out = []
    with log.open() as lines:
        for line in lines:
            entry = json.loads(line)
            if entry.get("stage") == "model:bot":
                out.append(json.dumps(entry["body"]).encode())
            if len(out) >= n:
                break
    return out


def main() -> None:
    compile_sources()
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=220)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    calls = args.examples * args.n
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        items = healthbench_rows(work / "items.jsonl", args.examples)
        proc, base_url, log = start_server(work, args.latency_ms)
        try:
            rounds, marginal = [], []
            for r in range(args.rounds):
                assay = run_sample(items, base_url, work / f"out{r}.jsonl", args.n,
                                   args.concurrency)
                sent = bodies(log, calls)
                bare = run_bare_process(base_url, sent, work, calls, args.concurrency)
                inside = asyncio.run(bare_client(base_url, sent, calls, args.concurrency))
                double = run_sample(items, base_url, work / f"double{r}.jsonl", 2 * args.n,
                                    args.concurrency)
                marginal.append((double["cpu"] - assay["cpu"]) / calls)
                rounds.append((bare, assay, inside))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    bare, assay, inside = sorted(rounds, key=lambda r: speed_ratio(r[:2]))[(len(rounds) - 1) // 2]
    print(f"`assay sample`: {args.examples} HealthBench conversations x {args.n} samples = "
          f"{calls:,} calls, {args.concurrency} in flight, L = {args.latency_ms:g} ms, "
          f"median of {args.rounds} rounds (by assay over the bare process: "
          + ", ".join(f"{speed_ratio(r[:2]):.2f}x" for r in rounds) + ")")
    print("| client | calls/s | vs bare process | CPU ms/call (process) | wall s | peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, result in (("bare aiohttp, a process", bare), ("assay sample, a process", assay),
                         ("bare aiohttp, calls alone (in this process)", inside)):
        ratio = f"{speed_ratio((bare, result)):.2f}x"
        peak = f"{result['peak_mb']:.0f}" if "peak_mb" in result else ""
        print(f"| {name} | {calls / result['wall']:,.0f} | {ratio} | "
              f"{result['cpu'] / calls * 1000:.3f} | {result['wall']:.2f} | {peak} |")
    marginal.sort()
    print(f"\nassay sample over the bare process: {speed_ratio((bare, assay)):.2f}x; over the bare "
          f"calls alone: {speed_ratio((inside, assay)):.2f}x. CPU of one more call (a run of "
          f"{2 * args.n} samples against one of {args.n}): "
          + ", ".join(f"{m * 1000:.3f}" for m in marginal) + " ms (median "
          f"{marginal[(len(marginal) - 1) // 2] * 1000:.3f} ms)")


if __name__ == "__main__":
    main()
