"""Stream a JSONL file one line at a time, keeping line numbers, never loading it whole.

Each non-blank line yields ``(line_number, value)``; a line that is not valid JSON yields
``(line_number, Issue)`` instead, so a reader can report it and carry on with the next line.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n\\n{"a": 2,,}\\n')
    >>> [(n, str(v)) for n, v in iter_jsonl(path)]  # doctest: +NORMALIZE_WHITESPACE
    [(1, "{'a': 1}"),
     (3, 'x.jsonl:3: malformed JSON: unexpected character, expected a string key (column 9)')]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from assay.errors import Issue
from assay.limits import MAX_NESTING, MAX_RECORD_BYTES, too_deep

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def iter_jsonl(path: str | Path, *, source: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(line_number, parsed value or Issue)`` for every non-blank line of ``path``."""
    path = Path(path)
    name = source or path.name
    with path.open("rb") as handle:
        number = 0
        while raw := handle.readline(MAX_RECORD_BYTES + 1):
            number += 1
            if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                size = len(raw) + _skip_line(handle)
                yield number, Issue(name, number, None,
                                    f"line of {size / 2**20:.1f} MiB, over the limit of "
                                    f"{MAX_RECORD_BYTES / 2**20:.0f} MiB per record")
                continue
            if not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                yield number, Issue(name, number, None, f"malformed JSON: {_reason(exc)}")
                continue
            # each level of nesting opens with a bracket: a line with at most MAX_NESTING of
            # them cannot nest deeper, and needs no walk (most rows: a HealthBench row has 9-50)
            problem = (too_deep(value) if raw.count(b"{") + raw.count(b"[") > MAX_NESTING
                       else None)
            yield number, (Issue(name, number, None, problem) if problem else value)


def _skip_line(handle: Any) -> int:
    """Read past the rest of an over-long line; the number of bytes skipped."""
    skipped = 0
    while chunk := handle.readline(1 << 20):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def iter_models(
    path: str | Path, model: type[M], issues: list[Issue]
) -> Iterator[tuple[int, M]]:
    """``(line_number, model instance)`` for every valid line; each malformed or invalid line
    adds its :class:`Issue` (with a field path such as ``prompt[0].role``) to ``issues``.

    >>> import tempfile, pathlib
    >>> from pydantic import BaseModel
    >>> class Row(BaseModel):
    ...     n: int
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = path.write_text('{"n": 1}\\n{"n": "x"}\\n')
    >>> problems = []
    >>> [(line, row.n) for line, row in iter_models(path, Row, problems)], [str(p) for p in problems]
    ([(1, 1)], ['...rows.jsonl:2: n: expected a number, got "x"'])
    """
    from pydantic import ValidationError

    from assay.io.errors import issues_from

    source = str(path)
    for line, value in iter_jsonl(path, source=source):
        if isinstance(value, Issue):
            issues.append(value)
            continue
        try:
            yield line, model.model_validate(value)
        except ValidationError as exc:
            issues.extend(issues_from(exc, source=source, line=line))


def first_record(path: str | Path, limit: int = 20) -> Any | None:
    """The first parseable value among the first ``limit`` non-blank lines (format sniffing)."""
    for count, (_, value) in enumerate(iter_jsonl(path)):
        if not isinstance(value, Issue):
            return value
        if count + 1 >= limit:
            break
    return None


def write_jsonl(records: Iterable[Any], path: str | Path, *, ascii_json: bool = False) -> int:
    """Write one JSON value per line; ``ascii_json`` uses ``json.dumps`` defaults (HealthBench's
    own byte format), otherwise orjson. Returns the number of lines written."""
    count = 0
    with Path(path).open("wb") as handle:
        for record in records:
            if ascii_json:
                handle.write(json.dumps(record).encode("ascii"))
            else:
                handle.write(orjson.dumps(record))
            handle.write(b"\n")
            count += 1
    return count


def _reason(exc: orjson.JSONDecodeError) -> str:
    return f"{exc.msg} (column {exc.colno})"
