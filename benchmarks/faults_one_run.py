"""The issue-27 fault mix end to end: how long a run takes to be complete, and whether its
verdicts (or a generation job's rubrics) are the clean run's.

    .venv/bin/python benchmarks/faults_one_run.py                      # 440 examples, 6,308 calls
    .venv/bin/python benchmarks/faults_one_run.py --examples 120 --cases clean,default

Data: the HealthBench rows of grade_end_to_end.py (real prompt sizes, one call per criterion),
graded in HealthBench mode on the ideal completions. The fake judge runs in its own process
(``assay fake-judge``, L = 50 ms) and answers half the criteria UNMET (``--error-rate 0.5``:
fixed per criterion and response), so that equal verdicts mean something. The fault mix:
10% 429 (Retry-After 1 s), 10% 500, 10% malformed replies, 3% hung requests. Each
``assay grade`` is a process of its own; a faulted run is resumed with ``assay grade --resume
RUN`` (its documented resume, with the default settings) until it is complete, at most 3
times.

Cases (each prints one row):
  clean      no fault: its "repeats" (requests beyond one per call) must be 0, on a loaded
             machine too
  reask1     the fault mix, --max-reasks 1 and --final-passes 0 (as before issue 27)
  no-final   the fault mix, default settings but --final-passes 0 (no final pass: as before it)
  default    the fault mix, default settings (2 re-asks, 4 retries, 1 final pass)
  one-run    the fault mix, --max-reasks 4 and retry.max_retries 8 (an assay.toml), no final
             pass: more re-asks and retries instead
  generate   ``assay generate`` on --queries distinct queries (the shipped sample's three,
             repeated), clean and under the fault mix then re-run until complete: are the
             rubrics and records byte for byte the clean job's?
  stalls     no fault, on a machine modelled as loaded (issue 40): the fake judge's process,
             then the client's, is stopped for --stall-ms every --stall-every-s seconds
             (SIGSTOP / SIGCONT), as a starved process is; a clean run must repeat no request
  heavy-tail no fault, but a heavy-tailed endpoint (issue 40): 1% of the questions (fixed per
             prompt) take 40 times the median (2 s), on every attempt, as long reasoning answers
             do; graded by a paid judge (a price: every attempt billed) and by the same endpoint
             unpriced (a free judge, whose attempt timeout is fitted). Prints the extra requests
             (target: at most 0.2% with the defaults on a paid endpoint), the abandoned attempts
             and the share of the cost that is their estimate.

Columns: the first session's wall time, status and failed calls, and what its final pass did
(failed calls asked again once every call had been sent / of them recovered); the resumes it
needed and
their wall time (a resume retries only the failed calls; its attempt timeouts start fitted to
the run's stored latencies, so a hung request costs it about a second, not the 60 s ceiling);
the time to a complete run against the clean run's (target: at most 2x); verdicts equal to the
clean run's (every item, criterion and verdict).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from fake_judge_process import start_fake_judge
from grade_end_to_end import ASSAY, compile_sources, healthbench_rows

ROOT = Path(__file__).resolve().parents[1]
GENERATE = ROOT / "examples" / "generate"
MIX = ["--429-rate", "0.1", "--retry-after", "1", "--500-rate", "0.1", "--malformed-rate", "0.1",
       "--timeout-rate", "0.03"]
VARIED = ["--error-rate", "0.5"]  # half the criteria UNMET, fixed per criterion and response
MAX_RESUMES = 3


def assay(*args: str | Path, stall: tuple[float, float] | None = None) -> tuple[float, int, str]:
    """One ``assay`` process: wall seconds, exit code, the tail of its stderr. ``stall``:
    (every_s, stall_s) to stop the process for stall_s every every_s seconds."""
    start = time.perf_counter()
    process = subprocess.Popen([ASSAY, *map(str, args)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    with stalling(process, stall):
        _, err = process.communicate()
    return time.perf_counter() - start, process.returncode, err[-2000:]


@contextlib.contextmanager
def stalling(process: subprocess.Popen, stall: tuple[float, float] | None):
    """While inside, stop ``process`` for ``stall[1]`` s every ``stall[0]`` s (a process that
    a loaded machine does not schedule), then let it go on."""
    if stall is None:
        yield
        return
    every_s, stall_s = stall
    done = threading.Event()

    def stop_and_go() -> None:
        while not done.wait(every_s) and process.poll() is None:
            try:
                os.kill(process.pid, signal.SIGSTOP)
                time.sleep(stall_s)
            finally:
                os.kill(process.pid, signal.SIGCONT)

    thread = threading.Thread(target=stop_and_go, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def verdicts(run_dir: Path) -> set[tuple]:
    """(item, criterion, verdict, option) of every stored verdict (the judge's id, which names
    its server's port, left out)."""
    db = sqlite3.connect(run_dir / "run.sqlite")
    try:
        return set(db.execute("SELECT item_id, criterion_id, verdict, option FROM verdicts"))
    finally:
        db.close()


def repeats(run_dir: Path) -> int:
    """Requests sent beyond one per call (retries, re-asks, abandoned attempts re-sent)."""
    db = sqlite3.connect(run_dir / "run.sqlite")
    try:
        return db.execute("SELECT COALESCE(SUM(attempts), 0) - COUNT(*) FROM calls "
                          "WHERE cached = 0").fetchone()[0]
    finally:
        db.close()


def grade_until_complete(data: Path, judge: str, run_dir: Path, *extra: str | Path) -> dict:
    """A run, then ``--resume RUN`` until it is complete: the sessions' figures."""
    wall, code, err = assay("grade", data, "--healthbench", "--ideal", "--judge", judge,
                            "--run-dir", run_dir, "--quiet", *extra)
    if code not in (0, 4):
        raise SystemExit(f"assay grade failed ({code}): {err}")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    final = manifest["timing"]["sessions"][0]["final_pass"]
    out = {"first_wall": wall, "first_status": manifest["status"],
           "first_failed": manifest["totals"]["errors"], "resumes": 0, "resume_wall": 0.0,
           "final_pass": f"{final['asked_again']} / {final['recovered']}",
           "repeats": repeats(run_dir)}
    while code == 4 and out["resumes"] < MAX_RESUMES:
        wall, code, err = assay("grade", "--resume", run_dir, "--quiet")
        if code not in (0, 4):
            raise SystemExit(f"assay grade --resume failed ({code}): {err}")
        out["resumes"] += 1
        out["resume_wall"] += wall
    out["status"] = json.loads((run_dir / "manifest.json").read_text())["status"]
    out["total_wall"] = out["first_wall"] + out["resume_wall"]
    return out


def header() -> None:
    print("| case | calls | repeats | 1st session s | 1st status | failed calls | final pass "
          "| resumes | resume s | to complete s | vs clean | verdicts = clean |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")


def row(name: str, calls: int, result: dict, clean: dict | None, same: bool | None) -> None:
    ratio = f"{result['total_wall'] / clean['total_wall']:.2f}x" if clean else ""
    done = f"{result['total_wall']:.1f}" if result["status"] == "complete" else \
        f"({result['status']})"
    print(f"| {name} | {calls:,} | {result['repeats']:,} | {result['first_wall']:.1f} | "
          f"{result['first_status']} | {result['first_failed']} | {result['final_pass']} | "
          f"{result['resumes']} | {result['resume_wall']:.1f} | {done} | {ratio} | "
          f"{'' if same is None else 'yes' if same else '**no**'} |")


def run_stalls(work: Path, examples: int, every_s: float, stall_s: float,
               concurrency: int) -> None:
    """Clean runs while the fake judge's process, then the client's, is stopped now and then
    (``concurrency`` requests in flight: few enough that the client keeps up on a loaded
    machine, so the fitted timeout is near the 50 ms replies, as on a quiet one)."""
    data = healthbench_rows(work / "hb.jsonl", examples)
    calls = sum(len(json.loads(line)["rubrics"]) for line in data.open())
    print(f"\nClean runs, {calls:,} calls, {concurrency} in flight, a process stopped for "
          f"{stall_s * 1000:.0f} ms every {every_s:g} s")
    print("| stopped | repeats | wall s |")
    print("|---|---:|---:|")
    for who in ("the fake judge", "the client"):
        server, url = start_fake_judge(50, *VARIED)
        run_dir = work / f"stall-{who.split()[-1]}"
        try:
            with stalling(server, (every_s, stall_s) if who == "the fake judge" else None):
                wall, code, err = assay(
                    "grade", data, "--healthbench", "--ideal", "--judge",
                    f"openai-compatible:fake@{url}", "--run-dir", run_dir, "--quiet",
                    "--concurrency", str(concurrency),
                    stall=(every_s, stall_s) if who == "the client" else None)
        finally:
            server.terminate()
            server.wait()
        if code != 0:
            raise SystemExit(f"assay grade failed ({code}): {err}")
        print(f"| {who} | {repeats(run_dir):,} | {wall:.1f} |")


def run_heavy_tail(work: Path, examples: int) -> None:
    """The heavy-tailed endpoint, graded by a paid judge and by the same endpoint unpriced."""
    data = healthbench_rows(work / "hb.jsonl", examples)
    calls = sum(len(json.loads(line)["rubrics"]) for line in data.open())
    print(f"\nHeavy-tailed endpoint: {calls:,} calls; 1% of the questions take 40 x the "
          "median (50 ms -> 2 s) on every attempt; no fault")
    print("| judge | requests | extra requests | abandoned | cost estimated | wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    server, url = start_fake_judge(50, *VARIED, "--slow-share", "0.01", "--slow-factor", "40")
    try:
        for name, priced in (("paid (a price: not fitted)", True), ("free (fitted)", False)):
            config = work / f"tail-{priced}.toml"
            price = "price = { input = 1.0, output = 4.0 }\n" if priced else ""
            config.write_text(f'[judges.tail]\nspec = "openai-compatible:fake@{url}"\n{price}')
            run_dir = work / f"tail-{priced}"
            wall, code, err = assay("grade", data, "--healthbench", "--ideal", "--judge", "tail",
                                    "--config", config, "--run-dir", run_dir, "--quiet")
            if code != 0:
                raise SystemExit(f"assay grade failed ({code}): {err}")
            totals = json.loads((run_dir / "manifest.json").read_text())["totals"]
            extra = repeats(run_dir)
            share = (f"{totals['estimated_usd'] / totals['cost_usd']:.2%}" if totals["cost_usd"]
                     else "(unpriced)")
            print(f"| {name} | {calls + extra:,} | {extra:,} ({extra / calls:.2%}) | "
                  f"{totals.get('abandoned', 0):,} | {share} | {wall:.1f} |")
    finally:
        server.terminate()
        server.wait()


def run_grading(work: Path, cases: set[str], examples: int) -> None:
    data = healthbench_rows(work / "hb.jsonl", examples)
    calls = sum(len(json.loads(line)["rubrics"]) for line in data.open())
    config = work / "assay.toml"
    header()
    clean_server, clean_url = start_fake_judge(50, *VARIED)
    try:
        clean = grade_until_complete(data, f"openai-compatible:fake@{clean_url}", work / "clean")
    finally:
        clean_server.terminate()
        clean_server.wait()
    row("clean", calls, clean, None, None)
    expected = verdicts(work / "clean")
    faulted = {"reask1": "fault mix, --max-reasks 1, no final pass",
               "no-final": "fault mix, defaults but no final pass",
               "default": "fault mix, defaults (2 re-asks, 1 final pass)",
               "one-run": "fault mix, --max-reasks 4, max_retries 8, no final pass"}
    for case, name in faulted.items():
        if case not in cases:
            continue
        server, url = start_fake_judge(50, *VARIED, *MIX)
        judge, extra = f"openai-compatible:fake@{url}", []
        if case == "reask1":
            extra = ["--max-reasks", "1", "--final-passes", "0"]
        elif case == "no-final":
            extra = ["--final-passes", "0"]
        elif case == "one-run":  # the same endpoint as a named judge with more retries
            config.write_text(f'[judges.fake]\nspec = "{judge}"\nretry = {{ max_retries = 8 }}\n')
            judge, extra = "fake", ["--max-reasks", "4", "--final-passes", "0", "--config", config]
        try:
            result = grade_until_complete(data, judge, work / case, *extra)
        finally:
            server.terminate()
            server.wait()
        row(name, calls, result, clean, verdicts(work / case) == expected)


def run_generation(work: Path, queries: int) -> None:
    from assay.evidence import build_kb
    from assay.generate import read_queries

    kb = build_kb([GENERATE / "docs"], work / "kb", max_chars=400)
    base = read_queries(GENERATE / "queries.txt")
    lines = [f"{base[i % len(base)].text} (case {i})" for i in range(queries)]
    (work / "queries.txt").write_text("\n".join(lines) + "\n")

    def generate(url: str, out: Path) -> tuple[float, int]:
        wall, code, err = assay("generate", work / "queries.txt", "--kb", kb.path, "--model",
                                f"openai-compatible:fake@{url}", "--out", out, "-q")
        if code not in (0, 1, 4):
            raise SystemExit(f"assay generate failed ({code}): {err}")
        return wall, code

    def outputs(out: Path) -> tuple[bytes, bytes]:
        return out.read_bytes(), (out.parent / f"{out.name}.job" / "records.jsonl").read_bytes()

    stages = ["--stages", str(GENERATE / "stages.yaml")]
    server, url = start_fake_judge(50, *stages)
    try:
        clean_wall, _ = generate(url, work / "clean.jsonl")
    finally:
        server.terminate()
        server.wait()
    server, url = start_fake_judge(50, *stages, *MIX)
    try:
        first_wall, code = generate(url, work / "faulted.jsonl")
        first = json.loads((work / "faulted.jsonl.job" / "manifest.json").read_text())
        runs, again_wall = 0, 0.0
        while code != 0 and runs < MAX_RESUMES:
            wall, code = generate(url, work / "faulted.jsonl")
            runs, again_wall = runs + 1, again_wall + wall
    finally:
        server.terminate()
        server.wait()
    same = code == 0 and outputs(work / "faulted.jsonl") == outputs(work / "clean.jsonl")
    print(f"\n`assay generate`, {queries} queries: clean {clean_wall:.1f} s; fault mix: first run "
          f"{first_wall:.1f} s ({first['status']}, {len(first.get('failed') or {})} queries "
          f"failed), {runs} re-run(s) {again_wall:.1f} s; rubrics and records byte for byte the "
          f"clean job's: {'yes' if same else '**no**'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=440)
    parser.add_argument("--cases", default="clean,reask1,no-final,default,one-run,generate,"
                        "stalls,heavy-tail")
    parser.add_argument("--queries", type=int, default=40, help="queries of the generate case")
    parser.add_argument("--stall-every-s", type=float, default=2.0, help="the stalls case")
    parser.add_argument("--stall-ms", type=float, default=300.0, help="the stalls case")
    parser.add_argument("--stall-concurrency", type=int, default=8, help="the stalls case")
    args = parser.parse_args()
    compile_sources()
    cases = set(args.cases.split(","))
    work = Path(tempfile.mkdtemp(prefix="assay-faults-"))
    try:
        if cases - {"generate", "heavy-tail", "stalls"}:
            run_grading(work, cases, args.examples)
        if "stalls" in cases:
            run_stalls(work, args.examples, args.stall_every_s, args.stall_ms / 1000,
                       args.stall_concurrency)
        if "heavy-tail" in cases:
            run_heavy_tail(work, args.examples)
        if "generate" in cases:
            run_generation(work, args.queries)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
