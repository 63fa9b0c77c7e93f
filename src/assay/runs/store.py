"""The run store: one SQLite file per run, written as each verdict arrives.

Tables: ``meta`` (config, seed), ``rubrics`` (by content hash), ``items`` (each graded item, its
rubric hash, how many calls it needs, whether all are finished), ``calls`` (one row per judge
call: prompt hash, option permutations, raw reply, tokens, cost, latency, cache hit, status),
``verdicts`` (one per item × criterion × judge) and ``errors`` (failed calls and replies that
could not be read; never verdicts).

Finished calls are held in memory and written in batches, one ``executemany`` per table in one
transaction (every :data:`COMMIT_EVERY` calls, and by the engine at least every
:data:`COMMIT_AFTER_S` seconds and at the end), in WAL mode with ``synchronous=NORMAL``: a
statement and a commit per call cost more than the rest of a call's bookkeeping. A ``kill -9``
loses the calls still in flight and at most that window of finished calls not yet committed; a
resumed run finds every committed call and does not make it again.

Example:
    >>> import tempfile, pathlib
    >>> store = RunStore.create(pathlib.Path(tempfile.mkdtemp()) / "run.sqlite", {"seed": 1})
    >>> store.config()
    {'seed': 1}
    >>> store.close()
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.item import Item
from assay.rubric import Rubric
from assay.runs.store_errors import StoreError, cannot_create, cannot_resume, damaged
from assay.runs.store_schema import (
    ADDED_COLUMNS,
    SCHEMA,
    expected_columns,
    permutations_json,
    strings_json,
)
from assay.sqlite_files import connect_read_only, sidecars, write_problem
from assay.verdict import Verdict
from assay.wal_checkpoints import Checkpoints

COMMIT_EVERY = 256  # finished calls per transaction at most
COMMIT_AFTER_S = 0.25  # and no finished call waits longer than this for its commit
RUN_FILES = ("run.lock", "manifest.json")  # written beside the store by a run (lock, manifest)
__all__ = ["CallRecord", "RunStore", "StoreError", "Totals", "rubric_hash"]


@dataclass(slots=True)  # not frozen: one is made per call, and a frozen __init__ costs more
class CallRecord:
    """What the engine hands the store when a call ends (successfully or not)."""

    key: str
    item_id: str
    judge: str
    criterion_ids: Sequence[str]
    prompt_hash: str
    permutations: Mapping[str, Sequence[int]]
    ok: bool
    raw: str
    usage: dict[str, int]
    cost_usd: float
    latency_s: float
    cached: bool
    attempts: int
    verdicts: Sequence[Verdict]
    errors: Sequence[tuple[str | None, str, str]]  # (criterion id or None, kind, message)
    estimated_usd: float = 0.0  # of cost_usd: attempts abandoned without a reply, estimated
    abandoned: int = 0  # those attempts


@dataclass(frozen=True)
class Totals:
    items: int
    items_done: int
    calls: int
    calls_ok: int
    cache_hits: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cost_usd: float
    # of cost_usd: attempts abandoned on their timeout (billed, no usage reported), estimated
    estimated_usd: float = 0.0
    abandoned: int = 0
    # the judges' preflight requests (not calls; their tokens and cost are in the totals)
    preflight_requests: int = 0

    def plus_calls(self, other: dict[str, Any]) -> Totals:
        """These totals with calls made outside the grading store added (a taxonomy run's
        routing: ``calls``, ``calls_ok``, ``cache_hits``, ``errors``, tokens, ``cost_usd``
        and the estimated part of it).

        >>> Totals(1, 1, 2, 2, 0, 0, 10, 5, 0, 0, 0.5).plus_calls({"calls": 3, "cost_usd": 1.0}).calls
        5
        """
        names = ("calls", "calls_ok", "cache_hits", "errors", "prompt_tokens",
                 "completion_tokens", "cached_tokens", "reasoning_tokens", "cost_usd",
                 "estimated_usd", "abandoned", "preflight_requests")
        return replace(self, **{name: getattr(self, name) + other.get(name, 0) for name in names})


class _HeldRows:
    """Rows of finished calls recorded but not written yet, one list per statement."""

    __slots__ = ("calls", "done", "errors", "items", "keys", "verdicts")

    def __init__(self) -> None:
        self.keys: list[tuple[str]] = []
        self.items: set[str] = set()
        self.calls: list[tuple] = []
        self.verdicts: list[tuple] = []
        self.errors: list[tuple] = []
        self.done: list[tuple[float, str]] = []


def _remove(path: Path) -> None:
    """Remove ``path`` and its journal files, if there."""
    for file in (path, path.with_name(path.name + "-journal"), *sidecars(path)):
        file.unlink(missing_ok=True)


# An item's calls that ended well with a verdict stored for each of their criteria.
_FINISHED_CALLS = (
    "SELECT c.key FROM calls c WHERE c.item_id = ? AND c.status = 'ok' AND NOT EXISTS ("
    "SELECT 1 FROM json_each(c.criteria) j WHERE NOT EXISTS (SELECT 1 FROM verdicts v "
    "WHERE v.item_id = c.item_id AND v.criterion_id = j.value AND v.judge = c.judge))")


# An item's calls that ended well, the criteria they asked about, and the verdicts it holds.
_COUNTS = (
    "SELECT COUNT(*), COALESCE(SUM(json_array_length(c.criteria)), 0), "
    "(SELECT COUNT(*) FROM verdicts v WHERE v.item_id = ?1) "
    "FROM calls c WHERE c.item_id = ?1 AND c.status = 'ok'")


def rubric_hash(rubric: Rubric) -> str:
    return hashlib.sha256(rubric.model_dump_json().encode()).hexdigest()[:24]


class RunStore:
    """A run's SQLite file. One writer (the engine's event loop); readers may come and go."""

    def __init__(self, path: str | Path, *, _verify: bool = True, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self._without: set[str] = set()  # added columns a read-only older store lacks
        try:
            if read_only:
                self.db = connect_read_only(self.path, what="run store")
            else:
                self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
            if _verify:
                self._verify()
        except sqlite3.DatabaseError as exc:  # unverified: the store create() has just made
            raise (damaged(self.path, str(exc)) if _verify else cannot_create(self.path, exc)) from None
        self._rubrics: set[str] = set()
        self.uncommitted = 0  # finished calls not committed yet (held or written)
        self.rolled_back = 0  # finished calls lost by the last failed write
        self.commit_every = COMMIT_EVERY
        self._held = _HeldRows()  # finished calls not written yet
        self._checkpoints = Checkpoints(self.path, writer=self.db)  # a thread from the first commit

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, config: dict[str, Any],
               meta: Mapping[str, Any] | None = None) -> RunStore:
        """A new store with ``config`` (and ``meta``: more settings, each stored as JSON); it
        appears at ``path`` whole or not at all, so a crash or a full disk while creating it
        never leaves a half-made store behind (a full disk is a :class:`StoreError` naming the
        file, and the same command can simply be run again)."""
        path = Path(path)
        if path.exists():
            raise ConfigError(f"{path}: a run already exists here; resume it with --resume")
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_name(path.name + ".new")
        rows = [("config", json.dumps(config, sort_keys=True)), ("created_at", repr(time.time())),
                *((key, json.dumps(value, sort_keys=True)) for key, value in (meta or {}).items())]
        try:
            _remove(fresh)
            # In SQLite's rollback-journal mode, not WAL: the file is whole (synced) once the
            # commit returns, where a WAL file might keep part of it if closing fails
            db = sqlite3.connect(fresh, isolation_level=None)
            try:
                db.executescript(f"BEGIN; {SCHEMA}")
                db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
                db.execute("COMMIT")
            finally:
                db.close()
            fresh.replace(path)
        except (sqlite3.Error, OSError) as exc:  # e.g. the disk is full
            _remove(fresh)
            raise cannot_create(path, exc) from None
        try:
            return cls(path, _verify=False)
        except StoreError:  # e.g. no room for its -shm file: it holds no call yet
            _remove(path)
            raise

    @classmethod
    def open(cls, path: str | Path, *, write: bool = False) -> RunStore:
        """An existing store, checked first: a damaged one raises :class:`StoreError`.

        To read it (``write=False``) it need not be writable: a store in a read-only
        directory or mount is opened read-only. ``write=True`` (to resume the run) refuses,
        with a :class:`StoreError` saying why, a store that could not be written: before any
        call is made rather than when the first result is to be saved.
        """
        path = Path(path)
        if path.is_dir():
            path = path / "run.sqlite"
        if not path.exists():
            raise ConfigError(f"{path}: no run store here (expected a run directory or run.sqlite)")
        if path.stat().st_size == 0:
            raise damaged(path, "the file is empty (0 bytes)")
        problem = write_problem(path, also=RUN_FILES)
        if write and problem is not None:
            raise cannot_resume(path.parent, problem)
        return cls(path, read_only=problem is not None)

    def _verify(self) -> None:
        """A quick integrity check and the expected tables and columns (a dropped or altered
        table is damage, not something to recreate empty)."""
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise damaged(self.path, "; ".join(problems[:3]))
        for table, columns in expected_columns().items():
            found = [row[1] for row in self.db.execute(f"PRAGMA table_info({table})")]
            if not found:
                raise damaged(self.path, f"table {table!r} is missing")
            added = [name for name, _ in ADDED_COLUMNS.get(table, ())]
            missing = columns[len(found):]
            if found != columns[:len(found)] or any(name not in added for name in missing):
                raise damaged(self.path, f"table {table!r} has columns {found}, expected {columns}")
            if missing and not self.read_only:  # a store written before them: add them
                for name, kind in ADDED_COLUMNS[table]:
                    if name in missing:
                        self.db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            elif missing:
                self._without.update(missing)
        if self.meta("config") is None:
            raise damaged(self.path, "the run's config is missing")

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self.db.close()
            self._checkpoints.close()

    @property
    def dirty(self) -> bool:
        """True while something recorded is not committed yet."""
        return self.db.in_transaction or bool(self._held.calls)

    def commit(self) -> None:
        """Write and commit the calls recorded since the last commit (a no-op if there are none).
        If that fails, they are rolled back (counted in :attr:`rolled_back`) and the error raised."""
        try:
            self._write_held()
            wrote = self.db.in_transaction
            if wrote:
                self.db.execute("COMMIT")
        except BaseException:
            self._roll_back()
            raise
        self.uncommitted = 0
        if wrote:  # the engine commits on the event loop: WAL checkpoints (disk syncs) go to a thread
            self._checkpoints.poke()

    def checkpoint_soon(self) -> None:
        """After the last write of a session: copy the WAL into the database file in the
        background while the caller goes on (scoring), so that :meth:`close` has little left."""
        self.commit()
        self._checkpoints.poke(now=True)

    def _roll_back(self) -> None:
        self.rolled_back, self.uncommitted = self.uncommitted, 0
        self._held = _HeldRows()
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:  # e.g. the disk is full: the first error is the one to tell
            pass

    def _flush_held(self) -> None:
        """Write the held rows (uncommitted) so that a query sees them, as it sees its own writes."""
        if self._held.calls:
            try:
                self._write_held()
            except BaseException:
                self._roll_back()
                raise

    def _write_held(self) -> None:
        """Write the held rows into the open transaction: one statement per table."""
        held = self._held
        if not held.calls:
            return
        self._held = _HeldRows()
        self._begin()
        db = self.db
        db.executemany("DELETE FROM errors WHERE call_key = ?", held.keys)
        db.executemany("INSERT OR REPLACE INTO calls VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", held.calls)
        if held.verdicts:
            db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?)", held.verdicts)
        if held.errors:
            db.executemany(
                "INSERT INTO errors (call_key, item_id, judge, criterion_id, kind, message, raw, at)"
                " VALUES (?,?,?,?,?,?,?,?)", held.errors)
        if held.done:
            db.executemany("UPDATE items SET done = 1, finished_at = ? WHERE id = ?", held.done)

    def _begin(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: Any) -> None:
        self._set_meta(key, json.dumps(value, sort_keys=True))

    def config(self) -> dict[str, Any]:
        return json.loads(self.meta("config") or "{}")

    # -- writing --------------------------------------------------------------------------------

    def register_item(self, item: Item, rubric: Rubric, n_calls: int) -> None:
        """Record an item before its first call (no-op if it is already there); committed with
        the next batch of calls."""
        self._begin()
        text = rubric.model_dump_json()  # once: both its hash and the stored row
        digest = hashlib.sha256(text.encode()).hexdigest()[:24]  # = rubric_hash(rubric)
        if digest not in self._rubrics:
            self.db.execute("INSERT OR IGNORE INTO rubrics VALUES (?, ?)", (digest, text))
            self._rubrics.add(digest)
        self.db.execute(
            "INSERT OR IGNORE INTO items (id, rubric_hash, json, n_calls, started_at) VALUES (?,?,?,?,?)",
            (item.id, digest, item.model_dump_json(exclude={"rubric"}), n_calls, time.time()))

    def record_call(self, record: CallRecord, *, item_done: bool) -> None:
        """Record one finished call with its verdicts and errors; it is written and committed
        with the next batch (see the module doc), or at once if the batch is full. If a write
        fails, the calls not yet committed are rolled back and the error raised."""
        u = record.usage
        now = time.time()
        key, item_id, judge = record.key, record.item_id, record.judge
        held = self._held
        held.keys.append((key,))
        held.items.add(item_id)
        held.calls.append((
            key, item_id, judge, strings_json(record.criterion_ids), record.prompt_hash,
            permutations_json(record.permutations), "ok" if record.ok else "error", record.raw,
            u.get("prompt_tokens", 0), u.get("completion_tokens", 0), u.get("cached_tokens", 0),
            u.get("reasoning_tokens", 0), record.cost_usd, record.latency_s, int(record.cached),
            record.attempts, now, record.estimated_usd, record.abandoned))
        if record.verdicts:
            held.verdicts.extend(
                (v.item_id, v.criterion_id, v.judge, v.decision.value if v.decision else None,
                 v.option, v.explanation, key) for v in record.verdicts)
        if record.errors:
            held.errors.extend((key, item_id, judge, cid, kind, message, record.raw, now)
                               for cid, kind, message in record.errors)
        if item_done:
            held.done.append((now, item_id))
        self.uncommitted += 1
        if self.uncommitted >= self.commit_every:
            try:
                self.commit()
            except BaseException:
                self.rolled_back -= 1  # the engine counts this call itself
                raise

    def mark_item_done(self, item_id: str) -> None:
        self._begin()
        self.db.execute("UPDATE items SET done = 1, finished_at = ? WHERE id = ?", (time.time(), item_id))

    # -- reading --------------------------------------------------------------------------------

    def item_state(self, item_id: str) -> tuple[bool, set[str]] | None:
        """(done, keys of its finished calls) for a registered item, else None.

        A call is finished when it ended well and the store holds its judge's verdict on each
        of its criteria. An item is done when all its planned calls are: one whose calls ended
        in error, left a criterion unread, or lost a row (deleted by hand) is not, and
        resuming makes exactly those calls again.
        """
        if item_id in self._held.items:
            self._flush_held()
        row = self.db.execute("SELECT done, n_calls FROM items WHERE id = ?",
                              (item_id,)).fetchone()
        if row is None:
            return None
        if row[0]:  # counts first (as fast as a lookup); the calls one by one if they disagree
            ok, asked, held = self.db.execute(_COUNTS, (item_id,)).fetchone()
            if ok >= row[1] and held == asked:
                return True, set()
        keys = {k for (k,) in self.db.execute(_FINISHED_CALLS, (item_id,))}
        if row[0] and len(keys) >= row[1]:
            return True, set()
        return False, keys

    def finished_call_keys(self) -> set[str]:
        self._flush_held()
        return {k for (k,) in self.db.execute("SELECT key FROM calls WHERE status = 'ok'")}

    def rubric(self, digest: str) -> Rubric:
        (text,) = self.db.execute("SELECT json FROM rubrics WHERE hash = ?", (digest,)).fetchone()
        return Rubric.model_validate_json(text)

    def rubric_hashes(self) -> dict[str, str]:
        """Each registered item's rubric hash (:meth:`rubric` reads the rubric back)."""
        self._flush_held()
        return dict(self.db.execute("SELECT id, rubric_hash FROM items"))

    def iter_items(self, *, done_only: bool = False,
                   up_to: int | None = None) -> Iterator[tuple[int, Item, str]]:
        """Registered items as (position, item, rubric hash), in grading order; with
        ``up_to``, only those at that position or before."""
        self._flush_held()
        where = [*(["done = 1"] if done_only else []), *(["idx <= ?"] if up_to is not None else [])]
        rows = self.db.execute(
            "SELECT idx, json, rubric_hash FROM items"
            + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY idx",
            () if up_to is None else (up_to,))
        for idx, text, digest in rows:
            yield idx, Item.model_validate_json(text), digest

    def item_positions(self) -> dict[str, int]:
        """Each registered item's position, by its id."""
        self._flush_held()
        return dict(self.db.execute("SELECT id, idx FROM items"))

    def item_at(self, position: int) -> tuple[Item, str] | None:
        """The item registered at ``position`` with its rubric hash (None: no such item), read
        on demand (the review app opens one item at a time)."""
        self._flush_held()
        row = self.db.execute("SELECT json, rubric_hash FROM items WHERE idx = ?",
                              (position,)).fetchone()
        return None if row is None else (Item.model_validate_json(row[0]), row[1])

    def votes_of(self, item_id: str) -> list[Verdict]:
        """One item's stored per-judge verdicts, in :meth:`iter_votes`' order (by criterion id,
        then judge)."""
        self._flush_held()
        rows = self.db.execute(
            "SELECT criterion_id, judge, verdict, option, explanation FROM verdicts "
            "WHERE item_id = ? ORDER BY criterion_id, judge", (item_id,))
        return [Verdict(item_id=item_id, criterion_id=cid, judge=judge, decision=verdict,
                        option=option, explanation=explanation)
                for cid, judge, verdict, option, explanation in rows]

    def last_position(self) -> int:
        """The position of the last item registered (-1 if none): an item registered after
        now comes after it."""
        self._flush_held()
        (last,) = self.db.execute("SELECT COALESCE(MAX(idx), -1) FROM items").fetchone()
        return last

    def done_item_ids(self, *, after: int = -1) -> list[str]:
        """The ids of the finished items after position ``after``, in grading order."""
        self._flush_held()
        return [i for (i,) in self.db.execute(
            "SELECT id FROM items WHERE done = 1 AND idx > ? ORDER BY idx", (after,))]

    def iter_votes(self, *, up_to: int | None = None) -> Iterator[tuple[int, list[Verdict]]]:
        """(item position, its stored per-judge verdicts), in grading order, streamed; with
        ``up_to``, only for the items at that position or before."""
        self._flush_held()
        rows = self.db.execute(
            "SELECT i.idx, v.item_id, v.criterion_id, v.judge, v.verdict, v.option, v.explanation "
            "FROM items i JOIN verdicts v ON v.item_id = i.id"
            + ("" if up_to is None else " WHERE i.idx <= ?")
            + " ORDER BY i.idx, v.criterion_id, v.judge", () if up_to is None else (up_to,))
        current = -1  # before the first item (positions are >= 0)
        batch: list[Verdict] = []
        for idx, item_id, cid, judge, verdict, option, explanation in rows:
            if idx != current and batch:
                yield current, batch
                batch = []
            current = idx
            batch.append(Verdict(item_id=item_id, criterion_id=cid, judge=judge, decision=verdict,
                                 option=option, explanation=explanation))
        if batch:
            yield current, batch

    def iter_errors(self) -> Iterator[dict[str, Any]]:
        self._flush_held()
        cols = ("call_key", "item_id", "judge", "criterion_id", "kind", "message")
        for row in self.db.execute(f"SELECT {', '.join(cols)} FROM errors ORDER BY id"):
            yield dict(zip(cols, row))

    def calls_table(self) -> Iterator[dict[str, Any]]:
        self._flush_held()
        cursor = self.db.execute("SELECT * FROM calls ORDER BY finished_at")
        cols = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(cols, row))

    def latencies(self) -> list[float]:
        self._flush_held()
        return [x for (x,) in self.db.execute(
            "SELECT latency_s FROM calls WHERE cached = 0 AND latency_s IS NOT NULL")]

    def reply_latencies(self, judge: str, last: int = 256) -> list[float]:
        """The latencies of ``judge``'s last ``last`` calls answered at the first attempt and
        not from the cache, oldest first: what a resumed run seeds its attempt timeouts with
        (:meth:`assay.judges.timeouts.AttemptTimeouts.seed`)."""
        self._flush_held()
        rows = self.db.execute(
            "SELECT latency_s FROM calls WHERE judge = ? AND status = 'ok' AND cached = 0 "
            "AND attempts = 1 AND latency_s IS NOT NULL ORDER BY finished_at DESC LIMIT ?",
            (judge, last)).fetchall()
        return [x for (x,) in reversed(rows)]

    def item_durations(self) -> list[float]:
        self._flush_held()
        return [b - a for a, b in self.db.execute(
            "SELECT started_at, finished_at FROM items WHERE done = 1 AND finished_at IS NOT NULL")]

    def totals(self) -> Totals:
        """Every call made for the run: its grading calls, for a taxonomy run its routing
        calls (``routing_totals`` metadata, see :mod:`assay.routing.run`), and the judges'
        preflight requests of every session (their tokens and cost; counted apart from the
        calls as ``preflight_requests``)."""
        routing = self.meta("routing_totals")
        totals = self.grading_totals()
        if routing:
            totals = totals.plus_calls(json.loads(routing))
        sessions = json.loads(self.meta("sessions") or "[]")
        preflight = [s["preflight"] for s in sessions if isinstance(s.get("preflight"), dict)]
        if preflight:
            from assay.judges.budget import sum_preflight

            spent = sum_preflight(preflight)
            totals = totals.plus_calls({"prompt_tokens": spent["prompt_tokens"],
                                        "completion_tokens": spent["completion_tokens"],
                                        "cost_usd": spent["cost_usd"],
                                        "preflight_requests": spent["requests"]})
        return totals

    def grading_totals(self) -> Totals:
        """The calls of this store alone (the grading calls)."""
        self._flush_held()
        items, done = self.db.execute("SELECT COUNT(*), COALESCE(SUM(done), 0) FROM items").fetchone()
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'ok'), 0), COALESCE(SUM(cached), 0), "
            "COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(reasoning_tokens), 0), "
            "COALESCE(SUM(cost_usd), 0), "
            + ("0, 0" if self._without else
               "COALESCE(SUM(estimated_usd), 0), COALESCE(SUM(abandoned), 0)")
            + " FROM calls").fetchone()
        (errors,) = self.db.execute("SELECT COUNT(*) FROM errors").fetchone()
        return Totals(items, done, row[0], row[1], row[2], errors, row[3], row[4], row[5], row[6],
                      float(row[7]), float(row[8]), int(row[9]))
