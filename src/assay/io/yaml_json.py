"""Read and write whole YAML/JSON documents (rubrics, taxonomies, small item sets).

Syntax errors name the file and line. Validation errors inside a document can be traced back to
a line with :func:`line_finder`, which re-reads the file as a YAML node tree (JSON is YAML) only
when there is an error to locate, so the happy path pays nothing for it.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.yaml"
    >>> _ = path.write_text("id: r\\ncriteria:\\n  - text: Says hi.\\n    weight: x\\n")
    >>> load_document(path)["criteria"][0]["weight"]
    'x'
    >>> line_finder(path)(("criteria", 0, "weight"))
    4
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from assay.errors import InputError, Issue
from assay.io.errors import Loc
from assay.limits import MAX_ALIAS_NODES, MAX_DOCUMENT_BYTES, MAX_NESTING, too_deep

if TYPE_CHECKING:
    import yaml

YAML_SUFFIXES = (".yaml", ".yml")


@functools.cache
def _yaml() -> tuple[Any, Any, Any]:
    """PyYAML with its fastest safe loader and dumper, imported when a YAML file is first read
    or written (a JSONL-only command never loads it)."""
    import yaml

    return (yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader),
            getattr(yaml, "CSafeDumper", yaml.SafeDumper))


def is_yaml(path: str | Path) -> bool:
    return Path(path).suffix.lower() in YAML_SUFFIXES


def load_document(path: str | Path, *, source: str | None = None) -> Any:
    """The parsed content of a YAML or JSON file; bad syntax raises :class:`InputError`."""
    path = Path(path)
    name = source or str(path)
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(Issue(name, None, None,
                               f"{size / 2**20:.1f} MiB, over the limit of "
                               f"{MAX_DOCUMENT_BYTES / 2**20:.0f} MiB for a YAML/JSON document "
                               "(use JSONL for large item sets: it is streamed)"))
    data = path.read_bytes()
    if is_yaml(path):
        return _load_yaml(data, name)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        message = f"malformed JSON: {exc.msg} (column {exc.colno})"
        raise InputError(Issue(name, exc.lineno, None, message)) from None
    problem = too_deep(document)
    if problem:
        raise InputError(Issue(name, None, None, problem))
    return document


def _load_yaml(data: bytes, name: str) -> Any:
    """Compose the node graph, check its nesting and how much its aliases expand, and only
    then build Python objects (an alias bomb is refused before it expands)."""
    yaml, loader_class, _ = _yaml()
    loader = loader_class(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _graph_problem(node)
        if problem:
            raise InputError(Issue(name, node.start_mark.line + 1, None, problem))
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(Issue(name, line, None, f"malformed YAML: {problem}")) from None
    except RecursionError:
        raise InputError(Issue(name, None, None, f"nested more than {MAX_NESTING} levels "
                                                 "deep (the limit; see assay.limits)")) from None
    finally:
        loader.dispose()


def _graph_problem(root: yaml.Node) -> str | None:
    """Nesting deeper than MAX_NESTING, a recursive alias, or aliases that expand the document
    by more than MAX_ALIAS_NODES nodes. Expanded sizes are counted once per distinct node (a
    shared node's size is remembered), so even a bomb is measured in linear time."""
    expanded: dict[int, int] = {}
    distinct = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    on_path: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(c)] for c in children)
            continue
        if key in expanded:
            continue
        if key in on_path:
            return "a YAML alias refers to itself (recursive documents are not supported)"
        if depth > MAX_NESTING:
            return f"nested more than {MAX_NESTING} levels deep (the limit; see assay.limits)"
        distinct += 1
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in children if id(child) not in expanded)
    if expanded[id(root)] - distinct > MAX_ALIAS_NODES:
        return (f"YAML aliases expand this document to {expanded[id(root)]:,} nodes, more than "
                f"{MAX_ALIAS_NODES:,} beyond its own {distinct:,} (the limit; see assay.limits)")
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    yaml = _yaml()[0]
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def dump_document(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as YAML (``.yaml``/``.yml``) or indented JSON (anything else)."""
    path = Path(path)
    if is_yaml(path):
        yaml, _, dumper = _yaml()
        text = yaml.dump(obj, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")


def line_finder(path: str | Path) -> Callable[[Loc], int | None]:
    """A function from a location in the document to the line where it is written (1-based).

    The deepest node that exists along the location is used, so a missing field points at the
    object it is missing from.
    """
    root: list[Any] = []

    def line_of(loc: Loc) -> int | None:
        if not root:
            yaml, loader_class, _ = _yaml()
            try:
                root.append(yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=loader_class))
            except (yaml.YAMLError, OSError, UnicodeDecodeError):
                root.append(None)
        node = root[0]
        if node is None:
            return None
        for part in loc:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return node.start_mark.line + 1

    return line_of


def _child(node: Any, part: str | int) -> Any:
    yaml = _yaml()[0]
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if getattr(key, "value", None) == part:
                return value
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]
    return None
