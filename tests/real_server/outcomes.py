"""How a smoke test reads what a command left behind: every call a verdict (or a stage's
parsed reply) or a classified failure, never a traceback, a bug or a hang; and at least half
of a command's calls a verdict (or a parsed reply), so that a server answering nothing but
failures (every call timing out) fails the tier."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from assay.jobs import CallStore
from assay.judges import FailureKind

# The kinds a failed call may end as: the judges layer's (whatever it grows to) and a reply
# the grader could not read. Never "internal" (an exception below the engine: a bug).
CLASSIFIED = frozenset(kind.value for kind in FailureKind) | {"unreadable_reply"}
FLOOR = 0.5  # the share of a command's calls that must give a verdict (or a parsed reply)


def command_budget_s(base_s: float = 420.0, load: float | None = None,
                     cores: int | None = None) -> float:
    """How long one command may run: ``base_s`` (what the slowest command needs on an idle
    2-core machine, with room to spare) times the machine's load per core when the tier
    starts, 1 to 4 times (a shared machine at load 17 on 2 cores took the generation test 413 s;
    a hang runs forever, so any finite budget still catches one). No doctest here: a test in
    this folder counts as the tier's (tests/test_real_server_tier.py tests it)."""
    load = os.getloadavg()[0] if load is None else load
    cores = cores or os.cpu_count() or 1
    return base_s * min(4.0, max(1.0, load / cores))


COMMAND_TIMEOUT_S = float(os.environ.get("ASSAY_REAL_SERVER_COMMAND_TIMEOUT_S")
                          or command_budget_s())
ASSAY = [str(Path(sys.executable).parent / "assay")]  # the console script users type


def assay(
    *args: str, cwd: Path, timeout_s: float = COMMAND_TIMEOUT_S, ok_codes: tuple[int, ...] = (0, 4)
) -> subprocess.CompletedProcess[str]:
    """Run ``assay ARGS`` as a user would; it must end in time (no hang), print no traceback and
    exit complete (0) or incomplete (4: some calls failed, each classified)."""
    try:
        done = subprocess.run(
            [*ASSAY, *args],
            check=False,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=os.environ | {"COLUMNS": "200"},
        )
    except subprocess.TimeoutExpired as hung:
        raise AssertionError(
            f"assay {args[0]} still running after {timeout_s:.0f} s "
            f"(a hang):\n{_text(hung.stdout)}\n{_text(hung.stderr)}"
        ) from None
    output = done.stdout + done.stderr
    assert "Traceback (most recent call last)" not in output, output
    assert done.returncode in ok_codes, f"exit {done.returncode}:\n{output}"
    return done


def require_floor(counts: Counter[str], ok: str, command: str) -> None:
    """At least :data:`FLOOR` of ``command``'s calls (all of ``counts``) ended as ``ok``."""
    total = sum(counts.values())
    assert total and counts[ok] >= FLOOR * total, (
        f"{command}: {counts[ok]} of {total} calls gave a {ok.rstrip('s')} (at least "
        f"{FLOOR:.0%} must): {dict(counts)}"
    )


def failure_kind(message: str) -> str:
    """The kind that starts a stored failure: ``"timeout (HTTP 408): ..."`` -> ``"timeout"``."""
    return re.split(r"[ :(]", message.strip(), maxsplit=1)[0]


def run_outcomes(run_dir: Path) -> Counter[str]:
    """``verdicts`` and one count per failure kind of a grading run; every call that ended
    without a verdict must carry a classified error."""
    db = sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro", uri=True)
    try:
        calls = db.execute("SELECT key, status FROM calls").fetchall()
        errors = db.execute("SELECT call_key, kind FROM errors").fetchall()
        verdicts = db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    finally:
        db.close()
    assert calls, f"{run_dir}: no call was stored"
    kinds = {}
    for key, kind in errors:
        kinds.setdefault(key, kind)
        assert kind in CLASSIFIED, f"call {key} failed unclassified: {kind}"
    for key, status in calls:
        assert status == "ok" or key in kinds, f"call {key} ended {status!r} with no error"
    return Counter({"verdicts": verdicts}) + Counter(kinds.values())


def job_outcomes(job_dir: Path, items: int) -> Counter[str]:
    """``ok`` calls and one count per failure kind of a pipeline job; each of its ``items``
    must end with a result, or failed: a classified failed call or a failure its manifest
    names."""
    store = CallStore.open(job_dir / "calls.sqlite")
    try:
        calls = list(store.calls())
        results = store.results()
    finally:
        store.close()
    manifest = json.loads((job_dir / "manifest.json").read_text())
    assert manifest["status"] in ("complete", "incomplete"), manifest["status"]
    assert calls, f"{job_dir}: no call was stored"
    outcomes: Counter[str] = Counter()
    ended = set(results) | set(manifest.get("failed") or ())
    for call in calls:
        if call.ok:
            outcomes["ok"] += 1
            continue
        kind = failure_kind(call.failure or "")
        assert kind in CLASSIFIED, (
            f"{call.stage} of {call.item_id} failed unclassified: {call.failure}"
        )
        outcomes[kind] += 1
        ended.add(call.item_id)
    assert len(ended) >= items, f"{job_dir}: {items} items, ended: {sorted(ended)}"
    return outcomes


def requests_in_flight(folder: Path) -> dict[str, int]:
    """The requests in flight each judge was allowed, as a run's or a job's manifest records."""
    manifest = json.loads((folder / "manifest.json").read_text())
    if "timing" in manifest:  # a grading run: per session
        manifest = manifest["timing"]["sessions"][-1]
    return {judge: entry["max_in_flight"] for judge, entry in manifest["in_flight"].items()}


def _text(value: str | bytes | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value or ""
