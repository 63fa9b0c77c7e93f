"""A run's true status, read from its store: what it planned, what it holds, who is writing it.

One function decides whether a run is ``complete``, for ``assay grade`` at the end of a session
(:func:`settle`) and for everything that reads a run later (:func:`run_status`: ``assay score``,
``report``, ``agreement``, ``compare`` and the Python API). A run is complete only when

- its last session ended ``complete`` (not stopped at the budget, interrupted or failed),
- no session is writing it now (its ``run.lock`` is held: *running*) and none was cut off
  (rows written after the last session that recorded its end: *interrupted*, e.g. ``kill -9``),
- its input was read whole: no record was skipped (a malformed line, an invalid field, an item
  without a response, a HealthBench row without an ideal completion under ``--ideal``) and every
  item of the input reached the store,
- every stored item has a verdict from every judge on every criterion of its rubric and no call
  in error: the verdicts are counted against the rubric, so rows deleted by hand are found.

Anything else is ``incomplete`` (or ``budget``, ``interrupted``, ``error``, ``running``), with
the reasons in words.

Example:
    >>> cover = Coverage(items=4, items_lacking=1, expected_verdicts=16, verdicts=12,
    ...                  failed_calls=4, commonest_error="malformed: not JSON")
    >>> status, reasons = settle("complete", cover, skipped=0, items_in_input=4)
    >>> status, reasons[0]
    ('incomplete', '1 of 4 items lack verdicts (4 of 16 missing; 4 calls failed, most often malformed: not JSON)')
    >>> settle("complete", Coverage(items=4, expected_verdicts=16, verdicts=16), skipped=2,
    ...        items_in_input=6)
    ('incomplete', ('2 input records skipped (not graded)',))
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assay.errors import Issue
from assay.runs.store import RunStore

STATUSES = ("complete", "incomplete", "budget", "interrupted", "error", "running")
ENDED_BY_ITSELF = ("budget", "interrupted", "error")  # a session's own status that stands
_CLOCK_SLACK_S = 0.05  # a session's end computed from its wall time may read a little early


@dataclass(frozen=True)
class Coverage:
    """What a store holds against what its items planned (see :func:`coverage`)."""

    items: int = 0
    """Items stored (registered before their first call)."""
    items_lacking: int = 0
    """Stored items without every verdict: unfinished, a call in error, or verdicts missing."""
    expected_verdicts: int = 0
    """Criteria x judges, summed over the stored items."""
    verdicts: int = 0
    """Verdicts stored from the run's judges."""
    failed_calls: int = 0
    commonest_error: str | None = None

    @property
    def whole(self) -> bool:
        return self.items_lacking == 0


@dataclass(frozen=True)
class RunStatus:
    """The status of a stored run and why (see the module doc); ``complete`` is the only one
    whose scores cover everything the run set out to grade."""

    run: str
    status: str
    reasons: tuple[str, ...]
    recorded: str | None
    """The status the last finished session wrote (``manifest.json``), None if none did."""
    items_in_input: int | None
    skipped_input: int
    coverage: Coverage
    writer: str | None = None
    """The pid of the process writing the run now, when one is."""

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def describe(self) -> str:
        """One line: the status and why.

        >>> RunStatus("runs/a", "incomplete", ("2 input records skipped (not graded)",),
        ...           "incomplete", 6, 2, Coverage(items=4)).describe()
        'runs/a: incomplete: 2 input records skipped (not graded)'
        """
        why = ": " + "; ".join(self.reasons) if self.reasons else ""
        return f"{self.run}: {self.status}{why}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["reasons"] = list(self.reasons)
        return data


def coverage(store: RunStore) -> Coverage:
    """Count the verdicts each stored item holds against its rubric's criteria x the run's
    judges, with its unfinished state and failed calls.

    The totals are compared first (a few aggregate queries); only when they disagree is each
    item counted. Totals agree on a damaged store only if rows were both deleted and added by
    hand in equal numbers, which the engine never writes (a verdict outside its item's
    rubric x judges).
    """
    store.commit()  # held rows count: this session's last calls
    judges = [j["id"] for j in store.config().get("judges", []) if isinstance(j, dict)]
    sizes = dict(store.db.execute(  # criteria per rubric, without parsing each rubric
        "SELECT hash, json_array_length(json, '$.criteria') FROM rubrics"))
    items = done = expected = 0
    known = bool(judges)
    for digest, n_items, n_done in store.db.execute(
            "SELECT rubric_hash, COUNT(*), SUM(done) FROM items GROUP BY rubric_hash"):
        items, done = items + n_items, done + n_done
        expected += (sizes.get(digest) or 0) * len(judges) * n_items
        known = known and bool(sizes.get(digest))  # a rubric row gone is damage
    (found,) = store.db.execute("SELECT COUNT(*) FROM verdicts").fetchone()
    (failed,) = store.db.execute("SELECT COUNT(*) FROM calls WHERE status = 'error'").fetchone()
    if known and done == items and not failed and found == expected:
        return Coverage(items, 0, expected, found)
    row = store.db.execute("SELECT kind, message FROM errors GROUP BY kind, message "
                           "ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
    return Coverage(items, _items_lacking(store, judges, sizes), expected,
                    _verdicts_of(store, judges), failed, f"{row[0]}: {row[1]}" if row else None)


def _items_lacking(store: RunStore, judges: list[str], sizes: Mapping[str, int]) -> int:
    """Stored items that are unfinished, have a call in error, or lack a verdict."""
    rows = store.db.execute(
        "SELECT i.rubric_hash, i.done, COUNT(v.item_id), "
        "i.id IN (SELECT item_id FROM calls WHERE status = 'error') "
        "FROM items i LEFT JOIN verdicts v ON v.item_id = i.id"
        + (f" AND v.judge IN ({','.join('?' * len(judges))})" if judges else " AND 0")
        + " GROUP BY i.idx", judges)
    lacking = 0
    for digest, done, n_verdicts, failed in rows:
        wanted = (sizes.get(digest) or 0) * len(judges)
        lacking += bool(not wanted or not done or failed or n_verdicts < wanted)
    return lacking


def _verdicts_of(store: RunStore, judges: list[str]) -> int:
    if not judges:
        return 0
    (n,) = store.db.execute(f"SELECT COUNT(*) FROM verdicts WHERE judge IN "
                            f"({','.join('?' * len(judges))})", judges).fetchone()
    return n


def settle(recorded: str, cover: Coverage, *, skipped: int,
           items_in_input: int | None) -> tuple[str, tuple[str, ...]]:
    """The status of a run whose session ended as ``recorded``, with what it holds
    (``cover``), the input records it ``skipped`` and the items its input held; and the
    reasons it is not complete (see the module doc)."""
    reasons = []
    if cover.items_lacking:
        missing = cover.expected_verdicts - cover.verdicts
        failed = (f"; {cover.failed_calls} calls failed"
                  + (f", most often {cover.commonest_error}" if cover.commonest_error else "")
                  if cover.failed_calls else "")
        reasons.append(f"{cover.items_lacking} of {cover.items} items lack verdicts "
                       f"({missing} of {cover.expected_verdicts} missing{failed})")
    if skipped:
        reasons.append(f"{skipped} input record{'s' if skipped != 1 else ''} skipped (not graded)")
    elif items_in_input is not None and cover.items < items_in_input:
        reasons.append(f"{items_in_input - cover.items} of the input's {items_in_input} items "
                       "never reached the store")
    if recorded in ENDED_BY_ITSELF:
        return recorded, tuple(reasons)
    if recorded != "complete":
        return "incomplete", tuple(reasons) or (f"its last session recorded {recorded!r}",)
    return ("incomplete" if reasons else "complete"), tuple(reasons)


def skipped_records(issues: Iterable[Issue]) -> int:
    """How many input records ``issues`` skipped: a record with several bad fields is one.

    >>> skipped_records([Issue("a.jsonl", 2, "id", "missing"),
    ...                  Issue("a.jsonl", 2, "prompt", "missing"),
    ...                  Issue("a.jsonl", None, "item[q3].response", "no response to grade")])
    2
    """
    return len({(i.source, i.line) if i.line is not None else (i.source, i.field, i.message)
                for i in issues})


def run_status(run: str | Path, *, store: RunStore | None = None) -> RunStatus:
    """The true status of the run at ``run`` (a run directory or its ``run.sqlite``); reads
    ``store`` when the caller has that run's store open already.

    Example::

        status = run_status("runs/20250601-120000-ab12cd")
        if not status.complete:
            print(status.describe())  # runs/...: incomplete: 2 of 60 items lack verdicts (...)
    """
    from assay.runs.lock import writer_of

    path = Path(run)
    run_dir = path.parent if path.is_file() else path
    opened = store or RunStore.open(path)
    try:
        cover = coverage(opened)
        sessions = json.loads(opened.meta("sessions") or "[]")
        latest = _latest_write(opened)
    finally:
        if store is None:
            opened.close()
    writer = writer_of(run_dir)
    last: Mapping[str, Any] = sessions[-1] if sessions else {}
    recorded = last.get("status")
    items_in_input = last.get("items_in_input")
    skipped = int(last.get("skipped_input", 0))
    status, reasons = settle(recorded or "interrupted", cover, skipped=skipped,
                             items_in_input=items_in_input)
    if writer is not None:
        status = "running"
        reasons = (f"an assay process (pid {writer}) is writing it now", *reasons)
    elif not last or (latest is not None and latest > _ended_at(last) + _CLOCK_SLACK_S):
        status = "interrupted"
        cut_off = ("a session was cut off before it ended (killed or crashed): "
                   f"assay grade --resume {run_dir} continues it")
        reasons = (cut_off, *reasons)
    elif status in ENDED_BY_ITSELF:
        reasons = (_ENDED_WITH[status].format(run=run_dir), *reasons)
    return RunStatus(str(run_dir), status, reasons, recorded, items_in_input, skipped, cover,
                     writer)


_ENDED_WITH = {
    "budget": "stopped at its --budget: assay grade --resume {run} --budget USD continues it",
    "interrupted": "its last session was interrupted: assay grade --resume {run} continues it",
    "error": "its last session could not write the store: assay grade --resume {run} continues it",
}


def _latest_write(store: RunStore) -> float | None:
    """When the store was last written by a session (a call or an item recorded)."""
    (latest,) = store.db.execute(
        "SELECT MAX(t) FROM (SELECT MAX(finished_at) AS t FROM calls UNION ALL "
        "SELECT MAX(started_at) FROM items UNION ALL SELECT MAX(finished_at) FROM items)"
    ).fetchone()
    return latest


def _ended_at(session: Mapping[str, Any]) -> float:
    if "ended_at" in session:
        return float(session["ended_at"])
    return float(session.get("started_at", 0.0)) + float(session.get("wall_s", 0.0))
