"""Checks a run makes before its first call: output paths and rubrics.

An output path that is a directory or sits in a read-only place, or items without a rubric
would otherwise surface after every call was made (and paid for). Each problem is an
:class:`~assay.errors.Issue` naming the option or the file. (A bad value of an option, such as
an unknown ``--formula`` or a negative ``--seed``, is refused when its
:class:`~assay.runs.options.RunOptions` is made.)

Example:
    >>> from assay.runs.options import RunOptions
    >>> try:
    ...     check_options(RunOptions(cache_path="/"))
    ... except InputError as exc:
    ...     print(exc)
    /: --cache: is a directory; give a file name
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue

MAX_LISTED = 10  # items named in a "no rubric" error; the rest are counted


def check_options(options: Any) -> None:
    """The output paths of a :class:`~assay.runs.options.RunOptions` (``--cache``,
    ``--run-dir``) that the run could not write; raises one :class:`InputError` listing all.
    With ``--executor ray``, Ray's token set-up and head too (a ConfigError, before Ray is
    imported)."""
    if getattr(options, "executor", None) == "ray":
        from assay.distributed.ray_auth import check_ray_setup

        check_ray_setup(options.ray_address)
    issues: list[Issue] = []
    for field in ("cache_path", "run_dir"):
        path = getattr(options, field)
        if path is not None:
            name = options.flag(field)
            issues.extend(output_path_issues(path, name, directory=field == "run_dir"))
    if issues:
        raise InputError(issues)


def output_path_issues(path: str | Path, field: str, *, directory: bool = False) -> list[Issue]:
    """Why ``path`` cannot be written (as a file, or as a directory to create files in).

    The path need not exist yet; the nearest existing folder above it must be writable. A
    probe file is created and removed there, because permission bits do not tell (root, ACLs,
    read-only mounts).
    """
    path = Path(path)
    if path.is_dir() and not directory:
        return [Issue(str(path), None, field, "is a directory; give a file name")]
    if path.exists() and directory and not path.is_dir():
        return [Issue(str(path), None, field, "is a file; give a directory")]
    folder = path if directory else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return [Issue(str(path), None, field, f"{folder} is a file, not a folder")]
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
        if path.is_file():
            with path.open("ab"):
                pass
    except OSError as exc:
        return [Issue(str(path), None, field, f"cannot write there ({exc.strerror or exc})")]
    return []


def check_rubrics(source: Any, rubric: Any) -> None:
    """Without a run-wide rubric, every item must carry its own: list those that do not,
    before the run is created. HealthBench examples always do; an item JSONL is scanned as raw
    records (no validation: that happens while grading), other files item by item."""
    if rubric is not None:
        return
    where = str(source.path) if getattr(source, "path", None) is not None else None
    missing: list[str] = []
    count = 0
    for item_id, has_rubric in _rubric_presence(source):
        if not has_rubric:
            count += 1
            if len(missing) < MAX_LISTED:
                missing.append(str(item_id))
    if count:
        more = f" and {count - len(missing)} more" if count > len(missing) else ""
        raise InputError(Issue(where, None, "--rubric",
                               f"{count} items have no rubric of their own ({', '.join(missing)}"
                               f"{more}) and no --rubric was given"))


def _rubric_presence(source: Any):
    """(item id, whether it has a rubric) for every item of ``source``."""
    if source.items is not None:
        return ((item.id, item.rubric is not None) for item in source.items)
    from assay.io import detect_format, iter_items
    from assay.io.jsonl import iter_jsonl

    try:
        file_format = detect_format(source.path)
    except InputError:
        return iter(())  # reported while grading, with the rest of the file's problems
    if file_format.kind == "healthbench":
        return iter(())
    if file_format.syntax == "jsonl":
        return ((record.get("id"), bool(record.get("rubric")))
                for _, record in iter_jsonl(source.path) if isinstance(record, dict))
    return ((item.id, item.rubric is not None) for item in iter_items(source.path, issues=[]))
