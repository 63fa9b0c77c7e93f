"""Checkpoint a WAL-mode SQLite file from a background thread, so its writer never waits on a disk.

In WAL mode with ``synchronous=NORMAL`` a commit does not sync; a checkpoint (copying the WAL's
pages into the database file) syncs both files. SQLite runs one on the commit that takes the
WAL past 1,000 pages, in the writing thread: for ``assay grade`` that is the event loop, which
then stalls for every sync (≈10 ms each on this disk, up to 0.5 s while other files are being
flushed) with all its requests in flight. The writer calls :meth:`Checkpoints.poke` after each
commit; the first poke turns the writer's own checkpoints off (``PRAGMA wal_autocheckpoint=0``)
and starts a thread, so a connection that never writes costs no thread. That thread, with its
own connection, checkpoints once the WAL is past :data:`WAL_BYTES`, at most
every :data:`MIN_INTERVAL_S` (a WAL file keeps its size when SQLite starts over at its beginning,
so its size says how far it once grew, not how much is left to copy). Passive
checkpoints never block the writer, and SQLite releases the GIL while it syncs.

Closing is as before: the last connection to close (this thread's, in :meth:`close`) copies the
rest and removes the WAL. A checkpoint that fails (a full disk) leaves the pages in the WAL,
where every reader still finds them, for the next one.

Example:
    >>> import sqlite3, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.sqlite"
    >>> db = sqlite3.connect(path, isolation_level=None)
    >>> _ = db.execute("PRAGMA journal_mode=WAL")
    >>> checkpoints = Checkpoints(path, writer=db)
    >>> _ = db.execute("CREATE TABLE t (x)"); checkpoints.poke()
    >>> db.close(); checkpoints.close()
    >>> pathlib.Path(f"{path}-wal").exists()
    False
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from pathlib import Path

WAL_BYTES = 4 << 20  # SQLite's own default: 1,000 pages of 4 KiB
MIN_INTERVAL_S = 0.5


class Checkpoints:
    """A thread, started by the first :meth:`poke`, that checkpoints ``path``'s WAL when poked,
    the WAL has grown past ``wal_bytes`` and ``min_interval_s`` has passed since the last;
    ``writer`` (the connection that commits) has its automatic checkpoints turned off then.
    :meth:`close` after the writer's connection is closed."""

    def __init__(self, path: str | Path, *, writer: sqlite3.Connection | None = None,
                 wal_bytes: int = WAL_BYTES, min_interval_s: float = MIN_INTERVAL_S) -> None:
        self.path = Path(path)
        self.wal_bytes = wal_bytes
        self.min_interval_s = min_interval_s
        self.done = 0  # checkpoints run (for tests and benchmarks)
        self._writer = writer
        self._wake = threading.Event()
        self._closing = False
        self._now = False
        self._thread: threading.Thread | None = None

    def poke(self, *, now: bool = False) -> None:
        """After a commit: checkpoint if the WAL is past the threshold. ``now``: whatever its
        size and however recent the last one, and empty the WAL file (after the last write,
        so that closing finds nothing to copy and no large file to delete: deleting a WAL of a
        few MB took 34 ms on a disk mounted with ``discard``); before any plain poke there has
        been no commit, and it does nothing."""
        if self._thread is None:
            if now:
                return
            self._start()
        self._now = self._now or now
        self._wake.set()

    def _start(self) -> None:
        """Take the checkpoints over from the writer, in a thread of their own."""
        if self._writer is not None:
            self._writer.execute("PRAGMA wal_autocheckpoint=0")
        self._thread = threading.Thread(target=self._run, name="assay-checkpoints", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Close this thread's connection (the last one: SQLite copies what is left and removes
        the WAL) and wait for it; nothing to do if it never started."""
        if self._thread is None:
            return
        self._closing = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        wal, last = f"{self.path}-wal", -math.inf
        try:
            # a TRUNCATE holds back other processes' writers while it waits for readers (a
            # cache may be shared): it gives up after 0.1 s, leaving the rest to closing
            db = sqlite3.connect(self.path, isolation_level=None, timeout=0.1)
        except sqlite3.Error:  # the writer's connection, closing last, checkpoints instead
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                now, self._now = self._now, False
                if not now and time.monotonic() - last < self.min_interval_s:
                    continue
                try:
                    if now or os.stat(wal).st_size >= self.wal_bytes:
                        last = time.monotonic()
                        db.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if now else 'PASSIVE'})")
                        self.done += 1
                except (OSError, sqlite3.Error):  # the pages stay in the WAL for the next one
                    continue
        finally:
            db.close()
