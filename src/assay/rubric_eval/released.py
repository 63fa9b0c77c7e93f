"""Readers for seed 000's released data (and HealthBench), keyed by query index.

Seed 000 releases one file per artefact, each line keyed by the query's ``index`` (§5.1):

* rubric sets: ``{"index": 0, "rubrics": [{"criterion", "axis", "points"}]}`` (physician and
  GPT-4o rubrics) or ``{"index": 0, "original_query": "...", "generated_rubrics": [...]}``
  (the system's own; ``generated_rubrics`` may also be ``{"rubrics": [...]}``);
* responses: ``{"index": 0, "reference_response": "..."}`` (also ``response`` / ``answer``,
  and ``id`` / ``prompt_id`` as the key);
* conversations: ``conversations.txt``, one ``index<TAB>User: ...`` per line (a multi-turn
  conversation on one line: ``User: ... Assistant: ... User: ...``).

The released files are read as released: ``generic_rubrics.jsonl`` is one JSON list with
trailing commas (the authors read it with ``ast.literal_eval``), and 12 of the 254 lines of
``reference_responses.jsonl`` have an empty reference (``skipped`` collects those queries
instead of refusing the file).

A rubric set may also be a HealthBench (or Assay items) JSONL, whose ``prompt_id`` is the
index, or one rubric shared by every query (a JSON list of entries, ``{"rubrics": [...]}``, or
any Assay rubric file), such as the generic baseline. Every problem is reported as
``file:line: field: message``, all of them at once.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"index": 3, "rubrics": [{"criterion": "Says X", "axis": "accuracy", '
    ...                  '"points": 5}]}\\n')
    >>> rs = read_rubric_set(p)
    >>> rs.indices, rs.entries("3")[0].points
    (['3'], 5.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from assay.errors import InputError, Issue
from assay.item import Item
from assay.rubric import Criterion, Rubric

AXES = ("accuracy", "completeness", "context_awareness", "communication_quality",
        "instruction_following")
KEY_FIELDS = ("index", "id", "prompt_id", "conv_id")
RESPONSE_FIELDS = ("reference_response", "response", "answer", "completion")


class RubricEntry(BaseModel):
    """One released rubric item: criterion text, axis and integer-like points."""

    model_config = ConfigDict(extra="allow", frozen=True)

    criterion: StrictStr = Field(min_length=1)
    axis: str = ""
    points: float


@dataclass
class RubricSet:
    """Rubric entries per query index, or one rubric shared by every query."""

    source: str
    per_index: dict[str, list[RubricEntry]] = field(default_factory=dict)
    shared: list[RubricEntry] | None = None
    queries: dict[str, str] = field(default_factory=dict)  # original_query, when given
    lines: dict[str, tuple[int, str]] = field(default_factory=dict)  # index -> (line, field)

    @property
    def indices(self) -> list[str]:
        return list(self.per_index)

    def entries(self, index: str) -> list[RubricEntry] | None:
        """The entries for ``index`` (the shared rubric if there is one), else None."""
        return self.per_index.get(index, self.shared)

    def require(self, index: str) -> list[RubricEntry]:
        found = self.entries(index)
        if found is None:
            raise InputError(Issue(self.source, None, "index", f"no rubric for query {index!r}"))
        return found


@dataclass(frozen=True)
class Query:
    """A query of the evaluation set: its text, gold rubric and reference answer."""

    index: str
    question: str
    gold: list[RubricEntry]
    reference: str | None = None
    messages: tuple[dict[str, str], ...] = ()
    where: tuple[str, int, str] | None = None  # (file, line, field) of the gold rubric


def _key(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    text = str(value).strip()
    return text or None


def _rows(path: Path, issues: list[Issue]) -> Iterator[tuple[int, dict[str, Any]]]:
    from assay.io.jsonl import iter_jsonl

    for line, value in iter_jsonl(path, source=str(path)):
        if isinstance(value, Issue):
            issues.append(value)
        elif not isinstance(value, dict):
            issues.append(Issue(str(path), line, None, "expected a JSON object"))
        else:
            yield line, value


def _row_key(row: dict[str, Any], source: str, line: int, issues: list[Issue]) -> str | None:
    for name in KEY_FIELDS:
        if name in row:
            key = _key(row[name])
            if key is None:
                issues.append(Issue(source, line, name, f"expected an integer or string index, "
                                    f"got {row[name]!r}"))
            return key
    issues.append(Issue(source, line, "index", "missing (each line needs the query's index)"))
    return None


def _entries(value: Any, source: str, line: int | None, where: str,
             issues: list[Issue]) -> list[RubricEntry] | None:
    from pydantic import ValidationError

    if isinstance(value, dict) and isinstance(value.get("rubrics"), list):
        value, where = value["rubrics"], f"{where}.rubrics"
    if not isinstance(value, list):
        issues.append(Issue(source, line, where, "expected a list of {criterion, axis, points}"))
        return None
    out, before = [], len(issues)
    for i, raw in enumerate(value):
        try:
            out.append(RubricEntry.model_validate(raw))
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                issues.append(Issue(source, line, f"{where}[{i}]" + (f".{loc}" if loc else ""),
                                    err["msg"]))
    if not out and len(issues) == before:
        issues.append(Issue(source, line, where, "an empty rubric"))
    return out if len(issues) == before else None


def read_rubric_set(path: str | Path) -> RubricSet:
    """Rubrics per index from a released, HealthBench or shared-rubric file (module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such rubric file"))
    shared = _shared_rubric(path)
    if shared is not None:
        return shared
    from assay.io.jsonl import first_record

    first = first_record(path)
    if isinstance(first, dict) and "prompt_id" in first and "rubrics" in first:
        return _healthbench_set(path)
    source = str(path)
    issues: list[Issue] = []
    out = RubricSet(source=source)
    seen: dict[str, int] = {}
    for line, row in _rows(path, issues):
        key = _row_key(row, source, line, issues)
        name = next((n for n in ("rubrics", "generated_rubrics") if n in row), None)
        if name is None:
            issues.append(Issue(source, line, "rubrics", "missing (give rubrics or "
                                "generated_rubrics)"))
            continue
        entries = _entries(row[name], source, line, name, issues)
        if key is None or entries is None:
            continue
        if key in seen:
            issues.append(Issue(source, line, "index", f"index {key} again (first on line "
                                f"{seen[key]})"))
            continue
        seen[key] = line
        out.per_index[key] = entries
        out.lines[key] = (line, name)
        if isinstance(row.get("original_query"), str):
            out.queries[key] = row["original_query"]
    if not out.per_index and not issues:
        issues.append(Issue(source, None, None, "no rubric in the file"))
    if issues:
        raise InputError(issues)
    return out


def _shared_rubric(path: Path) -> RubricSet | None:
    """A whole-file rubric shared by every query (JSON list / {rubrics}, or an Assay rubric)."""
    from assay.io.seed000 import load_whole_json

    whole = load_whole_json(path)
    if isinstance(whole, list) or (isinstance(whole, dict) and "rubrics" in whole
                                   and "index" not in whole):
        issues: list[Issue] = []
        entries = _entries(whole, str(path), None, "rubrics", issues)
        if issues:
            raise InputError(issues)
        return RubricSet(source=str(path), shared=entries)
    if path.suffix.lower() in (".yaml", ".yml") or (isinstance(whole, dict) and "criteria" in whole):
        from assay.io import read_rubric

        return RubricSet(source=str(path), shared=entries_of_rubric(read_rubric(path)))
    return None


def _healthbench_set(path: Path) -> RubricSet:
    from assay.io import read_rubric_file

    out = RubricSet(source=str(path))
    for item_id, rubric in read_rubric_file(path).per_item.items():
        out.per_index[item_id] = entries_of_rubric(rubric)
    return out


def entries_of_rubric(rubric: Rubric) -> list[RubricEntry]:
    """An Assay rubric as released-format entries (text, axis, weight)."""
    return [RubricEntry(criterion=c.text, axis=c.axis or "", points=c.weight)
            for c in rubric.criteria]


def rubric_of_entries(index: str, entries: list[RubricEntry], *,
                      where: tuple[str, int, str] | None = None,
                      notes: list[Issue] | None = None) -> Rubric:
    """Released entries as an Assay rubric for grading: criterion ``c{k}`` is the ``k``-th
    entry. An entry of 0 points cannot count for or against an answer (an Assay criterion
    has a nonzero weight): it is left out of the rubric and named in ``notes`` (the seed-000
    release has one; ``rubric stats``, ``cia`` and ``nearmiss judge`` read it as an entry
    like any other). Any other problem is an :class:`InputError` naming ``where`` (file, line
    and field of the rubric) and the entry.

    >>> rubric = rubric_of_entries("7", [RubricEntry(criterion="Says A.", points=5),
    ...     RubricEntry(criterion="Says B.", points=0)], where=("f.jsonl", 3, "rubrics"),
    ...     notes=(notes := []))
    >>> [c.id for c in rubric.criteria], str(notes[0])
    (['c1'], 'f.jsonl:3: rubrics[1].points: 0 points: cannot count for or against an answer; left out of grading')
    """
    from pydantic import ValidationError

    from assay.io.errors import issues_from

    source, line, name = where if where is not None else (None, None, "rubrics")
    kept = []
    for i, e in enumerate(entries):
        if e.points == 0:
            if notes is not None:
                notes.append(Issue(source, line, f"{name}[{i}].points", "0 points: cannot count "
                                   "for or against an answer; left out of grading"))
            continue
        kept.append((i, e))
    try:
        return Rubric(id=f"gold-{index}", criteria=[
            Criterion(id=f"c{i + 1}", text=e.criterion, weight=e.points, axis=e.axis or None)
            for i, e in kept])
    except ValidationError as exc:
        def released(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
            if len(loc) >= 2 and loc[0] == "criteria" and isinstance(loc[1], int):
                rest = tuple("points" if part == "weight" else "criterion" if part == "text"
                             else part for part in loc[2:])
                return (name, kept[loc[1]][0], *rest)
            return (name, *(loc[1:] if loc[:1] == ("criteria",) else loc))

        raise InputError(issues_from(exc, source=source, line=line, rename=released)) from None


def read_responses(path: str | Path, *, skipped: dict[str, Issue] | None = None) -> dict[str, str]:
    """``index -> response text`` from ``{index, reference_response | response | answer}`` lines.

    An empty text is an error, unless ``skipped`` is given: then the line is left out and
    named there by index (the released ``reference_responses.jsonl`` has 12 empty references).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such responses file"))
    source = str(path)
    issues: list[Issue] = []
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for line, row in _rows(path, issues):
        key = _row_key(row, source, line, issues)
        names = [n for n in RESPONSE_FIELDS if n in row]
        if len(names) != 1:
            issues.append(Issue(source, line, "reference_response", "give exactly one of "
                                + ", ".join(RESPONSE_FIELDS)
                                + (f" (found {', '.join(names)})" if names else "")))
            continue
        text = row[names[0]]
        if not isinstance(text, str):
            issues.append(Issue(source, line, names[0], "expected a non-empty string"))
            continue
        if key is None:
            continue
        if not text.strip():
            if skipped is None:
                issues.append(Issue(source, line, names[0], "expected a non-empty string"))
            else:
                skipped[key] = Issue(source, line, names[0],
                                     f"empty: query {key} has no reference answer")
            continue
        if key in seen:
            issues.append(Issue(source, line, "index", f"index {key} again (first on line "
                                f"{seen[key]})"))
            continue
        seen[key], out[key] = line, text
    if not out and not issues:
        issues.append(Issue(source, None, None, "no non-empty response in the file"
                            if skipped else "no response in the file"))
    if issues:
        raise InputError(issues)
    return out


def read_conversations(path: str | Path) -> dict[str, str]:
    """``index -> conversation text`` from ``index<TAB>User: ...`` lines (conversations.txt)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such conversations file"))
    source = str(path)
    issues: list[Issue] = []
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for line, raw in enumerate(handle, start=1):
            text = raw.rstrip("\r\n")
            if not text.strip():
                continue
            key, tab, conversation = text.partition("\t")
            if not tab:
                issues.append(Issue(source, line, None, "expected index<TAB>conversation"))
                continue
            if not key.strip():
                issues.append(Issue(source, line, "index", "empty index before the tab"))
                continue
            if not conversation.strip():
                issues.append(Issue(source, line, "conversation", "empty conversation"))
                continue
            key = key.strip()
            if key in seen:
                issues.append(Issue(source, line, "index", f"index {key} again (first on line "
                                    f"{seen[key]})"))
                continue
            seen[key], out[key] = line, conversation.strip()
    if not out and not issues:
        issues.append(Issue(source, None, None, "no conversation in the file"))
    if issues:
        raise InputError(issues)
    return out


_TURN = re.compile(r"(?:^|\s)(User|Assistant|System):\s", re.IGNORECASE)


def conversation_messages(text: str) -> tuple[dict[str, str], ...]:
    """The turns of a released conversation line (``User: ... Assistant: ... User: ...``).

    Text before the first ``User:`` marker (or a line without one) is one user turn.

    >>> conversation_messages("User: Chill Assistant: Cold, or goosebumps? User: goosebumps")
    ({'role': 'user', 'content': 'Chill'}, {'role': 'assistant', 'content': 'Cold, or \
goosebumps?'}, {'role': 'user', 'content': 'goosebumps'})
    """
    marks = list(_TURN.finditer(text))
    turns: list[dict[str, str]] = []
    if not marks or text[:marks[0].start()].strip():
        head = text[:marks[0].start()] if marks else text
        turns.append({"role": "user", "content": head.strip()})
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        content = text[mark.end():end].strip()
        if content:
            turns.append({"role": mark.group(1).lower(), "content": content})
    return tuple(turns)


def conversation_text(messages: list[dict[str, str]] | tuple[dict[str, str], ...]) -> str:
    """Messages as seed 000 writes queries: ``User: ...`` / ``Assistant: ...`` lines."""
    return "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages)


def load_queries(
    gold: str | Path,
    *,
    conversations: str | Path | None = None,
    references: str | Path | None = None,
    skipped: dict[str, Issue] | None = None,
) -> dict[str, Query]:
    """The evaluation set: gold rubrics with their queries (and reference answers).

    ``gold`` is a HealthBench JSONL (conversation, physician rubric and ideal completion in one
    line) or a released rubric file, then with ``conversations`` (and ``references``). An
    empty reference answer is an error, unless ``skipped`` is given: then its query has no
    reference and the line is named there (see :func:`read_responses`).
    """
    gold = Path(gold)
    from assay.io.jsonl import first_record

    first = first_record(gold) if gold.is_file() else None
    if isinstance(first, dict) and "prompt_id" in first:
        from assay.io import iter_items

        items = {i.id: i for i in iter_items(gold)}
        refs = read_responses(references, skipped=skipped) if references else {}
        return {key: Query(
            index=key,
            question=conversation_text([m.model_dump() for m in item.messages]),
            gold=entries_of_rubric(item.rubric) if item.rubric else [],
            reference=refs.get(key, item.reference),
            messages=tuple(m.model_dump() for m in item.messages))
            for key, item in items.items()}
    rubrics = read_rubric_set(gold)
    if rubrics.shared is not None:
        raise InputError(Issue(str(gold), None, None, "the gold rubrics must be per query "
                               "(index-keyed lines), not one shared rubric"))
    texts = read_conversations(conversations) if conversations else dict(rubrics.queries)
    refs = read_responses(references, skipped=skipped) if references else {}
    missing = [k for k in rubrics.per_index if k not in texts]
    if missing:
        where = str(conversations) if conversations else str(gold)
        raise InputError(Issue(where, None, "index", f"no conversation for {len(missing)} gold "
                               f"queries (first: {missing[0]}); give --conversations"))
    return {key: Query(index=key, question=texts[key], gold=entries,
                       reference=refs.get(key),
                       messages=conversation_messages(texts[key]),
                       where=(str(gold), *rubrics.lines[key]) if key in rubrics.lines else None)
            for key, entries in rubrics.per_index.items()}


def released_items(rubrics: str | Path, conversations: str | Path,
                   notes: list[Issue] | None = None) -> list[Item]:
    """A released rubric set joined to ``conversations.txt`` as items to grade: each index's
    conversation with its rubric (``assay grade RUBRICS --conversations C``); the released
    responses go with them through ``--responses``. 0-point entries are left out and named
    in ``notes`` (:func:`rubric_of_entries`); every other problem of every rubric is raised
    at once, each naming its file, line and field."""
    queries = load_queries(rubrics, conversations=conversations)
    items, issues = [], []
    for key, query in queries.items():
        try:
            rubric = rubric_of_entries(key, query.gold, where=query.where, notes=notes)
        except InputError as exc:
            issues.extend(exc.issues)
            continue
        items.append(Item(id=key, messages=list(query.messages), rubric=rubric))
    if issues:
        raise InputError(issues)
    return items

