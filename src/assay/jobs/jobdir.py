"""A job directory: ``manifest.json`` (kind, config, its hash, status, totals) beside
``calls.sqlite``, with one writer at a time.

A job is any batch of model calls that is not grading: rubric generation, routing, CIA
verification, near-miss building, RAG metrics. Opening an existing directory resumes it; a
different config is refused, naming each setting that changed, exactly as ``assay grade
--resume`` does. A second process opening the same directory is refused while the first runs.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "gen"
    >>> job = JobDir.open(root, kind="generate", config={"model": "m", "seed": 0})
    >>> job.store.put_result("q1", {"n": 1}); job.finish(status="complete")["status"]
    'complete'
    >>> JobDir.open(root, kind="generate", config={"model": "m", "seed": 1})
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: ...gen: this job was made with another config (seed: 0 -> 1); use a new directory
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.jobs.store import CallStore
from assay.runs.lock import RunLock, RunLocked
from assay.runs.manifest import config_changes, config_hash, package_versions


class JobDir:
    """An open job directory holding its lock; close it with :meth:`finish` or :meth:`close`."""

    def __init__(self, path: Path, kind: str, config: dict[str, Any], store: CallStore,
                 lock: RunLock):
        self.path, self.kind, self.config, self.store = path, kind, config, store
        self._lock = lock
        self._started = time.time()

    @classmethod
    def open(cls, path: str | Path, *, kind: str, config: dict[str, Any],
             commit_after_s: float | None = None) -> JobDir:
        """Create or resume the job at ``path`` (see the module docstring); ``commit_after_s``:
        the store's write window (:class:`~assay.jobs.store.CallStore`; None: each row as it
        comes)."""
        path = Path(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot create the job directory ({exc.strerror})") from None
        try:  # the run directories' lock: one writer, released by the OS even after kill -9
            lock = RunLock(path).acquire()
        except RunLocked:
            raise ConfigError(f"{path}: another process is running this job") from None
        try:
            _check_manifest(path / "manifest.json", kind, config)
        except ConfigError:
            lock.release()
            raise
        job = cls(path, kind, config,
                  CallStore.open(path / "calls.sqlite", commit_after_s=commit_after_s), lock)
        if not (path / "manifest.json").exists():
            job._write_manifest("running")
        return job

    def finish(self, *, status: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the final manifest (status, totals, timing) and release the job."""
        manifest = self._write_manifest(status, extra)
        self.close()
        return manifest

    def close(self) -> None:
        self.store.close()
        self._lock.release()

    def _write_manifest(self, status: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        totals = self.store.totals()
        manifest = {
            "kind": self.kind,
            "status": status,
            "config": self.config,
            "config_hash": config_hash(self.config),
            "packages": package_versions(),
            "updated_at": time.time(),
            "wall_s": time.time() - self._started,
            "totals": vars(totals),
            "results": len(self.store.results()),
            **(extra or {}),
        }
        target = self.path / "manifest.json"
        tmp = target.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(target)
        return manifest


def _check_manifest(manifest: Path, kind: str, config: dict[str, Any]) -> None:
    """Refuse to resume a job of another kind or made with another config."""
    if not manifest.exists():
        return
    old = json.loads(manifest.read_text(encoding="utf-8"))
    if old.get("kind") != kind:
        raise ConfigError(f"{manifest.parent}: holds a {old.get('kind')!r} job, not {kind!r}")
    changes = config_changes(old.get("config"), config)
    if changes:
        raise ConfigError(f"{manifest.parent}: this job was made with another config "
                          f"({'; '.join(changes)}); use a new directory")
