"""One writer per run directory: an advisory lock held while a run is created or resumed.

Two ``assay grade --resume RUN`` of one run, or two new runs in one ``--run-dir``, would both
make every call (and race on the store). :class:`RunLock` takes an exclusive ``flock`` on
``RUN/run.lock``; the operating system drops it when the process ends, even on ``kill -9``, so a
crashed run never leaves a stale lock behind.

Example:
    >>> import tempfile, pathlib
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with RunLock(run):
    ...     try:
    ...         RunLock(run).acquire()
    ...     except RunLocked as exc:
    ...         print("refused:", "another assay process" in str(exc))
    refused: True
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Self

from assay.errors import ConfigError

LOCK_FILE = "run.lock"


class RunLocked(ConfigError):
    """Another process holds the run directory's lock."""


class RunLock:
    """An exclusive, non-blocking lock on a run directory (created if missing)."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> Self:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock_soon(fd):
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise RunLocked(
                f"{self.run_dir}: another assay process (pid {holder}) is writing to this run; "
                "wait for it to finish or stop it, then resume with --resume "
                "(a new run needs a --run-dir of its own)")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _try_lock_soon(fd: int, tries: int = 5, pause_s: float = 0.01) -> bool:
    """The exclusive lock, tried a few times: a reader asking :func:`writer_of` holds a shared
    lock for a few microseconds, which must not turn a writer away."""
    for attempt in range(tries):
        if _try_lock(fd):
            return True
        if attempt + 1 < tries:
            time.sleep(pause_s)
    return False


def writer_of(run_dir: str | Path) -> str | None:
    """The pid of the process writing the run in ``run_dir`` now (holding its lock), or None.

    Read-only: the lock file is opened for reading, never created or written, so a run on a
    read-only disk can be asked too.

    >>> import tempfile
    >>> run = tempfile.mkdtemp()
    >>> writer_of(run) is None
    True
    >>> with RunLock(run):
    ...     writer_of(run) == str(os.getpid())
    True
    """
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY)
    except OSError:  # no lock file (no session ever ran here) or not readable
        return None
    try:
        if _try_lock(fd, shared=True):
            _unlock(fd)
            return None
        return os.read(fd, 32).decode("ascii", "replace").strip() or "?"
    finally:
        os.close(fd)


if sys.platform != "win32":  # a platform check (not try/except ImportError) mypy understands
    import fcntl

    def _try_lock(fd: int, *, shared: bool = False) -> bool:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

else:
    import msvcrt

    def _try_lock(fd: int, *, shared: bool = False) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBRLCK if shared else msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
