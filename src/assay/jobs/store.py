"""The call store of a model pipeline: every stage call's trace, and each finished item's result.

One SQLite file (WAL, one writer) per job directory. ``calls`` holds one row per stage call (the
request, the parsed reply, the raw text, tokens, cost, latency, whether it came from the cache,
and the failure if any); ``results`` holds the output of each finished item. A resumed job finds
both: a finished item is not redone, and a finished call is not made again.

Each row is committed as it is written, unless the store is opened with ``commit_after_s``: then
finished calls and results are held and written in one transaction every ``COMMIT_EVERY`` rows
or ``commit_after_s`` seconds (and before any read and at close), as the run store does for
grading: a ``kill -9`` then loses at most that window of finished calls (asked again on resume),
and a job of thousands of short calls stops paying a commit per call (``assay sample``).

Example:
    >>> import tempfile, pathlib
    >>> store = CallStore.open(pathlib.Path(tempfile.mkdtemp()) / "calls.sqlite")
    >>> store.put_result("q1", {"criteria": 3})
    >>> store.result("q1")
    {'criteria': 3}
    >>> store.close()
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Self

import orjson

from assay.sqlite_files import open_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, stage TEXT NOT NULL, item_id TEXT NOT NULL, judge TEXT NOT NULL,
    model TEXT NOT NULL, messages TEXT NOT NULL, data TEXT, raw TEXT,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
    latency_s REAL NOT NULL, cached INTEGER NOT NULL, attempts INTEGER NOT NULL,
    failure TEXT, finished_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS calls_item ON calls (item_id);
CREATE TABLE IF NOT EXISTS results (item_id TEXT PRIMARY KEY, data TEXT NOT NULL,
    finished_at REAL NOT NULL);
"""


_PUT_CALL = "INSERT OR REPLACE INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
_PUT_RESULT = "INSERT OR REPLACE INTO results VALUES (?, ?, ?)"
COMMIT_EVERY = 256  # held rows written in one transaction at most (commit_after_s)


@dataclass(frozen=True)
class StageCall:
    """The trace of one stage call: what was asked and what came back."""

    key: str
    stage: str
    item_id: str
    judge: str
    model: str
    messages: list[dict[str, Any]]
    data: dict[str, Any] | None
    raw: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    cached: bool
    attempts: int
    failure: str | None = None
    estimated_usd: float = 0.0  # of cost_usd: attempts abandoned on their timeout, estimated
    abandoned: int = 0  # those attempts

    @property
    def ok(self) -> bool:
        return self.failure is None and self.data is not None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CallTotals:
    calls: int
    failed: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    estimated_usd: float = 0.0  # of cost_usd: attempts abandoned on their timeout, estimated
    abandoned: int = 0
    preflight_requests: int = 0  # the judges' preflight requests (their cost is in cost_usd)


# Columns added to ``calls`` after the first stores were written: a store without them gets
# them (with their defaults) when it is opened.
_ADDED = (("estimated_usd", "REAL NOT NULL DEFAULT 0"), ("abandoned", "INTEGER NOT NULL DEFAULT 0"))


class CallStore:
    """Traces and results of one job; see the module docstring."""

    def __init__(self, path: Path, connection: sqlite3.Connection,
                 commit_after_s: float | None = None):
        self.path = path
        self._db = connection
        # Calls being made now, by key: an identical concurrent call waits for that one
        # (StageCaller), so every request sent is one stored call, counted with its cost.
        self.in_flight: dict[str, Any] = {}
        self._commit_after_s = commit_after_s
        self._held_calls: dict[str, tuple] = {}  # finished, not written yet (commit_after_s)
        self._held_results: dict[str, tuple] = {}
        self._flush_timer: asyncio.TimerHandle | None = None
        self._keys: set[str] | None = None  # the stored calls' keys, read at the first lookup

    @classmethod
    def open(cls, path: str | Path, *, commit_after_s: float | None = None) -> CallStore:
        """Open (creating if needed) the store at ``path`` (``commit_after_s``: see the module
        docstring)."""
        path = Path(path)
        db = open_sqlite(path, _SCHEMA, what="Assay call store")
        have = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
        for name, kind in _ADDED:
            if name not in have:
                db.execute(f"ALTER TABLE calls ADD COLUMN {name} {kind}")
        return cls(path, db, commit_after_s)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()

    def flush(self) -> None:
        """Write and commit the held calls and results (a no-op when none are held)."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if not self._held_calls and not self._held_results:
            return
        calls, results = list(self._held_calls.values()), list(self._held_results.values())
        self._db.execute("BEGIN")
        try:
            self._db.executemany(_PUT_CALL, calls)
            self._db.executemany(_PUT_RESULT, results)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._held_calls.clear()
        self._held_results.clear()

    def _hold(self) -> None:
        """After a row is held: write now if enough are, else make sure a write is due."""
        if len(self._held_calls) + len(self._held_results) >= COMMIT_EVERY:
            self.flush()
        elif self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop to write later: write now
                self.flush()
                return
            assert self._commit_after_s is not None
            self._flush_timer = loop.call_later(self._commit_after_s, self.flush)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta ---------------------------------------------------------------------------------

    def set_meta(self, key: str, value: Any) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, orjson.dumps(value).decode()))

    def meta(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return orjson.loads(row[0]) if row else default

    # --- calls --------------------------------------------------------------------------------

    def call(self, key: str) -> StageCall | None:
        """The stored call with this key (successful or not), if any."""
        held = self._held_calls.get(key)
        if held is not None:
            return _call(held)
        if self._keys is None:  # one query, then no lookup for a call never stored (most)
            self._keys = {k for (k,) in self._db.execute("SELECT key FROM calls")}
        if key not in self._keys:
            return None
        row = self._db.execute("SELECT * FROM calls WHERE key = ?", (key,)).fetchone()
        return _call(row) if row else None

    def put_call(self, call: StageCall) -> None:
        row = (call.key, call.stage, call.item_id, call.judge, call.model,
               orjson.dumps(call.messages).decode(),
               None if call.data is None else orjson.dumps(call.data).decode(), call.raw,
               call.prompt_tokens, call.completion_tokens, call.cost_usd, call.latency_s,
               int(call.cached), call.attempts, call.failure, time.time(), call.estimated_usd,
               call.abandoned)
        if self._keys is not None:
            self._keys.add(call.key)
        if self._commit_after_s is None:
            self._db.execute(_PUT_CALL, row)
            return
        self._held_calls[call.key] = row
        self._hold()

    def calls(self, item_id: str | None = None, stage: str | None = None) -> Iterator[StageCall]:
        """Stored calls in the order they finished, optionally of one item and/or stage."""
        self.flush()
        sql, args = "SELECT * FROM calls", []
        where = []
        if item_id is not None:
            where.append("item_id = ?")
            args.append(item_id)
        if stage is not None:
            where.append("stage = ?")
            args.append(stage)
        if where:
            sql += " WHERE " + " AND ".join(where)
        for row in self._db.execute(sql + " ORDER BY finished_at, rowid", args):
            yield _call(row)

    def reply_latencies(self, judge: str, last: int = 256) -> list[float]:
        """The latencies of ``judge``'s last ``last`` calls answered at the first attempt and
        not from the cache, oldest first (a resumed job seeds its attempt timeouts with them)."""
        self.flush()
        rows = self._db.execute(
            "SELECT latency_s FROM calls WHERE judge = ? AND failure IS NULL AND cached = 0 "
            "AND attempts = 1 ORDER BY finished_at DESC, rowid DESC LIMIT ?",
            (judge, last)).fetchall()
        return [x for (x,) in reversed(rows)]

    def add_preflight(self, spent: dict[str, Any]) -> None:
        """Count a judge's preflight requests (:meth:`assay.judges.Judge.take_preflight`) in
        the job: its tokens and cost in the totals, its requests apart from the calls."""
        if spent.get("requests"):
            from assay.judges.budget import sum_preflight

            self.set_meta("preflight", sum_preflight([self.meta("preflight", {}), spent]))

    def totals(self) -> CallTotals:
        """Every stage call of the job, with the judges' preflight requests' tokens and cost."""
        self.flush()
        preflight = self.meta("preflight", {})
        row = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(failure IS NOT NULL), 0), COALESCE(SUM(cached), 0), "
            "COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COALESCE(SUM(cost_usd), 0), COALESCE(SUM(latency_s), 0), "
            "COALESCE(SUM(estimated_usd), 0), COALESCE(SUM(abandoned), 0) FROM calls").fetchone()
        calls, failed, cached, prompt, completion, cost, latency, estimated, abandoned = row
        return CallTotals(calls, failed, cached, prompt + preflight.get("prompt_tokens", 0),
                          completion + preflight.get("completion_tokens", 0),
                          cost + preflight.get("cost_usd", 0.0), latency, estimated, abandoned,
                          preflight.get("requests", 0))

    # --- results ------------------------------------------------------------------------------

    def put_result(self, item_id: str, data: Any) -> None:
        row = (item_id, orjson.dumps(data).decode(), time.time())
        if self._commit_after_s is None:
            self._db.execute(_PUT_RESULT, row)
            return
        self._held_results[item_id] = row
        self._hold()

    def result(self, item_id: str) -> Any:
        self.flush()
        row = self._db.execute("SELECT data FROM results WHERE item_id = ?", (item_id,)).fetchone()
        return orjson.loads(row[0]) if row else None

    def results(self) -> dict[str, Any]:
        """Every finished item's result, in the order they finished."""
        self.flush()
        rows = self._db.execute("SELECT item_id, data FROM results ORDER BY finished_at, rowid")
        return {item_id: orjson.loads(data) for item_id, data in rows}


def _call(row: tuple) -> StageCall:
    (key, stage, item_id, judge, model, messages, data, raw, prompt_tokens, completion_tokens,
     cost, latency, cached, attempts, failure, _finished, estimated, abandoned) = row
    return StageCall(key, stage, item_id, judge, model, orjson.loads(messages),
                     None if data is None else orjson.loads(data), raw or "", prompt_tokens,
                     completion_tokens, cost, latency, bool(cached), attempts, failure,
                     estimated, abandoned)
