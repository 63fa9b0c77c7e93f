"""Every problem of a taxonomy document at once, each with its file, line and field.

Two sets of rules. :func:`taxonomy_errors` holds the ones that would make a grade wrong or a
run crash, so :func:`~assay.io.read_taxonomy` refuses a file that breaks any (and lists them
all): a duplicate node or criterion id (every copy, not only the first), a node without id or
name, a node with both children and a criterion or with neither, a node id that differs from
its criterion id (routers show one and select by the other), an authored weight that the tree's
Eq. 2 weight would silently replace (only the sign is kept, as the leaf's polarity: write 1 or
-1), and a ``metadata.requires`` that is not a requirement or a list of them.

:func:`lint_taxonomy` (``assay taxonomy lint``) adds the curation rules of RubricsTree (seed
003 §2.1): every leaf has a non-empty ``trigger`` (the router reads it), leaves sit at depth 3
or 4, a node holds either leaves or subgroups, not both (a leaf beside subgroups takes a share
of its parent that its siblings' leaves do not), and a requirement names a term of the health
vocabulary (an unknown name matches only a memory entry of exactly that name, so a leaf
would silently never apply to data recorded under another name).

Example:
    >>> doc = {"id": "t", "root": {"id": "root", "name": "all", "children": [
    ...     {"id": "a", "name": "A", "criterion": {"id": "a", "text": "Says A.", "weight": 3}},
    ...     {"id": "a", "name": "B", "criterion": {"id": "b", "text": "Says B."}}]}}
    >>> for issue in taxonomy_errors(doc, source="t.yaml"):
    ...     print(issue)
    t.yaml: root.children[0].criterion.weight: authored weight 3 would be replaced by the tree's weight (Eq. 2); write 1, or -1 for a penalty leaf
    t.yaml: root.children[1].id: duplicate node id 'a' (first at root.children[0].id)
    t.yaml: root.children[1].criterion.id: criterion id 'b' differs from its node id 'a'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import ValidationError

from assay.errors import InputError, Issue
from assay.io.errors import Loc, field_path, issues_from

LEAF_DEPTHS = (3, 4)
NODE_FIELDS = {"id", "name", "description", "children", "criterion"}
DOCUMENT_FIELDS = {"id", "root", "version"}

LineOf = Callable[[Loc], int | None]


@dataclass
class _Checker:
    source: str | None
    line_of: LineOf | None
    curation: bool
    leaf_depths: tuple[int, ...]
    issues: list[Issue] = field(default_factory=list)
    node_ids: dict[str, Loc] = field(default_factory=dict)
    criterion_ids: dict[str, Loc] = field(default_factory=dict)

    def add(self, loc: Loc, message: str) -> None:
        line = self.line_of(loc) if self.line_of is not None else None
        self.issues.append(Issue(self.source, line, field_path(loc) or None, message))

    def document(self, document: Any) -> None:
        if not isinstance(document, dict):
            self.add((), "a taxonomy is a mapping {id, version, root}")
            return
        for key in sorted(set(document) - DOCUMENT_FIELDS):
            self.add((key,), "unknown field")
        if not _text(document.get("id")):
            self.add(("id",), "missing or empty taxonomy id")
        if "root" not in document:
            self.add(("root",), "required field is missing")
        else:
            self.node(document["root"], ("root",), 0)

    def node(self, node: Any, loc: Loc, depth: int) -> None:
        if not isinstance(node, dict):
            self.add(loc, "a node is a mapping {id, name, children | criterion}")
            return
        for key in sorted(set(node) - NODE_FIELDS):
            self.add((*loc, key), "unknown field")
        node_id = node.get("id")
        if not _text(node_id):
            self.add((*loc, "id"), "missing or empty node id")
            node_id = None
        else:
            self._unique(self.node_ids, node_id, (*loc, "id"), "node id")
        if not _text(node.get("name")):
            self.add((*loc, "name"), "missing or empty name")
        children, criterion = node.get("children") or [], node.get("criterion")
        if not isinstance(children, list):
            self.add((*loc, "children"), "expected a list of nodes")
            children = []
        if children and criterion is not None:
            self.add(loc, f"node {node_id!r} has both children and a criterion")
        elif not children and criterion is None:
            self.add(loc, f"node {node_id!r} has neither children nor a criterion")
        if criterion is not None:
            self.leaf(criterion, (*loc, "criterion"), node_id, depth)
        if self.curation and children:
            kinds = {"leaf" if isinstance(c, dict) and "criterion" in c else "group"
                     for c in children}
            if len(kinds) == 2:
                self.add((*loc, "children"), f"node {node_id!r} mixes leaves and subgroups: "
                         "put the leaves in a subgroup of their own (Eq. 2 splits a node's "
                         "weight equally among its children)")
        for index, child in enumerate(children):
            self.node(child, (*loc, "children", index), depth + 1)

    def leaf(self, criterion: Any, loc: Loc, node_id: str | None, depth: int) -> None:
        if not isinstance(criterion, dict):
            self.add(loc, "a criterion is a mapping {id, text, trigger, ...}")
            return
        criterion_id = criterion.get("id")
        if not _text(criterion_id):
            self.add((*loc, "id"), "missing criterion id: give the node's id "
                     f"{node_id!r}" if node_id else "missing criterion id")
        else:
            self._unique(self.criterion_ids, criterion_id, (*loc, "id"), "criterion id")
            if node_id is not None and criterion_id != node_id:
                self.add((*loc, "id"), f"criterion id {criterion_id!r} differs from its node "
                         f"id {node_id!r}")
        for key in ("weight", "points"):
            weight = criterion.get(key)
            if weight is not None and _number(weight) and abs(weight) != 1:
                self.add((*loc, key), f"authored weight {weight:g} would be replaced by the "
                         "tree's weight (Eq. 2); write 1, or -1 for a penalty leaf")
        metadata = criterion.get("metadata")
        if isinstance(metadata, dict) and "requires" in metadata:
            self.requires(metadata["requires"], (*loc, "metadata", "requires"))
        if self.curation:
            if not _text(criterion.get("trigger")):
                self.add((*loc, "trigger"), "missing or empty trigger: the router decides "
                         "from it whether the leaf applies")
            if self.leaf_depths and depth not in self.leaf_depths:
                wanted = " or ".join(str(d) for d in self.leaf_depths)
                self.add(loc[:-1], f"leaf {node_id!r} sits at depth {depth}; leaves sit at "
                         f"depth {wanted}")

    def requires(self, value: Any, loc: Loc) -> None:
        from assay.health_memory import HealthMemory

        items = [(loc, value)] if isinstance(value, str) else (
            [((*loc, i), v) for i, v in enumerate(value)] if isinstance(value, list) else None)
        if items is None:
            self.add(loc, "expected a requirement such as 'lab:ldl' or a list of them, got "
                     f"{type(value).__name__}")
            return
        for where, requirement in items:
            if not isinstance(requirement, str):
                self.add(where, f"expected a requirement such as 'lab:ldl', got "
                         f"{type(requirement).__name__}")
                continue
            try:
                HealthMemory.check_requirement(requirement)
            except ValueError as exc:
                self.add(where, str(exc))
                continue
            if self.curation:
                self.known_term(requirement, where)

    def known_term(self, requirement: str, loc: Loc) -> None:
        from assay.vocabulary import KINDS, vocabulary

        kind, _, rest = requirement.strip().lower().partition(":")
        kind, name = kind.removesuffix("s"), rest.partition(":")[0]
        table = vocabulary()
        if kind in KINDS and name and table.term(kind, name) is None:
            self.add(loc, f"{kind} {name!r} is not in the health vocabulary "
                     f"{table.version}: it matches only a {kind} named exactly so; add it to "
                     "a vocabulary file (--health-vocabulary) with its other names")

    def _unique(self, seen: dict[str, Loc], value: str, loc: Loc, what: str) -> None:
        first = seen.setdefault(value, loc)
        if first != loc:
            self.add(loc, f"duplicate {what} {value!r} (first at {field_path(first)})")


def _within(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def taxonomy_errors(document: Any, *, source: str | None = None,
                    line_of: LineOf | None = None) -> list[Issue]:
    """The problems that make a taxonomy unusable (see the module docstring), all of them."""
    checker = _Checker(source, line_of, curation=False, leaf_depths=())
    checker.document(document)
    return checker.issues


def lint_taxonomy(path: str | Path, *,
                  leaf_depths: tuple[int, ...] = LEAF_DEPTHS) -> list[Issue]:
    """Every problem of the taxonomy file at ``path``: errors and curation rules, each with
    file, line and field (``leaf_depths=()`` drops the depth rule). Bad syntax is one issue."""
    from assay.io.yaml_json import line_finder, load_document
    from assay.rubric.taxonomy import Taxonomy

    try:
        document = load_document(path)
    except InputError as exc:
        return exc.issues
    line_of = line_finder(path)
    checker = _Checker(str(path), line_of, curation=True, leaf_depths=leaf_depths)
    checker.document(document)
    found = checker.issues
    try:
        Taxonomy.model_validate(document)
    except ValidationError as exc:
        # the schema's own errors (a bad kind, a wrong type) that the rules above do not state
        said = {i.field or "" for i in found}
        found += [i for i in issues_from(exc, source=str(path), line_of=line_of)
                  if not any(_within(i.field or "", f) for f in said if f)
                  and "duplicate" not in i.message and "has no criterion" not in i.message
                  and "both children" not in i.message]
    return sorted(found, key=lambda i: (i.line or 0, i.field or ""))
