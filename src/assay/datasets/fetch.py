"""Downloading an official file into the data directory, checked, and trusted on first use.

The data directory is ``$ASSAY_DATA``, else ``$XDG_DATA_HOME/assay``, else
``~/.local/share/assay``. A file is stored as ``DIR/DATASET/NAME`` with ``NAME.sha256`` beside it
(the hash it was stored with). The download goes to a temporary file, hashed as it arrives; it
replaces the target only when it is complete (its ``Content-Length``), holds what the official
file holds (:mod:`assay.datasets.content`: rows, unique ids, schema) and its SHA-256 is the one
expected: the user's ``--sha256``, Assay's pin, or the one the project's lock file recorded when
it first fetched the file (:mod:`assay.datasets.lock`; the first good file is recorded there).
An interrupted or corrupted download is retried (up to ``attempts``), then refused and removed;
a file that is not the named one is refused at once.

Example (a local file server stands in for the publisher)::

    path = fetch("healthbench", "hard", url="http://127.0.0.1:8000/hard.jsonl",
                 data_root="data")
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from assay.datasets.content import check_content
from assay.datasets.lock import DataLock, lock_path
from assay.datasets.registry import DataFile, data_file
from assay.errors import AssayError, ConfigError

CHUNK = 1 << 20
TIMEOUT_S = 60.0
MAX_BYTES = 2 * 1024**3  # no official file is near this; a runaway server is cut off


def data_dir(data_root: str | Path | None = None) -> Path:
    """Where fetched files live (see the module docstring)."""
    if data_root is not None:
        return Path(data_root)
    if os.environ.get("ASSAY_DATA"):
        return Path(os.environ["ASSAY_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "assay"


def local_copy(dataset: str, subset: str = "all", *, data_root: str | Path | None = None,
               lock: str | Path | None = None) -> Path:
    """The checked local copy of a file; if there is none, an error naming the fetch command.
    A copy changed since it was stored, or not the one the lock file trusts, is refused."""
    entry = data_file(dataset, subset)
    path = data_dir(data_root) / dataset / entry.name
    pin = path.with_name(path.name + ".sha256")
    if not path.is_file() or not pin.is_file():
        raise ConfigError(f"{dataset} ({subset}) is not in {data_dir(data_root)}: run "
                          f"assay data fetch {dataset}")
    digest = _sha256_of(path)
    if digest != pin.read_text(encoding="utf-8").split()[0]:
        raise ConfigError(f"{path}: its content changed since it was fetched (SHA-256 "
                          f"mismatch); fetch it again")
    locked = DataLock(lock_path(lock))
    trusted = locked.trusted(f"{dataset}/{subset}")
    if trusted is not None and trusted["sha256"] != digest:
        raise ConfigError(f"{path}: not the file {locked.path} trusts for {dataset} ({subset}) "
                          f"(SHA-256 {digest[:12]}..., the lock {trusted['sha256'][:12]}...); "
                          f"fetch it again, or with --update-lock if it changed on purpose")
    return path


def fetch(dataset: str, subset: str = "all", *, sha256: str | None = None, url: str | None = None,
          source: str | Path | None = None, data_root: str | Path | None = None,
          attempts: int = 3, lock: str | Path | None = None, update_lock: bool = False) -> Path:
    """Download (or copy ``source``) into the data directory, check it, and return its path.

    ``sha256``: the hash expected (e.g. to check a mirror against your own copy); ``url``: a
    mirror of the official URL; ``source``: a local copy to import; ``lock``: the lock file
    (default :func:`~assay.datasets.lock.lock_path`); ``update_lock``: trust a file whose hash
    differs from the lock's (the publisher changed it on purpose). A file already stored and
    matching is not fetched again.
    """
    entry = data_file(dataset, subset)
    key, what = f"{dataset}/{subset}", f"{dataset} ({subset})"
    locked = DataLock(lock_path(lock))
    trusted = None if update_lock else locked.trusted(key)
    expected = _given_hash(entry, sha256) or entry.sha256 or (trusted or {}).get("sha256")
    target = data_dir(data_root) / dataset / entry.name
    if (expected is not None and target.is_file() and _sha256_of(target) == expected
            and _size_ok(entry, target)):
        _write_pin(target, expected)
        if locked.trusted(key) is None:
            locked.record(key, expected, name=entry.name, rows=check_content(target, entry, what))
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    problem = ""
    for _ in range(max(1, attempts)):
        tmp = Path(tempfile.mkstemp(dir=target.parent, prefix=f".{entry.name}.", suffix=".part")[1])
        try:
            digest, size = (_copy(Path(source), tmp) if source is not None
                            else _download(url or entry.url, tmp))
            if entry.size is not None and size != entry.size:
                problem = f"{size:,} bytes, expected {entry.size:,}"
            elif expected is not None and digest != expected:
                problem = _mismatch(digest, sha256, trusted, locked.path)
            else:
                rows = check_content(tmp, entry, what)  # not the named file: refused at once
                os.replace(tmp, target)
                _write_pin(target, digest)
                if locked.trusted(key) is None or update_lock:
                    locked.record(key, digest, name=entry.name, rows=rows)
                return target
        except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
            problem = f"download failed ({getattr(exc, 'reason', exc)})"
        finally:
            tmp.unlink(missing_ok=True)
        if source is not None:
            break  # a local file does not change by copying it again
    raise AssayError(f"{what}: refused, nothing stored: {problem}")


def _mismatch(digest: str, given: str | None, trusted: dict | None, lock: Path) -> str:
    """Why a hash is refused, without inviting its paste-back as the expected one."""
    if given is not None:
        return f"its SHA-256 is not the --sha256 given (it begins {digest[:12]})"
    assert trusted is not None
    return (f"its SHA-256 ({digest[:12]}...) is not the one {lock} trusts for this file "
            f"({trusted['sha256'][:12]}..., recorded {trusted.get('recorded', '?')}): it changed "
            "since this project first fetched it; if the publisher changed it on purpose, fetch "
            "it again with --update-lock")


def _given_hash(entry: DataFile, sha256: str | None) -> str | None:
    if sha256 is None:
        return None
    given = sha256.strip().lower()
    if len(given) != 64 or any(c not in "0123456789abcdef" for c in given):
        raise ConfigError(f"--sha256 {sha256!r}: expected 64 hexadecimal digits")
    if entry.sha256 is not None and given != entry.sha256:
        raise ConfigError(f"--sha256 differs from Assay's pin for {entry.name} ({entry.sha256})")
    return given


def _download(url: str, tmp: Path) -> tuple[str, int]:
    if not url.startswith(("https://", "http://")):
        raise ConfigError(f"{url}: only http(s) URLs can be fetched")
    digest, size = hashlib.sha256(), 0
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, tmp.open("wb") as out:
        while block := response.read(CHUNK):
            size += len(block)
            if size > MAX_BYTES:
                raise OSError(f"more than {MAX_BYTES:,} bytes")
            digest.update(block)
            out.write(block)
        declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) != size:
        raise OSError(f"truncated: {size:,} of {int(declared):,} bytes")
    return digest.hexdigest(), size


def _copy(source: Path, tmp: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with source.open("rb") as src, tmp.open("wb") as out:
        while block := src.read(CHUNK):
            size += len(block)
            digest.update(block)
            out.write(block)
    return digest.hexdigest(), size


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _size_ok(entry: DataFile, path: Path) -> bool:
    return entry.size is None or path.stat().st_size == entry.size


def _write_pin(target: Path, digest: str) -> None:
    target.with_name(target.name + ".sha256").write_text(f"{digest}  {target.name}\n",
                                                        encoding="utf-8")
