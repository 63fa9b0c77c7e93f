"""What the commands that read runs (``score``, ``report``, ``agreement``, ``compare``) say of
a run that is not complete, and ``--require-complete``, which makes that an error for CI.

Each reads :func:`assay.runs.status.run_status` of every run directory it was given: a run
that is incomplete, interrupted (killed), stopped at its budget or still being written is
named first, with why, before any figure; with ``--require-complete`` the command prints
that as an error, writes nothing and exits with :data:`EXIT_NOT_COMPLETE` (4, the code of an
incomplete ``assay grade``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError

if TYPE_CHECKING:
    from assay.runs.status import RunStatus

EXIT_NOT_COMPLETE = 4  # README "Run safety": the exit code of an incomplete run
REQUIRE_COMPLETE_HELP = ("Refuse a run that is not complete (incomplete, interrupted, stopped "
                         "at its budget or still being written): exit 4, nothing written (CI).")


class RunNotComplete(AssayError):
    """A run given to a command with ``--require-complete`` is not complete."""

    exit_code = EXIT_NOT_COMPLETE

    def __init__(self, statuses: list[RunStatus]):
        self.statuses = statuses
        super().__init__("\n".join(f"{s.describe()} (--require-complete refuses a run that is "
                                   "not complete)" for s in statuses))


def is_run(path: str | Path) -> bool:
    """A run directory (or its ``run.sqlite``), as opposed to a verdict file."""
    path = Path(path)
    return (path / "run.sqlite").is_file() or (path.name == "run.sqlite" and path.is_file())


def statuses_of(paths: Iterable[str | Path | None], *, require_complete: bool) -> list[RunStatus]:
    """The status of each run directory among ``paths`` (verdict files and None are left
    out); :class:`RunNotComplete` if one is not complete and ``require_complete``."""
    from assay.runs.status import run_status

    statuses = [run_status(p) for p in paths if p is not None and is_run(p)]
    if require_complete:
        refused = [s for s in statuses if not s.complete]
        if refused:
            raise RunNotComplete(refused)
    return statuses


def warnings(statuses: Iterable[RunStatus]) -> Iterator[str]:
    """One line per run that is not complete, to print before any figure."""
    for status in statuses:
        if not status.complete:
            yield (f"warning: run {status.describe()}; the figures below cover only what it "
                   "holds (--require-complete makes this an error)")


def with_status(data: dict[str, Any], statuses: list[RunStatus],
                names: Mapping[str, str | Path | None] | None = None) -> dict[str, Any]:
    """``data`` (a command's JSON) with ``run_status`` first: the status of the one run, or
    with ``names``, of each named source (None for a verdict file or a source not given)."""
    by_run = {s.run: s.to_dict() for s in statuses}
    status: Any
    if names is None:
        status = next(iter(by_run.values()), None)
    else:
        status = {name: None if path is None else by_run.get(str(_run_dir(path)))
                  for name, path in names.items()}
    return {"run_status": status, **data}


def dump_with_status(model: Any, statuses: list[RunStatus],
                     names: Mapping[str, str | Path | None],
                     extra: Mapping[str, Any] | None = None) -> str:
    """A command's pydantic result as indented JSON, with ``run_status`` first (see
    :func:`with_status`) and ``extra`` keys last."""
    import json

    data = json.loads(model.model_dump_json())  # pydantic's JSON: an undefined float is null
    data.update(extra or {})
    return json.dumps(with_status(data, statuses, names), indent=2)


def _run_dir(path: str | Path) -> Path:
    path = Path(path)
    return path.parent if path.name == "run.sqlite" else path
