"""`assay review RUN`: how long the review app takes to start, and to serve its pages.

    .venv/bin/python benchmarks/review_startup.py                      # 1,000 and 5,000 items
    .venv/bin/python benchmarks/review_startup.py --examples 1000

Data: as benchmarks/report_scale.py (HealthBench rows repeated to N examples, each with its own
prompt and rubric), graded by two fake judges at random. Then `assay review RUN --port P` as a
process of its own: the wall time until it serves (answers /health), the CPU time it spent to
get there (user + system, from /proc) and its RSS then, and one item's page (served from the
store at once); then the same until its index of every item is whole (read in a background
thread: /health says "ready"), and the item list's first page and a search for a phrase of a
first turn (past its 160th character), each timed over loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_judge_process import free_port
from report_scale import ASSAY, distinct_rows, grade, load


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed_get(url: str) -> tuple[float, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read().decode("utf-8")
    return (time.perf_counter() - start) * 1000, body


def start_up(run: Path, phrase: str) -> tuple[float, ...]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    process = subprocess.Popen([ASSAY, "review", str(run), "--port", str(port), "--reviewer",
                                "bench"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                urllib.request.urlopen(base + "/health", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None:
                    raise SystemExit("assay review exited") from None
                time.sleep(0.05)
        wall = time.perf_counter() - start
        cpu, rss = cpu_seconds(process.pid), rss_mib(process.pid)
        item_ms, _ = timed_get(base + "/items/1")  # served before the index is whole
        while not json.loads(urllib.request.urlopen(base + "/health", timeout=5).read())["ready"]:
            time.sleep(0.05)
        ready = time.perf_counter() - start
        ready_cpu, ready_rss = cpu_seconds(process.pid), rss_mib(process.pid)
        index_ms, _ = timed_get(base + "/")
        search_ms, page = timed_get(base + "/?q=" + urllib.parse.quote(phrase))
        if 'class="item-entry"' not in page:
            raise SystemExit(f"the search for {phrase!r} found nothing")
    finally:
        process.terminate()
        process.wait()
    return wall, cpu, rss, item_ms, ready, ready_cpu, ready_rss, index_ms, search_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", default="1000,5000")
    args = parser.parse_args()
    rows = []
    for n in [int(x) for x in args.examples.split(",")]:
        with tempfile.TemporaryDirectory() as work:
            work_dir = Path(work)
            items = distinct_rows(work_dir / "items.jsonl", n)
            first = json.loads(items.read_text().splitlines()[0])
            text = first["prompt"][0]["content"]
            phrase = text[160:190] if len(text) > 190 else text[-30:]
            grade(items, work_dir / "run", "random", judges=2)
            before = load()
            rows.append((n, *start_up(work_dir / "run", phrase), before))
    print("| items (2 judges) | serving s | CPU s | RSS MiB | an item page ms | index whole s "
          "| CPU s | RSS MiB | item list ms | search ms | load (1, 5, 15 min) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, wall, cpu, rss, item_ms, ready, ready_cpu, ready_rss, index_ms, search_ms, before in rows:
        print(f"| {n:,} | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {item_ms:.0f} | {ready:.1f} "
              f"| {ready_cpu:.1f} | {ready_rss:.0f} | {index_ms:.0f} | {search_ms:.0f} | {before} |")


if __name__ == "__main__":
    main()
