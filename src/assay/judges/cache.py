"""A response cache on SQLite (WAL), safe for several processes writing at once.

The key is a SHA-256 of everything that changes a reply: endpoint, wire format, model,
messages, parameters, schema and schema name, and the prompt template version. Only successful,
schema-valid replies are stored; credentials are never part of a row. Modes: ``use`` (read and
write), ``refresh`` (ignore what is stored, overwrite it), ``bypass`` (neither read nor write).

Example:
    >>> import tempfile, os
    >>> cache = ResponseCache(os.path.join(tempfile.mkdtemp(), "cache.sqlite"))
    >>> cache.put("k", judge="j", model="m", data={"verdict": "MET"}, raw="{}", usage={})
    >>> cache.get("k").data, cache.stats().hits
    ({'verdict': 'MET'}, 1)
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

import orjson

from assay.wal_checkpoints import Checkpoints

if TYPE_CHECKING:
    from assay.judges.config import JudgeConfig
    from assay.judges.types import JudgeRequest

CacheMode = Literal["use", "refresh", "bypass"]
DEFAULT_CACHE_PATH = Path(".assay") / "cache.sqlite"
CACHE_PATH_ENV = "ASSAY_CACHE"
BATCH_ROWS = 256
BATCH_SECONDS = 0.2
KEYS_PER_QUERY = 500  # under SQLite's oldest limit of 999 bound parameters


def default_cache_path() -> Path:
    """``$ASSAY_CACHE`` if set, else ``.assay/cache.sqlite`` under the working directory."""
    return Path(os.environ.get(CACHE_PATH_ENV) or DEFAULT_CACHE_PATH)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    model TEXT NOT NULL,
    data BLOB NOT NULL,
    raw TEXT NOT NULL,
    usage BLOB NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class CachedReply:
    data: dict[str, Any]
    raw: str
    usage: dict[str, int]
    created: float


@dataclass(frozen=True)
class CacheStats:
    """``hits``/``misses`` are this process's; ``lifetime_*`` include earlier processes."""

    path: str
    entries: int
    expired: int
    size_bytes: int
    hits: int
    misses: int
    lifetime_hits: int
    lifetime_misses: int
    by_model: dict[str, int] = field(default_factory=dict)

    @property
    def hit_rate(self) -> float | None:
        total = self.hits + self.misses
        return self.hits / total if total else None


def cache_key(parts: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``parts`` (sorted keys)."""
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


class ResponseCache:
    """An SQLite reply cache. ``ttl_s``: entries older than this count as misses."""

    def __init__(
        self, path: str | Path | None = None, *, ttl_s: float | None = None, mode: CacheMode = "use"
    ):
        if mode not in ("use", "refresh", "bypass"):
            raise ValueError(f"cache mode must be use, refresh or bypass, got {mode!r}")
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.ttl_s = ttl_s
        self.mode: CacheMode = mode
        self.hits = 0
        self.misses = 0
        self._flushed = (0, 0)
        self._lock = threading.Lock()
        self._pending: dict[str, tuple] = {}
        self._last_write = time.monotonic()
        self._db = sqlite3.connect(
            self.path, timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA busy_timeout = 60000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._checkpoints = Checkpoints(self.path, writer=self._db)  # a thread from the first batch

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, mode={self.mode!r}, ttl_s={self.ttl_s})"

    @property
    def reads(self) -> bool:
        return self.mode == "use"

    @property
    def writes(self) -> bool:
        return self.mode != "bypass"

    def has(self, key: str) -> bool:
        """True if :meth:`get` would find a fresh reply (counts neither a hit nor a miss)."""
        with self._lock:
            pending = self._pending.get(key)
            row = pending[6:] if pending is not None else self._db.execute(
                "SELECT created FROM replies WHERE key = ?", (key,)).fetchone()
        return row is not None and (self.ttl_s is None or time.time() - row[0] <= self.ttl_s)

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            pending = self._pending.get(key)
            row = pending[3:] if pending is not None else self._db.execute(
                "SELECT data, raw, usage, created FROM replies WHERE key = ?", (key,)
            ).fetchone()
            fresh = row is not None and (self.ttl_s is None or time.time() - row[3] <= self.ttl_s)
            if not fresh:
                self.misses += 1
                return None
            self.hits += 1
        return CachedReply(orjson.loads(row[0]), row[1], orjson.loads(row[2]), row[3])

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedReply]:
        """The fresh replies stored for ``keys`` (a key without one is absent), read with one
        query per :data:`KEYS_PER_QUERY` keys; hits and misses are counted as by :meth:`get`.

        >>> import tempfile, os
        >>> cache = ResponseCache(os.path.join(tempfile.mkdtemp(), "cache.sqlite"))
        >>> cache.put("k", judge="j", model="m", data={"verdict": "MET"}, raw="{}", usage={})
        >>> sorted(cache.get_many(["k", "other"])), (cache.hits, cache.misses)
        (['k'], (1, 1))
        """
        rows: dict[str, tuple] = {}
        with self._lock:
            stored = []
            for key in keys:
                pending = self._pending.get(key)
                if pending is not None:
                    rows[key] = pending[3:]
                else:
                    stored.append(key)
            for start in range(0, len(stored), KEYS_PER_QUERY):
                chunk = stored[start:start + KEYS_PER_QUERY]
                marks = ",".join("?" * len(chunk))
                for key, *row in self._db.execute(
                        f"SELECT key, data, raw, usage, created FROM replies WHERE key IN ({marks})",
                        chunk):
                    rows[key] = row
            oldest = time.time() - self.ttl_s if self.ttl_s is not None else None
            found = {}
            for key in keys:
                row = rows.get(key)
                if row is not None and (oldest is None or row[3] >= oldest):
                    found[key] = row
                    self.hits += 1
                else:
                    self.misses += 1
        return {key: CachedReply(orjson.loads(row[0]), row[1], orjson.loads(row[2]), row[3])
                for key, row in found.items()}

    def put(
        self, key: str, *, judge: str, model: str, data: dict[str, Any], raw: str, usage: dict[str, int]
    ) -> None:
        """Store a reply. Writes are batched (one transaction per ``BATCH_ROWS`` rows or
        ``BATCH_SECONDS``) so a busy event loop is not stalled by a commit per call; they are
        flushed by :meth:`flush`, :meth:`stats`, :meth:`clear` and :meth:`close`."""
        row = (key, judge, model, orjson.dumps(data), raw, orjson.dumps(usage), time.time())
        with self._lock:
            self._pending[key] = row
            if (len(self._pending) >= BATCH_ROWS
                    or time.monotonic() - self._last_write >= BATCH_SECONDS):
                self._write_pending()

    def flush(self) -> None:
        """Write batched rows now."""
        with self._lock:
            self._write_pending()

    def _write_pending(self) -> None:
        self._last_write = time.monotonic()
        if not self._pending:
            return
        rows, self._pending = list(self._pending.values()), {}
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        self._checkpoints.poke()  # written from the event loop: syncs go to a thread

    def checkpoint_soon(self) -> None:
        """Write batched rows now and copy the WAL into the database file in the background
        (so that :meth:`close` has little left to do)."""
        with self._lock:
            self._write_pending()
            self._checkpoints.poke(now=True)

    def stats(self) -> CacheStats:
        with self._lock:
            self._write_pending()
            self._flush_counters()
            entries = self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
            expired = 0
            if self.ttl_s is not None:
                expired = self._db.execute(
                    "SELECT COUNT(*) FROM replies WHERE created < ?", (time.time() - self.ttl_s,)
                ).fetchone()[0]
            by_model = dict(
                self._db.execute("SELECT model, COUNT(*) FROM replies GROUP BY model").fetchall()
            )
            counters = dict(self._db.execute("SELECT name, value FROM counters").fetchall())
        size = sum(p.stat().st_size for p in self._files() if p.exists())
        return CacheStats(
            str(self.path), entries, expired, size, self.hits, self.misses,
            counters.get("hits", 0), counters.get("misses", 0), by_model,
        )

    def clear(self, *, older_than_s: float | None = None, model: str | None = None) -> int:
        """Delete entries (all, or those older than ``older_than_s`` and/or of ``model``)."""
        where: list[str] = []
        args: list[float | str] = []
        if older_than_s is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_s)
        if model is not None:
            where.append("model = ?")
            args.append(model)
        sql = "DELETE FROM replies" + (" WHERE " + " AND ".join(where) if where else "")
        with self._lock:
            self._write_pending()
            removed = self._db.execute(sql, args).rowcount
            if not where:
                self._db.execute("DELETE FROM counters")
        with self._lock:
            self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        with self._lock:
            try:
                self._write_pending()
                self._flush_counters()
            finally:
                self._db.close()
                self._checkpoints.close()

    def _flush_counters(self) -> None:
        hits, misses = self.hits - self._flushed[0], self.misses - self._flushed[1]
        if hits or misses:
            self._db.executemany(
                "INSERT INTO counters VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                [("hits", hits), ("misses", misses)],
            )
            self._flushed = (self.hits, self.misses)

    def _files(self) -> list[Path]:
        return [self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def request_cache_key(config: JudgeConfig, request: JudgeRequest,
                      params: dict[str, Any] | None = None) -> str:
    """The response-cache key of ``request`` sent to the judge of ``config`` (what
    :meth:`assay.judges.Judge.cache_key` returns), without making the judge: a dry run needs no API key.
    ``params``: ``config.request_params()``, if the caller holds them already."""
    fields: dict[str, Any] = {
        "endpoint": config.base_url,
        "wire": config.wire,
        "model": config.model,
        "messages": request.messages,
        "params": config.request_params() if params is None else params,
        "schema": request.schema,
        "schema_name": request.schema_name,
        "template_version": request.template_version,
    }
    if request.text:  # only then: every key of a structured request stays as it was
        fields.update(text=True, sample=request.sample)
    elif request.sample:  # a repeat of a judge call (assay grade --repeats): a draw of its own
        fields["sample"] = request.sample
    return cache_key(fields)
