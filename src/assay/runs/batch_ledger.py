"""The batches a run submitted (``--executor batch``), kept in its store.

Each batch is written to the store's ``meta`` table under ``batches`` (judge, provider batch
id, the ``custom_id`` of every request in it, when) and committed at once, as soon as the
provider has answered with its id: a run killed while the batch is pending finds it on
``--resume`` and waits for it rather than submitting its requests again.

Example:
    >>> import tempfile, pathlib
    >>> store = RunStore.create(pathlib.Path(tempfile.mkdtemp()) / "run.sqlite", {})
    >>> ledger = RunBatchLedger(store)
    >>> ledger.submitted("judge-a", "batch_1", ["k1", "k2"])
    >>> RunBatchLedger(store).batches_of("judge-a")
    {'k1': 'batch_1', 'k2': 'batch_1'}
    >>> store.close()
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.judges.batch_judge import RecordLedger
from assay.runs.options import Executor
from assay.runs.store import RunStore

META_KEY = "batches"


class RunBatchLedger(RecordLedger):
    """A :class:`~assay.judges.batch_judge.BatchLedger` in a run's store."""

    def __init__(self, store: RunStore):
        self.store = store

    def records(self) -> list[dict[str, Any]]:
        """Every batch submitted for the run, oldest first."""
        return list(json.loads(self.store.meta(META_KEY) or "[]"))

    def save(self, records: list[dict[str, Any]]) -> None:
        self.store.set_meta(META_KEY, records)
        self.store.commit()  # now, with the calls finished so far: it must survive a kill -9


def executor_of(run: str | Path | None) -> Executor:
    """The executor a run continues with when none is given: ``batch`` if it submitted
    batches (a resume waits for them, never pays for their requests twice), else ``local``."""
    if run is None:
        return "local"
    store = RunStore.open(run)
    try:
        return "batch" if RunBatchLedger(store).records() else "local"
    finally:
        store.close()
