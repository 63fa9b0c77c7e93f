"""The run store's SQLite schema, and the encoders of its JSON columns.

:data:`SCHEMA` is the one definition of the tables; :func:`expected_columns` reads the columns
back from it (a store whose tables lack one is refused as damaged, see
:mod:`assay.runs.store_errors`). The encoders write ``json.dumps``' exact bytes, faster for the
usual plain ids, because a run writes one row per call.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping, Sequence

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rubrics (hash TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    idx INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, rubric_hash TEXT NOT NULL,
    json TEXT NOT NULL, n_calls INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0,
    started_at REAL, finished_at REAL);
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, item_id TEXT NOT NULL, judge TEXT NOT NULL, criteria TEXT NOT NULL,
    prompt_hash TEXT NOT NULL, permutations TEXT NOT NULL, status TEXT NOT NULL, raw TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER,
    reasoning_tokens INTEGER, cost_usd REAL, latency_s REAL, cached INTEGER, attempts INTEGER,
    finished_at REAL, estimated_usd REAL NOT NULL DEFAULT 0, abandoned INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS calls_item ON calls (item_id);
CREATE TABLE IF NOT EXISTS verdicts (
    item_id TEXT NOT NULL, criterion_id TEXT NOT NULL, judge TEXT NOT NULL,
    verdict TEXT, option TEXT, explanation TEXT NOT NULL, call_key TEXT NOT NULL,
    PRIMARY KEY (item_id, criterion_id, judge));
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY, call_key TEXT NOT NULL, item_id TEXT NOT NULL, judge TEXT NOT NULL,
    criterion_id TEXT, kind TEXT NOT NULL, message TEXT NOT NULL, raw TEXT, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS errors_call ON errors (call_key);
"""


# Columns added after the first stores were written, by table: a store without them is
# brought up to date when opened to write (ALTER TABLE ... ADD COLUMN, their defaults), and
# read as it is (they read as their defaults). ``calls.estimated_usd``: the part of
# ``cost_usd`` estimated for attempts abandoned without a reply; ``calls.abandoned``: how many.
ADDED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "calls": (("estimated_usd", "REAL NOT NULL DEFAULT 0"),
              ("abandoned", "INTEGER NOT NULL DEFAULT 0")),
}


def expected_columns() -> dict[str, list[str]]:
    """Table -> column names, as SCHEMA makes them (read from a scratch in-memory database)."""
    if not _COLUMNS:
        db = sqlite3.connect(":memory:")
        db.executescript(SCHEMA)
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            _COLUMNS[table] = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        db.close()
    return _COLUMNS


_COLUMNS: dict[str, list[str]] = {}
_PLAIN = re.compile(r'[ !#-\[\]-~]+')  # printable ASCII but " and \: JSON strings as they are


def strings_json(values: Sequence[str]) -> str:
    """``json.dumps(list(values))``, without the encoder for the usual plain ids.

    >>> ids = ["a", "b c", 'q"', "é"]
    >>> all(strings_json(ids[:n]) == json.dumps(ids[:n]) for n in range(5))
    True
    """
    if values and all(type(v) is str and _PLAIN.fullmatch(v) for v in values):
        return '["' + '", "'.join(values) + '"]'
    return json.dumps(list(values))


def permutations_json(permutations: Mapping[str, Sequence[int]]) -> str:
    return json.dumps({k: list(v) for k, v in permutations.items()}) if permutations else "{}"
