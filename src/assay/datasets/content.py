"""What an official file must hold to be the file it is named: checked on every fetch and import.

No hash of HealthBench's files is published, so a file's name alone proves nothing. Before a
file is stored it must hold what the official one is known to hold (simple-evals reads them;
the counts are HealthBench's own): ``all`` 5,000 rows, ``hard`` 1,000, ``consensus`` 3,671,
``meta-eval`` 29,511; each row of the example files a HealthBench row (``prompt``, ``prompt_id``,
``rubrics``, ``example_tags``; every problem named with its line and field), no ``prompt_id``
twice, and in ``consensus`` only consensus criteria (each rubric entry tagged ``level:cluster``
with its ``cluster:`` tag). A file that falls short is refused, whatever its hash.

Example:
    >>> import tempfile, pathlib
    >>> from assay.datasets.registry import data_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "copy.jsonl"
    >>> _ = path.write_text('{"prompt_id": "p1", "prompt": [{"content": "q", "role": "user"}], '
    ...                     '"rubrics": [], "example_tags": []}\\n')
    >>> check_content(path, data_file("healthbench", "hard"), "healthbench (hard)")
    Traceback (most recent call last):
    ...
    assay.errors.InputError: healthbench (hard): not the official hard file: it holds 1 row, the official one 1,000
    .../copy.jsonl:1: rubrics: must not be empty
"""

from __future__ import annotations

from pathlib import Path

from assay.datasets.registry import DataFile
from assay.errors import InputError, Issue

SHOWN = 20  # problems named at most (a wrong file has one on every line)


def check_content(path: Path, entry: DataFile, what: str) -> int:
    """The rows of ``path`` if it holds what ``entry``'s official file holds; else an
    :class:`InputError` naming ``what`` (e.g. ``healthbench (all)``) and every problem."""
    if entry.kind == "meta-eval":
        rows, issues = _meta_eval_rows(path)
    else:
        rows, issues = _example_rows(path, consensus=entry.consensus)
    subset = what.partition("(")[2].rstrip(")") or what
    if rows != entry.rows:
        issues.insert(0, Issue(what, None, None, f"not the official {subset} file: it holds "
                               f"{rows:,} row{'s' if rows != 1 else ''}, the official one "
                               f"{entry.rows:,}"))
    if issues:
        shown = issues[:SHOWN]
        if len(issues) > SHOWN:
            shown.append(Issue(what, None, None, f"... and {len(issues) - SHOWN:,} more"))
        raise InputError(shown)
    return rows


def _example_rows(path: Path, *, consensus: bool) -> tuple[int, list[Issue]]:
    from assay.io.healthbench import example_to_item
    from assay.io.jsonl import iter_jsonl

    issues: list[Issue] = []
    seen: dict[str, int] = {}
    rows = 0
    for number, row in iter_jsonl(path, source=str(path)):
        rows += 1
        if isinstance(row, Issue):
            issues.append(row)
            continue
        try:
            example_to_item(row, source=str(path), line=number)
        except InputError as exc:
            issues.extend(exc.issues)
            continue
        prompt_id = row["prompt_id"]
        if prompt_id in seen:
            issues.append(Issue(str(path), number, "prompt_id", f"{prompt_id!r} again (first on "
                                f"line {seen[prompt_id]}): the official ids are unique"))
        seen.setdefault(prompt_id, number)
        if consensus:
            for i, entry in enumerate(row["rubrics"]):
                tags = entry.get("tags") or []
                if "level:cluster" not in tags or not any(t.startswith("cluster:") for t in tags):
                    issues.append(Issue(str(path), number, f"rubrics[{i}].tags", "not a consensus "
                                        "criterion (level:cluster and its cluster: tag): the "
                                        "consensus file holds only those"))
    return rows, issues


def _meta_eval_rows(path: Path) -> tuple[int, list[Issue]]:
    from assay.io.jsonl import iter_models
    from assay.metrics.healthbench_meta import MetaEvalRow

    issues: list[Issue] = []
    rows = sum(1 for _ in iter_models(path, MetaEvalRow, issues))
    return rows + len({i.line for i in issues if i.line is not None}), issues
