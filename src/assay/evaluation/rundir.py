"""An eval run's directory: its record (``eval.json``), its items, and what each stage holds.

``eval.json`` holds the items' source, the settings (:meth:`EvalOptions.settings`), the
executor the eval was started with and the status of its last stage. It is written, with
``items.jsonl``, before any call, each file whole or not at all (a temporary file moved into
place), so a ``kill -9`` at any point leaves a directory that ``assay eval --resume RUN`` (or the
same command again) continues.

The same ``--run-dir`` with other settings is accepted while the stage they belong to, and every
later one, holds no call that a provider answered (no verdict, no answer, no token billed): a
failed first attempt (a wrong URL, key or model name) never blocks the corrected command. Once a
stage holds such calls, other settings are refused, naming each change and the two ways on
(resume as it was, or another directory).

Example:
    >>> import tempfile, pathlib
    >>> from assay.evaluation.options import EvalOptions
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "ev"
    >>> items = root.parent / "items.jsonl"
    >>> _ = items.write_text('{"id": "a", "prompt": "q"}\\n')
    >>> record = start(root, items, EvalOptions(model="m", judges=["j"]))
    >>> read_record(root)["settings"]["model"], (root / "items.jsonl").read_text()
    ('m', '{"id": "a", "prompt": "q"}\\n')
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InputError, Issue
from assay.evaluation.options import STAGES, EvalOptions, Stage

RECORD = "eval.json"
STAGE_DIRS: dict[Stage, tuple[str, ...]] = {
    "items": ("items.jsonl",),
    "sample": ("sample", "responses.jsonl", "sampled_items.jsonl"),
    "grade": ("grade", "metrics.json", "report.html"),
}


def select_examples(lines: list[str], examples: int | None, seed: int) -> list[str]:
    """The ``examples`` lines simple-evals would draw (``random.Random(seed).sample``), or all.

    >>> select_examples(["a", "b", "c", "d"], 2, 0)
    ['d', 'b']
    """
    if examples is None or examples >= len(lines):
        return lines
    return random.Random(seed).sample(lines, examples)


def start(root: Path, items: Path, options: EvalOptions) -> dict[str, Any]:
    """Make the eval's directory with its items and record, or take up the one there: the
    same settings continue it, other settings replace the unstarted stages or are refused."""
    record = {"items": str(items.resolve()), "settings": options.settings(),
              "executor": options.executor or "local"}
    if not (root / RECORD).is_file():  # new (or stopped before its record was written)
        _write_items(root, items, options)
        write_record(root, record)
        return record
    old = read_record(root)
    changed = _changes(old, record)
    if not changed:
        return {**old, "executor": options.executor or old.get("executor", "local")}
    first = min((_stage_of(name) for name in changed), key=STAGES.index)
    held = {stage: answered_calls(root, stage) for stage in STAGES[STAGES.index(first):]}
    if any(held.values()):
        stage = next(s for s in STAGES if held.get(s))
        listed = "; ".join(f"{name}: {json.dumps(a)} -> {json.dumps(b)}"
                           for name, (a, b) in changed.items())
        raise ConfigError(
            f"{root}: this eval was made with other settings ({listed}), and its {stage} stage "
            f"holds {held[stage]} calls answered with them. Continue it as it was with `assay "
            f"eval --resume {root}`, or evaluate with the new settings in another --run-dir "
            f"(or after deleting {root})")
    for stage in STAGES[STAGES.index(first):]:  # nothing answered there: start those afresh
        for name in STAGE_DIRS[stage]:
            _remove(root / name)
    if first == "items":
        _write_items(root, items, options)
    write_record(root, record)
    return record


def read_record(root: Path) -> dict[str, Any]:
    """The record of the eval at ``root`` (an eval made before records had sections is read as
    one)."""
    path = root / RECORD
    if not path.is_file():
        hint = (" (it stopped before it started: run its command again)"
                if (root / "items.jsonl").exists() else "")
        raise ConfigError(f"{root}: not an eval run (no {RECORD}){hint}")
    data = json.loads(path.read_text(encoding="utf-8"))
    if "settings" not in data:
        settings = {k: v for k, v in data.items() if k not in ("items", "last")}
        data = {"items": data.get("items"), "settings": settings, "last": data.get("last")}
    return data


def write_record(root: Path, record: dict[str, Any]) -> None:
    _write_whole(root / RECORD, json.dumps(record, indent=2) + "\n")


def answered_calls(root: Path, stage: Stage) -> int:
    """The calls of ``stage`` that a provider answered (an answer, a verdict or billed tokens),
    or submitted in a batch: what other settings must not silently throw away."""
    if stage == "sample":
        return _count(root / "sample" / "calls.sqlite",
                      "SELECT COUNT(*) FROM calls WHERE failure IS NULL OR prompt_tokens > 0 "
                      "OR cost_usd > 0", batches="SELECT value FROM meta WHERE key = 'batches'")
    if stage == "grade":
        return _count(root / "grade" / "run.sqlite",
                      "SELECT COUNT(*) FROM calls WHERE status = 'ok' OR prompt_tokens > 0 OR "
                      "cost_usd > 0", batches="SELECT value FROM meta WHERE key = 'batches'")
    return 0


def _count(path: Path, sql: str, *, batches: str) -> int:
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (answered,) = db.execute(sql).fetchone()
        row = db.execute(batches).fetchone()
        submitted = len(json.loads(row[0])) if row else 0
        return int(answered) + submitted
    except sqlite3.DatabaseError:
        return 1  # unreadable: never thrown away on the strength of a guess
    finally:
        db.close()


def _changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    changed = {name: (old["settings"].get(name), value)
               for name, value in new["settings"].items() if old["settings"].get(name) != value}
    if old.get("items") != new["items"]:
        changed = {"items": (old.get("items"), new["items"]), **changed}
    return changed


def _stage_of(name: str) -> Stage:
    return "items" if name == "items" else EvalOptions.stage_of(name) or "items"


def _write_items(root: Path, source: Path, options: EvalOptions) -> None:
    """``items.jsonl``: the source's lines, or the ``--examples`` subset simple-evals draws."""
    if not source.is_file():
        raise InputError(Issue(str(source), None, None, "no such file"))
    if source.suffix.lower() != ".jsonl":
        raise InputError(Issue(str(source), None, None, "assay eval reads JSONL items"))
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise InputError(Issue(str(source), None, None, "no item in the file"))
    if options.healthbench:
        check_healthbench_rows(source)
    chosen = select_examples(lines, options.examples, options.seed)
    root.mkdir(parents=True, exist_ok=True)
    _write_whole(root / "items.jsonl", "".join(line + "\n" for line in chosen))


def check_healthbench_rows(source: Path) -> None:
    """Every line of ``source`` is a HealthBench row, or an :class:`InputError` names each
    problem against the user's file and line, with HealthBench's field names (``prompt_id``,
    ``prompt``, ``rubrics``), before anything is copied or asked."""
    from assay.io.healthbench import example_to_item
    from assay.io.jsonl import iter_jsonl

    issues: list[Issue] = []
    seen: dict[str, int] = {}
    for number, row in iter_jsonl(source, source=str(source)):
        if isinstance(row, Issue):
            issues.append(row)
            continue
        try:
            item = example_to_item(row, source=str(source), line=number)
        except InputError as exc:
            issues.extend(exc.issues)
            continue
        if item.id in seen:
            issues.append(Issue(str(source), number, "prompt_id", f"{item.id!r} repeats line "
                                f"{seen[item.id]}"))
        seen.setdefault(item.id, number)
    if issues:
        raise InputError(issues)


def _write_whole(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
