"""Opening Assay's SQLite files one way: small stores to write (job call stores, run label
stores), and any of them (run stores too) to read where they cannot be written.

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
    >>> writable(pathlib.Path(tempfile.mkdtemp()) / "y.sqlite")  # a new file in a new folder
    True
"""

from __future__ import annotations

import os
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


def sidecars(path: Path) -> list[Path]:
    """The WAL-mode files SQLite keeps beside ``path`` (``-wal``, ``-shm``)."""
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]


def write_problem(path: Path, *, also: tuple[str, ...] = ()) -> str | None:
    """Why this process cannot write ``path`` (or create it) with its WAL files and the files
    named in ``also`` beside it, or None if it can. The operating system answers
    (``os.access``): a read-only mount, an immutable file or permissions that apply to this
    user all count, and a root process is told the truth too."""
    directory = path.parent
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"its directory {directory} cannot be written"
    for file in (path, *sidecars(path), *(directory / name for name in also)):
        if file.exists() and not os.access(file, os.W_OK):
            return f"{file} cannot be written"
    return None


def writable(path: Path) -> bool:
    """True if :func:`write_problem` finds none."""
    return write_problem(path) is None


def connect_read_only(path: Path, *, what: str) -> sqlite3.Connection:
    """A connection that only reads the existing WAL-mode SQLite file ``path``, also where it
    cannot be written (a read-only directory, mount or file).

    SQLite reads a WAL database through its ``-shm`` file, which it must be able to create:
    where it cannot, and no write is left in the ``-wal`` file, the file alone is the whole
    database and is opened as immutable. A ``-wal`` that still holds writes, beside a file
    that cannot be given its ``-shm``, is an error naming it: reading the file alone would
    miss them.
    """
    uri = path.resolve().as_uri()  # percent-encoded: spaces, '?' and '#' in a path are kept
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # opens the file
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        # no -shm could be made: "unable to open" (a read-only mount), "readonly" (permissions);
        # anything else (a lock, a damaged file) is not this case
        if not any(cause in str(exc) for cause in ("unable to open", "readonly")):
            raise
    wal, shm = sidecars(path)
    if wal.exists() and wal.stat().st_size > 0:
        raise ConfigError(
            f"{path}: its last writes are still in {wal.name}, which SQLite reads only through "
            f"{shm.name}, and {shm.name} cannot be created here (the {what}'s directory cannot "
            "be written); copy the directory to a writable place and read the copy")
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None,
                           check_same_thread=False)
