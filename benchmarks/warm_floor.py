"""The floor of a warm `assay grade`: the least a CPython process must do per call, timed.

    .venv/bin/python benchmarks/warm_floor.py                # 440 examples, 6,308 calls, ~1 minute
    .venv/bin/python benchmarks/warm_floor.py --examples 1440

A run whose every call is in the response cache still reads each row, renders each prompt,
hashes it twice (the cache key and the prompt hash: fixed formats), looks the reply up, reads
the verdict, writes the run store's rows (Assay's own schema) and scores each item. This script
does exactly that and nothing else, in plain Python (orjson, hashlib, sqlite3, and Assay's own
hash and id functions, which are plain passes of those; no pydantic, no asyncio), on the data of
`grade_end_to_end.py`, and checks that its cache keys are the ones `assay grade` looked up. It
prints:

- the floor by stage, and the best rate a process doing only this could reach, its start-up
  being a bare interpreter importing those three modules (a bound, not a target);
- the real warm `assay grade` on the same cache, as a user runs it;
- the same warm grade through Assay's Python API in this process, each stage timed in the
  functions the engine calls (floor and Assay passes alternated, the fastest of each shown).
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from grade_end_to_end import ASSAY, Server, best_start, compile_sources, healthbench_rows, run_grade

from assay.grading.grader import call_key, prompt_hash
from assay.judges.cache import cache_key
from assay.rubric.criterion import derive_criterion_id

BATCH = 256  # calls a transaction, as the run store commits


class StageTimer:
    """Seconds by stage: of a block (``with timer("stage"):``) or of each call of a wrapped
    function, not counting the time of other stages entered inside it (as a profiler's own
    time, by stage)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list] = []  # [stage, resumed at]

    def enter(self, stage: str) -> None:
        now = time.perf_counter()
        if self._stack:
            top = self._stack[-1]
            self.seconds[top[0]] = self.seconds.get(top[0], 0.0) + now - top[1]
        self._stack.append([stage, now])

    def leave(self) -> None:
        now = time.perf_counter()
        stage, resumed = self._stack.pop()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - resumed
        if self._stack:
            self._stack[-1][1] = now

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        self.enter(stage)
        try:
            yield
        finally:
            self.leave()

    def wrap(self, owner: object, name: str, stage: str) -> None:
        function = getattr(owner, name)

        @functools.wraps(function)
        def timed(*args, **kwargs):
            self.enter(stage)
            try:
                return function(*args, **kwargs)
            finally:
                self.leave()

        setattr(owner, name, timed)

    def wrap_iterator(self, owner: object, name: str, stage: str) -> None:
        """A method returning an iterator: the time of each ``next`` goes to ``stage``."""
        function = getattr(owner, name)

        def timed(*args, **kwargs):
            inner = function(*args, **kwargs)
            while True:
                self.enter(stage)
                try:
                    value = next(inner)
                except StopIteration:
                    return
                finally:
                    self.leave()
                yield value

        setattr(owner, name, timed)


def key_parts(data: Path, base_url: str) -> tuple[dict, object, list[str]]:
    """What `assay grade --healthbench --ideal` puts in each cache key besides the messages,
    the HealthBench template, and the keys Assay itself computes (to check the floor's)."""
    from assay.grading.grader import Grader
    from assay.judges.factory import make_judge
    from assay.runs.engine import judge_request
    from assay.runs.options import RunOptions
    from assay.runs.runner import plan_run
    from assay.runs.sources import ItemSource

    source = ItemSource(path=data.resolve(), ideal=True)
    plan = plan_run(source, RunOptions.build(healthbench=True,
                                             judges=[f"openai-compatible:fake@{base_url}"]))
    judge = make_judge(plan.judge_configs[0])
    grader = Grader(plan.grading)
    keys = [judge.cache_key(judge_request(call))
            for item in source for call in grader.plan(item, item.rubric, judge.id)]
    template = grader.template_for(None)
    parts = {"endpoint": judge.config.base_url, "wire": judge.config.wire, "model": judge.model,
             "params": judge.config.request_params(), "schema": None, "schema_name": "verdict",
             "template_version": template.version}
    return parts, template, keys


def floor_pass(data: Path, cache: Path, store: Path, parts: dict,
               template) -> tuple[dict[str, float], list[str]]:
    """One warm grade reduced to its necessary work; returns its seconds by stage and the
    cache keys. The hashes are Assay's own functions: each is already a plain orjson and
    hashlib pass."""
    t = StageTimer()
    with t("read rows (orjson)"):
        rows = [orjson.loads(line) for line in data.open("rb")]
        rows = [r for r in rows if (r.get("ideal_completions_data") or {}).get("ideal_completion")]
    with t("render prompts"):
        prompts = []
        for row in rows:
            turns = [*row["prompt"], {"role": "assistant",
                                      "content": row["ideal_completions_data"]["ideal_completion"]}]
            conversation = "\n\n".join(f"{m['role']}: {m['content']}" for m in turns)
            head = template.user.replace("<<conversation>>", conversation)
            prompts.append([template.wrap(head.replace("<<rubric_item>>",
                                                       f"[{c['points']}] {c['criterion']}"))
                            for c in row["rubrics"]])
    with t("cache keys (sha256)"):
        keys = [[cache_key({**parts, "messages": m}) for m in item] for item in prompts]
    with t("prompt hashes (sha256)"):
        hashes = [[prompt_hash(m) for m in item] for item in prompts]
    with t("cache lookups (a query an item)"):
        reader = sqlite3.connect(cache)
        replies = []
        for item in keys:
            found = {k: (orjson.loads(d), raw) for k, d, raw in reader.execute(
                f"SELECT key, data, raw FROM replies WHERE key IN ({','.join('?' * len(item))})",
                item)}
            replies.append([found[k] for k in item])
        reader.close()
    with t("read verdicts"):
        met = [[reply[0].get("criteria_met") is True for reply in item] for item in replies]
    with t("write the run store"):
        write_store(store, rows, keys, hashes, replies, met)
    with t("score items (overall, by theme, by axis)"):
        by_tag: dict[str, list[float]] = {}
        for row, item_met in zip(rows, met):
            score = clipped_score(row["rubrics"], item_met)
            by_tag.setdefault("overall", []).append(score)
            for tag in row["example_tags"]:  # a theme: the example's score
                by_tag.setdefault(tag, []).append(score)
            for tag in {tag for entry in row["rubrics"] for tag in entry["tags"]}:  # an axis
                pairs = [(e, ok) for e, ok in zip(row["rubrics"], item_met) if tag in e["tags"]]
                if any(e["points"] > 0 for e, _ in pairs):
                    by_tag.setdefault(tag, []).append(
                        clipped_score([e for e, _ in pairs], [ok for _, ok in pairs]))
        {tag: sum(values) / len(values) for tag, values in by_tag.items()}  # the means shown
    return t.seconds, [k for item in keys for k in item]


def clipped_score(entries: list[dict], met: list[bool]) -> float:
    """HealthBench's score of one example: points met over the positive points, in [0, 1]."""
    possible = sum(e["points"] for e in entries if e["points"] > 0)
    achieved = sum(e["points"] for e, ok in zip(entries, met) if ok)
    return min(1.0, max(0.0, achieved / possible))


def write_store(store: Path, rows: list[dict], keys: list[list[str]], hashes: list[list[str]],
                replies: list[list[tuple]], met: list[list[bool]]) -> None:
    """The run store's rows for a warm grade, in Assay's schema: each item and its rubric, then
    each call and its verdict (criterion ids and call keys derived by Assay's functions),
    committed every :data:`BATCH` calls."""
    from assay.runs.store_schema import SCHEMA

    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    db = sqlite3.connect(store, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(SCHEMA)
    now, calls, verdicts = time.time(), [], []
    db.execute("BEGIN")
    for row, item_keys, item_hashes, item_replies, item_met in zip(rows, keys, hashes, replies, met):
        item_id = row["prompt_id"]
        rubric = orjson.dumps(row["rubrics"]).decode()
        digest = hashlib.sha256(rubric.encode()).hexdigest()[:24]
        db.execute("INSERT OR IGNORE INTO rubrics VALUES (?, ?)", (digest, rubric))
        item = orjson.dumps({k: v for k, v in row.items() if k != "rubrics"}).decode()
        db.execute("INSERT INTO items (id, rubric_hash, json, n_calls, started_at, done) "
                   "VALUES (?,?,?,?,?,1)", (item_id, digest, item, len(item_keys), now))
        for entry, phash, reply, ok in zip(row["rubrics"], item_hashes, item_replies, item_met):
            criterion = derive_criterion_id(entry["criterion"])
            key = call_key(item_id, "fake", [criterion])
            calls.append((key, item_id, "fake", f'["{criterion}"]', phash, "{}", "ok", reply[1],
                          0, 0, 0, 0, 0.0, 0.0, 1, 0, now))
            verdicts.append((item_id, criterion, "fake", "MET" if ok else "UNMET", None, "", key))
        if len(calls) >= BATCH or row is rows[-1]:
            db.executemany("INSERT OR REPLACE INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           calls)
            db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?)", verdicts)
            db.execute("COMMIT")
            db.execute("BEGIN")
            calls, verdicts = [], []
    db.execute("COMMIT")
    db.close()


def wrap_assay_stages() -> StageTimer:
    """Time each stage of a grade in the functions the engine calls (done once per process)."""
    from assay.grading import grader
    from assay.judges.judge import Judge
    from assay.runs import store
    from assay.runs.engine import Engine
    from assay.runs.session_scores import SessionScores
    from assay.runs.sources import ItemSource

    timer = StageTimer()
    timer.wrap_iterator(ItemSource, "_with_responses", "read and validate items")
    timer.wrap(grader.Grader, "plan", "render prompts, plan calls")
    timer.wrap(Judge, "cached", "cache keys and lookups")
    timer.wrap(grader, "prompt_hash", "prompt hashes")
    timer.wrap(grader.Grader, "interpret", "read verdicts")
    for name in ("register_item", "item_state", "record_call", "commit", "mark_item_done"):
        timer.wrap(store.RunStore, name, "write the run store")
    timer.wrap(SessionScores, "add", "score items")
    run = Engine.run

    async def timed_run(self, items):
        timer.enter("engine: the rest (calls, records, progress)")
        try:
            return await run(self, items)
        finally:
            timer.leave()

    Engine.run = timed_run
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 10, 10)  # the `assay` process's collector settings
    return timer


def assay_pass(timer: StageTimer, data: Path, cache: Path, base_url: str,
               run_dir: Path) -> dict[str, float]:
    """The same warm grade through the Python API in this process: seconds by stage."""
    import assay

    timer.seconds = {}
    assay.grade(data, judges=[f"openai-compatible:fake@{base_url}"], healthbench=True,
                ideal=True, cache_path=cache, run_dir=run_dir)
    return timer.seconds


def table(seconds: dict[str, float], calls: int) -> float:
    """Print the stages as a Markdown table; return the total per call."""
    print("| stage | ms | µs/call |\n|---|---:|---:|")
    for name, spent in seconds.items():
        print(f"| {name} | {spent * 1e3:.1f} | {spent / calls * 1e6:.1f} |")
    total = sum(seconds.values())
    print(f"| **total** | {total * 1e3:.1f} | **{total / calls * 1e6:.1f}** |")
    return total / calls


def main() -> None:
    compile_sources()
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=440)
    parser.add_argument("--passes", type=int, default=4,
                        help="floor and Assay passes, alternated (the fastest of each shown)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assay-floor-"))
    try:
        run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, args: argparse.Namespace) -> None:
    data = healthbench_rows(work / "hb.jsonl", args.examples)
    cache = work / "cache.sqlite"
    server = Server(work, 0)
    try:
        def grade(name: str) -> dict:
            return run_grade([str(data), "--healthbench", "--ideal", "--judge",
                              f"openai-compatible:fake@{server.base_url}", "--run-dir",
                              str(work / name), "--cache", str(cache)])

        grade("cold")
        warm = grade("warm")
        parts, template, assay_keys = key_parts(data, server.base_url)
        timer = wrap_assay_stages()
        passes, own_passes = [], []
        for k in range(args.passes):  # alternated: the machine's speed drifts
            passes.append(floor_pass(data, cache, work / "floor.sqlite", parts, template))
            own_passes.append(assay_pass(timer, data, cache, server.base_url, work / f"api{k}"))
    finally:
        server.stop()
    stages, keys = min(passes, key=lambda p: sum(p[0].values()))
    own = min(own_passes, key=lambda p: sum(p.values()))
    if keys != assay_keys:
        raise SystemExit("the floor's cache keys differ from assay grade's: it did other work")
    calls = len(keys)
    start = best_start([sys.executable, "-c", "import hashlib, sqlite3, orjson"])
    cli_start = best_start([ASSAY, "--help"])

    print(f"Floor of a warm grade, {calls:,} calls (best of {args.passes} passes):\n")
    per_call = table(stages, calls)
    print(f"\nstart-up: a bare interpreter importing hashlib, sqlite3, orjson {start * 1e3:.0f} ms; "
          f"`assay --help` {cli_start * 1e3:.0f} ms")
    for n in sorted({calls, 5_142, 20_693}):
        print(f"ceiling of a process doing only this, {n:,} calls: "
              f"{n / (start + n * per_call):,.0f} calls/s")
    print(f"\n`assay grade`, warm: {warm['wall']:.2f} s, {calls / warm['wall']:,.0f} calls/s "
          f"(grading phase {calls / warm['phase_s']:,.0f}/s, "
          f"{warm['phase_s'] / calls * 1e6:.0f} µs/call), CPU {warm['cpu'] / calls * 1e3:.3f} ms/call")
    print(f"\nThe same warm grade through the Python API, by stage (each stage's own time, "
          f"best of {args.passes} passes):\n")
    table(own, calls)


if __name__ == "__main__":
    main()
