"""Issue 27.3: a run that cannot be written is refused for resuming before any request is sent,
and a finished one is still scored, reported and exported, as it is, without a write.

The run directory is made read-only with ``chmod``. A root process ignores permissions (its
CAP_DAC_OVERRIDE), so under root the ``assay`` commands run without that capability (dropped
from the child's bounding set before it starts): the permissions then bind it as they bind
any user. Nothing else is faked: SQLite, the operating system and the fake judge are real.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.runs.conftest import POLICY, POLICY_SCORE, spec, write_items

import assay
from assay.testing import FakeJudgeServer

ASSAY = [str(Path(sys.executable).parent / "assay")]
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE = 24, 1  # <linux/prctl.h>, <linux/capability.h>


def _bound_by_permissions() -> None:
    """In the child, before ``exec``: a root process gives up overriding file permissions."""
    if os.geteuid() != 0:
        return  # permissions bind every other user already
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot drop CAP_DAC_OVERRIDE: a root test process "
                      "needs CAP_SETPCAP to run a command bound by file permissions")


def assay_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*ASSAY, *args], capture_output=True, text=True, timeout=120,
                          check=False, preexec_fn=_bound_by_permissions)


@contextmanager
def read_only(run: Path) -> Iterator[None]:
    """``run`` and every file in it read-only (r-x / r--) while the block runs."""
    paths = [run, *run.iterdir()]
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in paths}
    for p in paths:
        p.chmod(modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def snapshot(run: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.iterdir())}


@pytest.fixture
def judge() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        yield server


def test_the_commands_run_here_are_bound_by_file_permissions(tmp_path):
    """The mechanism the other tests rely on: a read-only file cannot be opened to write."""
    target = tmp_path / "file"
    target.write_text("x")
    target.chmod(0o444)
    probe = subprocess.run([sys.executable, "-c", f"open({str(target)!r}, 'a')"],
                           capture_output=True, text=True, check=False,
                           preexec_fn=_bound_by_permissions)
    assert probe.returncode == 1 and "PermissionError" in probe.stderr


def test_resuming_a_read_only_run_is_refused_before_any_request(tmp_path, rubric_file, judge):
    items = write_items(tmp_path / "items.jsonl", 30)  # 120 calls left to make
    run = tmp_path / "run"
    stopped = assay.grade(items, rubric=rubric_file, judges=[spec(judge)], run_dir=run,
                          budget_usd=0.0)
    assert stopped.status == "budget"
    judge.reset()
    preflights = judge.preflights
    with read_only(run):
        before = snapshot(run)
        out = assay_cli("grade", "--resume", str(run), "--quiet")
        after = snapshot(run)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert f"{run}: cannot resume this run" in out.stderr and "Nothing was sent" in out.stderr
    assert judge.requests == [] and judge.preflights == preflights  # not even the preflight
    assert after == before


def test_resuming_a_run_whose_store_file_is_read_only_is_refused(tmp_path, rubric_file, judge):
    items = write_items(tmp_path / "items.jsonl", 10)
    run = tmp_path / "run"
    assay.grade(items, rubric=rubric_file, judges=[spec(judge)], run_dir=run, budget_usd=0.0)
    judge.reset()
    store = run / "run.sqlite"
    store.chmod(0o444)  # the directory stays writable
    out = assay_cli("grade", "--resume", str(run), "--quiet")
    store.chmod(0o644)
    assert out.returncode == 1, out.stderr
    assert f"{store} cannot be written" in out.stderr.replace("\n", "")
    assert judge.requests == []


def test_a_finished_read_only_run_is_scored_as_it_was(tmp_path, items_file, rubric_file, judge):
    run = tmp_path / "run"
    assert assay.grade(items_file, rubric=rubric_file, judges=[spec(judge)],
                       run_dir=run).status == "complete"
    with read_only(run):
        before = snapshot(run)
        out = assay_cli("score", str(run))
        after = snapshot(run)
    assert out.returncode == 0, out.stderr
    assert "damaged" not in out.stdout + out.stderr
    assert f"{POLICY_SCORE:.4f}" in out.stdout  # every item, every verdict read
    assert after == before  # nothing written, no file left beside the store


def test_a_finished_read_only_run_is_reported_and_exported(tmp_path, items_file, rubric_file,
                                                           judge):
    run = tmp_path / "run"
    assay.grade(items_file, rubric=rubric_file, judges=[spec(judge)], run_dir=run)
    with read_only(run):
        report = assay_cli("report", str(run), "--out", str(tmp_path / "report.html"))
        export = assay_cli("score", str(run), "--export", str(tmp_path / "verdicts.jsonl"))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report.html").stat().st_size > 0
    assert export.returncode == 0, export.stderr
    assert len((tmp_path / "verdicts.jsonl").read_text().splitlines()) == 6 * 4


def test_a_read_only_run_with_human_labels_is_reported_with_them(tmp_path, items_file,
                                                                 rubric_file, judge):
    from assay.review.labels import RunLabels

    run = tmp_path / "run"
    assay.grade(items_file, rubric=rubric_file, judges=[spec(judge)], run_dir=run)
    with RunLabels.open(run) as labels:
        labels.put("q0", "stinger", "dr-a", verdict="MET")
    with read_only(run):
        before = snapshot(run)
        out = assay_cli("report", str(run), "--out", str(tmp_path / "report.html"))
        after = snapshot(run)
    assert out.returncode == 0, out.stderr
    from assay.report.payload import report_data

    (data,) = report_data((tmp_path / "report.html").read_text())
    stinger = next(c for c in data["items"][0]["criteria"] if c["id"] == "stinger")
    assert [h[0] for h in stinger["human"]] == ["dr-a"]
    assert after == before


# -- a store its writer left with a WAL (killed), read where it cannot be written ---------------

KILLED_WRITER = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("CREATE TABLE t (x)"); db.execute("INSERT INTO t VALUES (1), (2)")
os._exit(0)  # as kill -9 would: no checkpoint, the rows are in the -wal only
"""
READ = """
import sys
from pathlib import Path
from assay.sqlite_files import connect_read_only
print(connect_read_only(Path(sys.argv[1]), what="test store").execute("SELECT x FROM t").fetchall())
"""


def killed_writer_store(tmp_path: Path) -> Path:
    folder = tmp_path / "store"
    folder.mkdir()
    path = folder / "x.sqlite"
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], check=True)
    assert (folder / "x.sqlite-wal").stat().st_size > 0
    return path


def read_bound_by_permissions(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", READ, str(path)], capture_output=True, text=True,
                          check=False, preexec_fn=_bound_by_permissions)


def test_a_killed_writers_store_is_read_with_its_last_writes_where_it_cannot_be_written(
        tmp_path):
    path = killed_writer_store(tmp_path)
    with read_only(path.parent):
        out = read_bound_by_permissions(path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[(1,), (2,)]"


def test_a_wal_that_cannot_be_read_is_an_error_not_a_store_without_its_last_writes(tmp_path):
    path = killed_writer_store(tmp_path)
    (path.parent / "x.sqlite-shm").unlink()  # as a copy of the run without it would be
    with read_only(path.parent):
        out = read_bound_by_permissions(path)
    assert out.returncode == 1
    assert "its last writes are still in x.sqlite-wal" in out.stderr and "[(" not in out.stdout
