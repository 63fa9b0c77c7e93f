"""The batches a job submitted (``assay sample --executor batch``), kept in its call store.

Example:
    >>> import tempfile, pathlib
    >>> store = CallStore.open(pathlib.Path(tempfile.mkdtemp()) / "calls.sqlite")
    >>> JobBatchLedger(store).submitted("model-a", "msgbatch_1", ["k1"])
    >>> JobBatchLedger(store).batches_of("model-a")
    {'k1': 'msgbatch_1'}
"""

from __future__ import annotations

from typing import Any

from assay.jobs.store import CallStore
from assay.judges.batch_judge import RecordLedger

META_KEY = "batches"


class JobBatchLedger(RecordLedger):
    """A :class:`~assay.judges.batch_judge.BatchLedger` in a job's call store (each write is
    committed as it is made: the store runs in autocommit mode)."""

    def __init__(self, store: CallStore):
        self.store = store

    def records(self) -> list[dict[str, Any]]:
        return list(self.store.meta(META_KEY, []))

    def save(self, records: list[dict[str, Any]]) -> None:
        self.store.set_meta(META_KEY, records)
