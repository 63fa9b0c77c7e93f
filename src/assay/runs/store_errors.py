"""Errors of the run store that tell the user which file is at fault and what to do.

Example:
    >>> str(damaged("runs/r1/run.sqlite", "table 'calls' is missing")).split(";")[0]
    "runs/r1/run.sqlite: the run store is damaged (table 'calls' is missing)"
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError


class StoreError(ConfigError):
    """A run store that cannot be read (damaged) or written (e.g. the disk is full)."""


def damaged(path: str | Path, detail: str) -> StoreError:
    return StoreError(
        f"{path}: the run store is damaged ({detail}); it can be neither resumed nor scored. "
        "Restore run.sqlite from a copy, or start a new run with another --run-dir (with "
        "--cache, replies already paid for are reused)")


def cannot_resume(run_dir: str | Path, problem: str) -> StoreError:
    return StoreError(
        f"{run_dir}: cannot resume this run: {problem}, and every call it made would be lost. "
        "Nothing was sent. Make it writable again, or copy the run directory to a writable place "
        f"and resume the copy; as it is, it can still be scored and reported (assay score "
        f"{run_dir})")


def cannot_create(path: str | Path, error: BaseException) -> StoreError:
    return StoreError(
        f"{path}: cannot create the run store ({_cause(error)}). Nothing of it was kept and no "
        "call was made; free some space (or choose another --run-dir), then run the same "
        "command again")


def _cause(error: BaseException) -> str:
    text = str(error).lower()
    if "full" in text or getattr(error, "errno", None) == 28:  # ENOSPC
        return "the disk is full"
    if "i/o" in text or getattr(error, "errno", None) == 27:  # EFBIG
        return f"{error}: the disk may be full or a file-size limit reached"
    return f"{type(error).__name__}: {error}"


def unwritable(path: str | Path, error: BaseException, unsaved: int) -> StoreError:
    cause = _cause(error)
    lost = f"; {unsaved} finished calls could not be saved and will be made again" if unsaved else ""
    return StoreError(
        f"{path}: cannot write the run store ({cause}). Every call saved before is kept{lost}. "
        f"Free some space, then resume: assay grade --resume {Path(path).parent}")
