"""Human labels of a run: ``RUN/labels.sqlite``, written by reviewers, read by metrics.

One row per (item, criterion, rater) holds that rater's current label (a binary verdict or an
option), whether they agreed with the judge, and a note; every change is also appended to a
``history`` table, so no earlier judgement is lost. Each write is its own short transaction
with a busy timeout, so several reviewers (several processes, or one server handling several
browsers) never overwrite each other's labels.

``assay agreement RUN`` and ``assay report RUN`` read these labels when no ``--labels`` file is
given: they are plain :class:`~assay.verdict.Verdict` records with ``judge`` naming the rater.

Example:
    >>> import tempfile
    >>> labels = RunLabels.open(tempfile.mkdtemp())
    >>> _ = labels.put("q1", "stinger", "dr_a", verdict="MET", agrees=True, note="clear")
    >>> [(v.item_id, v.criterion_id, v.judge, v.decision.value) for v in labels.verdicts()]
    [('q1', 'stinger', 'dr_a', 'MET')]
    >>> labels.close()
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from assay.errors import InputError, Issue
from assay.sqlite_files import connect_read_only, open_sqlite, writable
from assay.verdict import Verdict

FILE_NAME = "labels.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS labels (
    item_id TEXT NOT NULL, criterion_id TEXT NOT NULL, rater TEXT NOT NULL,
    verdict TEXT, option TEXT, agrees INTEGER, note TEXT NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (item_id, criterion_id, rater));
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY, item_id TEXT NOT NULL, criterion_id TEXT NOT NULL,
    rater TEXT NOT NULL, verdict TEXT, option TEXT, agrees INTEGER, note TEXT NOT NULL,
    at REAL NOT NULL);
"""


@dataclass(frozen=True)
class Label:
    """A rater's current label of one criterion of one item."""

    item_id: str
    criterion_id: str
    rater: str
    verdict: str | None
    option: str | None
    agrees: bool | None
    note: str
    updated_at: float

    def as_verdict(self) -> Verdict:
        return Verdict(item_id=self.item_id, criterion_id=self.criterion_id, judge=self.rater,
                       decision=self.verdict, option=self.option, explanation=self.note)


class RunLabels:
    """The label store of one run directory; see the module docstring."""

    def __init__(self, path: Path, db: sqlite3.Connection):
        self.path = path
        self._db = db

    @classmethod
    def open(cls, run_dir: str | Path) -> RunLabels:
        """The run's label store (made if missing); one that cannot be written, e.g. in a
        read-only run directory, is opened to be read (:meth:`put` then fails)."""
        path = Path(run_dir) / FILE_NAME
        if path.is_file() and not writable(path):
            return cls(path, connect_read_only(path, what="label store"))
        db = open_sqlite(path, _SCHEMA, what="label store")
        return cls(path, db)

    @staticmethod
    def exists(run_dir: str | Path) -> bool:
        return (Path(run_dir) / FILE_NAME).is_file()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(
        self,
        item_id: str,
        criterion_id: str,
        rater: str,
        *,
        verdict: str | None = None,
        option: str | None = None,
        agrees: bool | None = None,
        note: str = "",
    ) -> Label:
        """Store ``rater``'s label (exactly one of ``verdict`` or ``option``) and its history."""
        if not rater.strip():
            raise InputError(Issue(str(self.path), None, "rater", "a label needs a rater name"))
        try:  # the Verdict model is the one place that says what a valid label is
            Verdict(item_id=item_id, criterion_id=criterion_id, judge=rater, decision=verdict,
                    option=option)
        except ValueError as exc:
            raise InputError(Issue(str(self.path), None, "label", _first_error(exc))) from None
        now = time.time()
        row = (item_id, criterion_id, rater, verdict, option,
               None if agrees is None else int(agrees), note)
        with self._db:  # one transaction: the label and its history line
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO labels VALUES (?,?,?,?,?,?,?,?)", (*row, now))
            self._db.execute("INSERT INTO history (item_id, criterion_id, rater, verdict, option, "
                             "agrees, note, at) VALUES (?,?,?,?,?,?,?,?)", (*row, now))
            self._db.execute("COMMIT")
        return Label(item_id, criterion_id, rater, verdict, option, agrees, note, now)

    def labels(self, item_id: str | None = None) -> list[Label]:
        sql = "SELECT * FROM labels"
        args: tuple = ()
        if item_id is not None:
            sql, args = sql + " WHERE item_id = ?", (item_id,)
        rows = self._db.execute(sql + " ORDER BY item_id, criterion_id, rater", args)
        return [Label(i, c, r, v, o, None if a is None else bool(a), n, t)
                for i, c, r, v, o, a, n, t in rows]

    def verdicts(self) -> list[Verdict]:
        """Every current label as a :class:`Verdict` (``judge`` = the rater)."""
        return [label.as_verdict() for label in self.labels()]

    def history_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM history").fetchone()[0]


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return str(first.get("msg", exc)).removeprefix("Value error, ")
    return str(exc)
