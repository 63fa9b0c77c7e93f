"""The queries to generate rubrics for, and where the generated rubrics go.

In: a plain-text file (one query per line; blank lines and ``#`` comments skipped; ids
``q-HASH`` of the text, so editing one line does not disturb the others' resume), seed 000's
released ``conversations.txt`` (every line ``INDEX<TAB>User: ...``: the ids are the authors'
indices, so the output joins their rubric files by index, and the turns are split on their
``User:``/``Assistant:`` markers), or any item
file Assay reads (item JSONL/JSON/YAML with ``id`` and ``prompt``/``messages``, or HealthBench
JSONL). A multi-turn conversation becomes ``User: ...`` / ``Assistant: ...`` lines, as in the
paper's released data.

Out, by the suffix of ``--out``: ``.jsonl`` writes one HealthBench line per query (the input
line with its ``rubrics`` replaced, or a new line for a plain query), which ``assay grade
--healthbench`` reads directly; ``.yaml``/``.yml``/``.json`` writes one Assay rubric document
(one query only); a path without a suffix is a folder of ``ID.yaml`` rubric documents.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = path.write_text("# fever\\nMy baby has a fever of 38.5 C. What should I do?\\n")
    >>> [(q.id, q.text) for q in read_queries(path)]
    [('q-ab606c127a', 'My baby has a fever of 38.5 C. What should I do?')]
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.item import Item
from assay.rubric import Rubric

RUBRIC_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    item: Item

    @classmethod
    def plain(cls, text: str, query_id: str | None = None) -> Query:
        text = " ".join(text.split())
        qid = query_id or "q-" + hashlib.sha256(text.encode()).hexdigest()[:10]
        item = Item.model_validate({"id": qid, "prompt": text, "tags": ["assay:generated"]})
        return cls(qid, text, item)

    @classmethod
    def of_item(cls, item: Item) -> Query:
        turns = [m for m in item.messages if m.role in ("user", "assistant")]
        if len(turns) == 1:
            text = turns[0].content
        else:
            text = "\n".join(f"{m.role.capitalize()}: {m.content}" for m in turns)
        return cls(item.id, text, item)


def read_queries(path: str | Path) -> list[Query]:
    """Queries from a text file or an item/HealthBench file (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such file"))
    if path.suffix.lower() in (".txt", ".text", ""):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        if lines and all(_INDEXED_LINE.match(line) for line in lines):
            queries = _released_conversations(path)
        else:
            queries = [Query.plain(line) for line in lines]
    else:
        from assay.io import load_items

        queries = [Query.of_item(item) for item in load_items(path)]
    if not queries:
        raise InputError(Issue(str(path), None, None, "no query found"))
    seen: dict[str, int] = {}
    for index, q in enumerate(queries):
        if q.id in seen:
            raise InputError(Issue(str(path), None, None, f"query {index + 1} repeats query "
                                   f"{seen[q.id] + 1} (id {q.id!r})"))
        seen[q.id] = index
    return queries


_INDEXED_LINE = re.compile(r"^\s*\d+\t")


def _released_conversations(path: Path) -> list[Query]:
    """Seed 000's ``conversations.txt``: one query per line, its id the authors' index."""
    from assay.rubric_eval.released import conversation_messages, read_conversations

    return [Query.of_item(Item.model_validate({
        "id": index, "messages": list(conversation_messages(text)),
        "tags": ["assay:generated"]}))
        for index, text in read_conversations(path).items()]


def as_queries(queries: Any) -> list[Query]:
    """Queries from a path, a string, or a list of strings / Items / dicts."""
    if isinstance(queries, Path) or (isinstance(queries, str) and Path(queries).is_file()):
        return read_queries(queries)
    if isinstance(queries, str):
        return [Query.plain(queries)]
    out = []
    for q in queries:
        if isinstance(q, Query):
            out.append(q)
        elif isinstance(q, str):
            out.append(Query.plain(q))
        else:
            out.append(Query.of_item(q if isinstance(q, Item) else Item.model_validate(q)))
    return out


def write_rubrics(queries: Iterable[Query], rubrics: dict[str, Rubric], out: str | Path) -> int:
    """Write the rubrics of ``queries`` that have one (see the module docstring); the count."""
    from assay.io import write_items, write_rubric

    out = Path(out)
    done = [(q, rubrics[q.id]) for q in queries if q.id in rubrics]
    suffix = out.suffix.lower()
    if suffix == ".jsonl":
        items = [q.item.model_copy(update={"rubric": r, "response": None}) for q, r in done]
        out.parent.mkdir(parents=True, exist_ok=True)
        return write_items(items, out, format="healthbench")
    if suffix in RUBRIC_SUFFIXES:
        if len(done) != 1:
            raise InputError(Issue(str(out), None, "--out", f"a {suffix} file holds one rubric; "
                                   f"there are {len(done)}: use .jsonl or a folder"))
        write_rubric(done[0][1], out)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    for q, rubric in done:
        write_rubric(rubric, out / f"{_safe(q.id)}.yaml")
    return len(done)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)

