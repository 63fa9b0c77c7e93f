"""`assay grade --executor ray` against the local executor: calls/s and overhead per call.

    .venv/bin/python benchmarks/ray_executor.py                  # ~2 minutes on 2 cores
    .venv/bin/python benchmarks/ray_executor.py --items 300 --judges 3 --latency-ms 50

Set-up: ``--judges`` fake-judge processes on loopback (``assay fake-judge``), one judge of an
ensemble each, so every call is a real HTTP request to another process. Items: generated, 4
criteria each (per-criterion mode: judges x items x 4 calls). Ray is started once (a local
instance, ``num_cpus`` = 4, no dashboard, no usage stats) before the timings; each run is
``assay.grade`` in this process (the driver), with the local executor or with 1, 2 and 4 Ray
workers. Two latencies: 0 ms (the per-call cost of the machinery dominates: this is the
overhead) and ``--latency-ms`` (the judges' latency dominates).

Printed per row: wall seconds of the whole run; the workers' start-up (measured apart: new
processes importing assay and building their judges, paid once per run); calls/s and, for
Ray, the extra wall ms per call over the local executor, both without that start-up; the
driver's CPU ms per call.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ASSAY = str(Path(sys.executable).parent / "assay")
CRITERIA = [{"id": f"c{k}", "text": f"The response covers point {k} of the plan.",
             "weight": w} for k, w in enumerate([5, 3, -4, 2])]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_fake_judges(n: int, latency_ms: int) -> tuple[list[subprocess.Popen], list[str]]:
    procs, specs = [], []
    for k in range(n):
        port = free_port()
        procs.append(subprocess.Popen(
            [ASSAY, "fake-judge", "--port", str(port), "--latency-ms", str(latency_ms),
             "--policy", "MET"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        specs.append(f"openai-compatible:fake-{k}@http://127.0.0.1:{port}/v1")
    for spec in specs:
        port = int(spec.rsplit(":", 1)[1].split("/")[0])
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
    return procs, specs


def write_items(folder: Path, n: int) -> tuple[Path, Path]:
    rubric = folder / "rubric.json"
    rubric.write_text(json.dumps({"id": "r", "criteria": CRITERIA}))
    items = folder / "items.jsonl"
    with items.open("w") as out:
        for i in range(n):
            out.write(json.dumps({"id": f"i{i}", "prompt": f"Question {i} about a bee sting?",
                                  "response": f"Answer {i}: scrape the stinger out, ice it."})
                      + "\n")
    return items, rubric


def timed_run(items: Path, rubric: Path, specs: list[str], folder: Path, name: str,
              **executor) -> tuple[float, float, int]:
    import assay

    wall, cpu = time.perf_counter(), time.process_time()
    result = assay.grade(items, rubric=rubric, judges=specs, run_dir=folder / name, **executor)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert result.status == "complete", result.status
    return wall, cpu, result.totals.calls


def worker_start_s(specs: list[str], workers: int) -> float:
    """Seconds for ``workers`` judge workers to start (processes, imports, judges built)."""
    import asyncio

    from assay.distributed import WorkerPool
    from assay.judges import parse_spec

    pool = WorkerPool.start([parse_spec(s) for s in specs], workers=workers)
    asyncio.run(pool.aclose())
    return pool.started_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=150)
    parser.add_argument("--judges", type=int, default=3, help="fake-judge processes")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()

    from assay.distributed import ensure_ray

    started = time.perf_counter()
    ensure_ray(num_cpus=4)
    print(f"ray local instance started in {time.perf_counter() - started:.1f} s "
          f"(once per process; a cluster joined with --ray-address is already up)")
    print(f"{'latency':>8} {'executor':>10} {'calls':>6} {'wall s':>7} {'start s':>8} "
          f"{'calls/s':>8} {'driver CPU ms/call':>19} {'extra wall ms/call':>19}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        items, rubric = write_items(folder, args.items)
        for latency in (0, args.latency_ms):
            procs, specs = start_fake_judges(args.judges, latency)
            try:
                base = None
                runs = [("local", {})] + [(f"ray x{w}", {"executor": "ray", "workers": int(w)})
                                          for w in args.workers.split(",")]
                for name, executor in runs:
                    start = worker_start_s(specs, executor["workers"]) if executor else 0.0
                    wall, cpu, calls = timed_run(items, rubric, specs, folder,
                                                 f"{latency}-{name.replace(' ', '')}", **executor)
                    steady = wall - start  # the run without its workers' start-up
                    extra = "" if base is None else f"{1000 * (steady - base) / calls:19.3f}"
                    base = steady if base is None else base
                    print(f"{latency:>6}ms {name:>10} {calls:>6} {wall:>7.2f} {start:>8.2f} "
                          f"{calls / steady:>8.0f} {1000 * cpu / calls:>19.3f} {extra:>19}",
                          flush=True)
            finally:
                for proc in procs:
                    proc.send_signal(signal.SIGINT)
                for proc in procs:
                    proc.wait(timeout=10)


if __name__ == "__main__":
    main()
