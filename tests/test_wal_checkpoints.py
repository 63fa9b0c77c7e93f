"""WAL checkpoints in a background thread: the writer's commits never checkpoint themselves, the
thread copies the pages once the WAL is large enough, at most once per interval, and closing
leaves one database file."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from assay.item import Item
from assay.judges.cache import ResponseCache
from assay.rubric import Rubric
from assay.runs.store import RunStore
from assay.wal_checkpoints import Checkpoints


def writer(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE t (x BLOB)")
    return db


def write(db: sqlite3.Connection, n: int) -> None:
    db.execute("BEGIN")
    db.executemany("INSERT INTO t VALUES (?)", [(b"x" * 4000,) for _ in range(n)])
    db.execute("COMMIT")


def wait_for(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_thread_copies_the_wal_into_the_database_once_it_is_large_enough(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    db = writer(path)
    checkpoints = Checkpoints(path, wal_bytes=200_000, min_interval_s=0)
    write(db, 10)  # ≈ 40 kB: below the threshold
    checkpoints.poke()
    time.sleep(0.1)
    assert checkpoints.done == 0
    size_before = path.stat().st_size
    write(db, 100)  # ≈ 400 kB
    checkpoints.poke()
    wait_for(lambda: checkpoints.done == 1)
    assert path.stat().st_size > size_before + 300_000  # the pages are in the database file
    db.close()
    checkpoints.close()
    assert not Path(f"{path}-wal").exists()
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM t").fetchone() == (110,)


def test_at_most_one_checkpoint_per_interval(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    db = writer(path)
    checkpoints = Checkpoints(path, wal_bytes=1, min_interval_s=60)
    for _ in range(5):
        write(db, 5)
        checkpoints.poke()
        time.sleep(0.05)
    assert checkpoints.done == 1
    db.close()
    checkpoints.close()


def test_now_checkpoints_whatever_the_size_and_the_interval_and_empties_the_wal(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    db = writer(path)
    checkpoints = Checkpoints(path, wal_bytes=1 << 40, min_interval_s=60)
    write(db, 5)
    checkpoints.poke()
    time.sleep(0.05)
    assert checkpoints.done == 0
    checkpoints.poke(now=True)
    wait_for(lambda: checkpoints.done == 1)
    assert Path(f"{path}-wal").stat().st_size == 0  # emptied: closing has nothing to delete
    assert db.execute("SELECT COUNT(*) FROM t").fetchone() == (5,)
    db.close()
    checkpoints.close()


def test_a_missing_wal_or_a_closed_writer_stops_nothing(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    sqlite3.connect(path).close()  # not in WAL mode: there is no WAL file to look at
    checkpoints = Checkpoints(path, wal_bytes=1, min_interval_s=0)
    checkpoints.poke()
    time.sleep(0.05)
    checkpoints.close()
    assert checkpoints.done == 0


def test_a_run_store_hands_its_checkpoints_to_a_thread_only_once_it_writes(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run.sqlite", {"seed": 1})
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    threads = threading.active_count()
    store.set_meta("note", "x")  # one statement of its own: no batch, no thread
    store.commit()
    assert threading.active_count() == threads
    item = Item(id="a", prompt="Dose?", response="5 mg.")
    store.register_item(item, Rubric(criteria=[{"id": "c", "text": "States the dose."}]), 1)
    store.commit()
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    assert threading.active_count() == threads + 1
    store.close()
    assert threading.active_count() == threads
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sqlite"]
    reader = RunStore.open(tmp_path)
    assert reader.meta("note") == '"x"'
    reader.close()  # a reader writes nothing and starts no thread
    assert threading.active_count() == threads


def test_the_response_cache_too(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", judge="j", model="m", data={"a": 1}, raw="r", usage={})
    cache.flush()
    assert cache._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    cache.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]
    again = ResponseCache(tmp_path / "cache.sqlite")
    assert again.get("k") is not None
    again.close()


def test_a_reader_elsewhere_holds_nothing_up_for_long(tmp_path: Path) -> None:
    """A cache may be shared: a reader in another connection does not stall the owner's
    checkpoint or close for more than a moment, and still reads its snapshot."""
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put("k", judge="j", model="m", data={"a": 1}, raw="r", usage={})
    cache.flush()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN")
    assert other.execute("SELECT COUNT(*) FROM replies").fetchone() == (1,)
    started = time.monotonic()
    cache.checkpoint_soon()
    cache.close()
    assert time.monotonic() - started < 2.0
    assert other.execute("SELECT key FROM replies").fetchone() == ("k",)
    other.execute("COMMIT")
    other.close()
    again = ResponseCache(path)
    assert again.get("k") is not None
    again.close()
