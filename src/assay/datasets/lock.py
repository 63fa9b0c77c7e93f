"""The data lock file: the SHA-256 of each official file as first fetched (trust on first use).

No hash of HealthBench's files is published. The first file that passes the content checks
(:mod:`assay.datasets.content`) is trusted, and its SHA-256 is recorded in ``assay-data.lock``
(in the current directory by default: commit it with your project, as you would a package
lock). From then on a fetch or import of another file under the same name is refused, naming
both hashes, unless told the file changed on purpose (``assay data fetch --update-lock``), and
``assay eval healthbench`` refuses a stored file that the lock does not trust. A collaborator
who clones the project gets the same files or a refusal.

Example:
    >>> import tempfile, pathlib
    >>> lock = DataLock(pathlib.Path(tempfile.mkdtemp()) / LOCK_NAME)
    >>> lock.trusted("healthbench/hard") is None
    True
    >>> lock.record("healthbench/hard", "ab" * 32, name="hard.jsonl", rows=1000)
    >>> DataLock(lock.path).trusted("healthbench/hard")["rows"]
    1000
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

LOCK_NAME = "assay-data.lock"
NOTE = ("SHA-256 of the official data files this project uses, recorded when each was first "
        "fetched and checked (trust on first use). Commit this file; assay data fetch "
        "--update-lock replaces an entry.")


def lock_path(lock: str | Path | None = None) -> Path:
    """``lock``, else ``$ASSAY_DATA_LOCK``, else ``assay-data.lock`` in the current directory."""
    if lock is not None:
        return Path(lock)
    return Path(os.environ.get("ASSAY_DATA_LOCK") or LOCK_NAME)


class DataLock:
    """A lock file's entries, by ``DATASET/SUBSET``; written whole or not at all."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.entries = dict(data["files"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{path}: not a readable data lock file ({exc}); restore it "
                                  "from version control, or move it away to trust anew") from None

    def trusted(self, key: str) -> dict[str, Any] | None:
        """The recorded entry of ``key`` (``sha256``, ``name``, ``rows``, ``recorded``)."""
        return self.entries.get(key)

    def record(self, key: str, sha256: str, *, name: str, rows: int) -> None:
        self.entries[key] = {"name": name, "sha256": sha256, "rows": rows,
                             "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        text = json.dumps({"note": NOTE, "files": dict(sorted(self.entries.items()))}, indent=2)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(self.path)
