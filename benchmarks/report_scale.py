"""`assay report` and `assay review` at the size of the whole HealthBench benchmark.

    .venv/bin/python benchmarks/report_scale.py                    # every case at N = 5,000
    .venv/bin/python benchmarks/report_scale.py --examples 1000 --cases judges

Data: the real HealthBench rows of tests/data/healthbench/dev.jsonl repeated with fresh ids to
N examples, each repeat with its own prompt and its own criterion texts (the real benchmark's
5,000 rubrics are all different: ~48,000 distinct criteria), graded in HealthBench mode on the
physicians' ideal completions by the fake judge (its own process, L = 0), so the runs hold
HealthBench's real texts and rubric sizes.

Cases (each prints one row):
  runs     two runs of one judge each (A answers MET to everything, B at random):
           `assay report A B`
  judges   one run graded by two judges at random (the judge-vs-judge figures):
           `assay report RUN`

Each `assay report` runs as a process of its own: wall time and peak RSS from the OS; then the
file's size, and headless Chromium opening it: the time to the first contentful paint and until
the lists are drawn (the page's ``data-ready``). The start-up of `assay review` on these runs is
benchmarks/review_startup.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_judge_process import start_fake_judge
from grade_end_to_end import ASSAY, healthbench_rows

ROOT = Path(__file__).resolve().parents[1]


def distinct_rows(path: Path, n_examples: int) -> Path:
    """HealthBench rows repeated to ``n_examples`` (grade_end_to_end's: each repeat with its own
    first turn), each repeat also with its own criterion texts (so its own rubric and ids)."""
    rows = [json.loads(line) for line in healthbench_rows(path, n_examples).read_text().splitlines()]
    originals = len({row["prompt_id"].rsplit("-", 1)[0] for row in rows})
    with path.open("w") as out:
        for i, row in enumerate(rows):
            if i >= originals:
                row["rubrics"] = [{**c, "criterion": f"{c['criterion']} (case {i})"}
                                  for c in row["rubrics"]]
            out.write(json.dumps(row) + "\n")
    return path


def grade(items: Path, run: Path, policy: str, judges: int = 1) -> None:
    server, base_url = start_fake_judge(0, "--policy", policy)
    specs = [arg for n in range(judges)
             for arg in ("--judge", f"openai-compatible:fake-{n}@{base_url}")]
    try:
        subprocess.run([ASSAY, "grade", str(items), "--healthbench", "--ideal", "--quiet",
                        *specs, "--run-dir", str(run)], check=True, stdout=subprocess.DEVNULL)
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
    """Milliseconds to the first contentful paint and to the drawn lists."""
    from playwright.async_api import async_playwright

    sys.path.insert(0, str(ROOT))
    from tests.browser.conftest import CHROMIUM_FLAGS, chromium_path

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(),
                                                   args=CHROMIUM_FLAGS)
        page = await browser.new_page()
        start = time.perf_counter()
        await page.goto(path.as_uri())
        await page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        ready = (time.perf_counter() - start) * 1000
        paint = await page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null")
        await browser.close()
    return paint, ready


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--cases", default="runs,judges")
    args = parser.parse_args()
    cases = args.cases.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        items = distinct_rows(work_dir / "items.jsonl", args.examples)
        for case in cases:
            if case == "runs":
                runs = [work_dir / "run-a", work_dir / "run-b"]
                grade(items, runs[0], "MET")
                grade(items, runs[1], "random")
                what = "2 runs × 1 judge"
            elif case == "judges":
                runs = [work_dir / "run-judges"]
                grade(items, runs[0], "random", judges=2)
                what = "1 run × 2 judges"
            else:
                raise SystemExit(f"unknown case {case!r}")
            out = work_dir / f"report-{case}.html"
            before = load()
            seconds, rss = report(runs, out)
            paint, ready = asyncio.run(open_in_chromium(out))
            rows.append((what, seconds, rss, out.stat().st_size / 2**20, paint, ready, before))
    print("| case | items per run | report build s | build peak RSS MiB | file MiB | first paint ms "
          "| lists drawn ms | load (1, 5, 15 min) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for what, seconds, rss, size, paint, ready, before in rows:
        print(f"| {what} | {args.examples:,} | {seconds:.1f} | {rss:.0f} | {size:.1f} | {paint:.0f} "
              f"| {ready:.0f} | {before} |")


if __name__ == "__main__":
    main()
