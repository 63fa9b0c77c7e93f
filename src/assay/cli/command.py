"""The shape every reporting command shares: compute, write ``--json``, print the tables.

:func:`report` runs a command's compute function; an Assay error, an unreadable file or a bad
value (``AssayError``, ``OSError``, ``ValueError``) prints its located issues and exits with
code 1 (or the error's own ``exit_code``), before anything is printed or written. Then it writes
the ``--json`` file and prints what the command shows (tables, and note lines): the file is
written before the first line, so a closed stdout (``assay ... | head``) never loses it. Heavy
imports stay inside the compute and show functions, so ``assay --help`` stays fast.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> out = Path(tempfile.mkdtemp()) / "result.json"
    >>> result = report(lambda: {"mean": 0.5}, lambda r: [f"mean {r['mean']}"], json_out=out,
    ...                 dump=dump_json)
    mean 0.5
    >>> out.read_text()
    '{\\n  "mean": 0.5\\n}'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ERRORS = (OSError, ValueError)  # with AssayError (imported lazily): exit 1 with the issues


class Note(str):
    """A line for stderr (a remark on the result, not the result)."""


def report(compute: Callable[[], T], show: Callable[[T], Iterable[Any]], *,
           json_out: Path | None = None, dump: Callable[[T], str | bytes] | None = None) -> T:
    """``compute()``, then write ``dump(result)`` to ``json_out`` and print ``show(result)``.

    ``show`` yields rich renderables (tables) and text lines for stdout, :class:`Note` lines for
    stderr, in the order they print. Text is printed as data (no markup, no highlighting). A
    result of None (nothing to report) prints and writes nothing.
    """
    from assay.cli.output import fail
    from assay.errors import AssayError

    try:
        result = compute()
    except (AssayError, *ERRORS) as exc:
        fail(exc, getattr(exc, "exit_code", 1))
    if result is None:
        return result
    if json_out is not None and dump is not None:
        data = dump(result)
        try:
            if isinstance(data, bytes):
                json_out.write_bytes(data)
            else:
                json_out.write_text(data, encoding="utf-8")
        except OSError as exc:
            from assay.errors import InputError, Issue

            fail(InputError(Issue(str(json_out), None, "--json",
                                  f"cannot write: {exc.strerror or exc}")))
    print_all(show(result))
    return result


def print_all(renderables: Iterable[Any]) -> None:
    """Tables and lines on stdout, :class:`Note` lines on stderr (see :func:`report`)."""
    from assay.cli.output import stderr, stdout

    out = err = None
    for renderable in renderables:
        if isinstance(renderable, Note):
            err = err or stderr()
            err.print(str(renderable), highlight=False, markup=False)
        elif isinstance(renderable, str):
            out = out or stdout()
            out.print(renderable, highlight=False, markup=False)
        else:
            out = out or stdout()
            out.print(renderable)


def dump_model(result: Any, *, newline: bool = False) -> str:
    """A pydantic model as indented JSON (ending with a newline if asked)."""
    return result.model_dump_json(indent=2) + ("\n" if newline else "")


def dump_json(data: Any, *, newline: bool = False) -> str:
    """Plain data (dicts, lists, numbers, strings) as indented JSON (ending with a newline if
    asked)."""
    import json

    return json.dumps(data, indent=2) + ("\n" if newline else "")


def dump_data(data: Any) -> bytes:
    """Plain data holding pydantic models, as indented JSON (UTF-8)."""
    import orjson
    from pydantic import BaseModel

    def default(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        raise TypeError(type(value).__name__)

    return orjson.dumps(data, default=default, option=orjson.OPT_INDENT_2)
