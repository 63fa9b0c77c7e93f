"""`assay report` at the size of the whole HealthBench benchmark: two runs of N items.

    .venv/bin/python benchmarks/report_scale.py                 # N = 5,000 (about 70,000 calls a run)
    .venv/bin/python benchmarks/report_scale.py --examples 1000

Data: the real HealthBench rows of tests/data/healthbench/dev.jsonl repeated with fresh ids to N
examples, graded twice in HealthBench mode on the physicians' ideal completions by the fake judge
(its own process, L = 0; run A answers MET to everything, run B at random), so both runs hold
HealthBench's real texts and rubric sizes. Then `assay report A B` as a process (wall time, peak
RSS from the OS), the file's size, and headless Chromium opening it: the time to the first
contentful paint and until the item lists are drawn (the page's ``data-ready``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_judge_process import start_fake_judge
from grade_end_to_end import healthbench_rows

ASSAY = str(Path(sys.executable).parent / "assay")


def grade(items: Path, run: Path, policy: str) -> None:
    server, base_url = start_fake_judge(0, "--policy", policy)
    try:
        subprocess.run([ASSAY, "grade", str(items), "--healthbench", "--ideal", "--quiet",
                        "--judge", f"openai-compatible:fake@{base_url}", "--run-dir", str(run)],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        server.terminate()
        server.wait()


def report(runs: list[Path], out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of `assay report` as its own process."""
    start = time.perf_counter()
    process = subprocess.Popen([ASSAY, "report", *map(str, runs), "-o", str(out)],
                               stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"assay report failed ({status})")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


async def open_in_chromium(path: Path) -> tuple[float, float]:
    """Milliseconds to the first contentful paint and to the drawn item lists."""
    from playwright.async_api import async_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.browser.conftest import chromium_path

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path())
        page = await browser.new_page()
        start = time.perf_counter()
        await page.goto(path.as_uri())
        await page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        ready = (time.perf_counter() - start) * 1000
        paint = await page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null")
        await browser.close()
    return paint, ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        items = healthbench_rows(work_dir / "items.jsonl", args.examples)
        runs = [work_dir / "run-a", work_dir / "run-b"]
        grade(items, runs[0], "MET")
        grade(items, runs[1], "random")
        out = work_dir / "report.html"
        seconds, rss = report(runs, out)
        paint, ready = asyncio.run(open_in_chromium(out))
        size = out.stat().st_size / 2**20
    print("| items per run | report build s | build peak RSS MiB | file MiB | first paint ms | lists drawn ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.examples:,} | {seconds:.1f} | {rss:.0f} | {size:.1f} | {paint:.0f} | {ready:.0f} |")


if __name__ == "__main__":
    main()
