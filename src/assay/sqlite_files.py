"""Opening Assay's small SQLite files (job call stores, run label stores) one way.

WAL journal with ``synchronous=NORMAL`` (a crashed process loses nothing committed), a busy
timeout so several processes can share a file, autocommit (callers open their own
transactions), and a file that is not a readable store of its kind gives one
:class:`~assay.errors.ConfigError` naming it and what to do.

Example:
    >>> import tempfile, pathlib
    >>> db = open_sqlite(pathlib.Path(tempfile.mkdtemp()) / "x.sqlite",
    ...                  "CREATE TABLE IF NOT EXISTS t (x INTEGER);", what="example store")
    >>> db.execute("SELECT COUNT(*) FROM t").fetchone()
    (0,)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from assay.errors import ConfigError


def open_sqlite(path: str | Path, schema: str, *, what: str, timeout_s: float = 30.0) -> sqlite3.Connection:
    """Open (creating if needed) the SQLite file at ``path`` with ``schema`` applied."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=timeout_s, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(schema)
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"{path}: not a readable {what} ({exc}); move it away to start "
                          "afresh") from None
    return db
