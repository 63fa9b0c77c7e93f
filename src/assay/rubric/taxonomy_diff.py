"""What changed between two versions of a taxonomy, leaf by leaf (``assay taxonomy diff``).

Leaves are matched by criterion id. For each: added, removed, moved (another path of node
names), reworded (``text``, ``trigger``, ``name``, ``requires``) and reweighted (its Eq. 2
weight). A curation round that changes anything must bump ``version``: routings and runs record
the version, so two different trees under one version would read as the same rubric.

Example:
    >>> def tree(version, text):
    ...     return Taxonomy(id="t", version=version, root={"id": "root", "name": "all",
    ...         "children": [{"id": "a", "name": "A", "criterion": {"id": "a", "text": text}},
    ...                      {"id": "b", "name": "B", "criterion": {"id": "b", "text": "B."}}]})
    >>> diff = diff_taxonomies(tree("1.0.0", "Says A."), tree("1.0.0", "States A."))
    >>> [c.field for c in diff.changed], diff.problems
    (['text'], ["the content changed but the version did not ('1.0.0')"])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.rubric.taxonomy import Taxonomy, TaxonomyNode


@dataclass(frozen=True)
class LeafChange:
    """One field of one leaf that differs between the two versions."""

    id: str
    field: str
    before: str
    after: str


@dataclass
class TaxonomyDiff:
    """Differences from taxonomy ``a`` to taxonomy ``b``; empty lists when they agree."""

    version: tuple[str, str]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[LeafChange] = field(default_factory=list)
    groups_added: list[str] = field(default_factory=list)
    groups_removed: list[str] = field(default_factory=list)

    @property
    def same_content(self) -> bool:
        return not (self.added or self.removed or self.changed or self.groups_added
                    or self.groups_removed)

    @property
    def problems(self) -> list[str]:
        """What a curator must fix: a changed tree under an unchanged version."""
        if not self.same_content and self.version[0] == self.version[1]:
            return [f"the content changed but the version did not ({self.version[0]!r})"]
        return []


def diff_taxonomies(a: Taxonomy, b: Taxonomy) -> TaxonomyDiff:
    """Compare ``a`` (before) with ``b`` (after); see the module docstring."""
    before, after = _leaves(a), _leaves(b)
    diff = TaxonomyDiff(version=(a.version, b.version))
    diff.added = [i for i in after if i not in before]
    diff.removed = [i for i in before if i not in after]
    groups_a, groups_b = _groups(a), _groups(b)
    diff.groups_added = [i for i in groups_b if i not in groups_a]
    diff.groups_removed = [i for i in groups_a if i not in groups_b]
    weights_a, weights_b = a.auto_weights(), b.auto_weights()
    for leaf_id, old in before.items():
        new = after.get(leaf_id)
        if new is None:
            continue
        for name in ("path", "name", "text", "trigger", "requires"):
            if old[name] != new[name]:
                diff.changed.append(LeafChange(leaf_id, name, old[name], new[name]))
        if abs(weights_a[leaf_id] - weights_b[leaf_id]) > 1e-12:
            diff.changed.append(LeafChange(leaf_id, "weight", _fraction(weights_a[leaf_id]),
                                           _fraction(weights_b[leaf_id])))
    return diff


def _leaves(taxonomy: Taxonomy) -> dict[str, dict[str, str]]:
    out = {}
    for node, path in taxonomy.walk():
        c = node.criterion
        if c is None:
            continue
        requires = c.metadata.get("requires", ())
        out[c.id] = {"path": " > ".join(p.name for p in path[1:]), "name": node.name,
                     "text": c.text, "trigger": c.trigger or "",
                     "requires": ", ".join([requires] if isinstance(requires, str)
                                           else map(str, requires))}
    return out


def _groups(taxonomy: Taxonomy) -> list[str]:
    return [node.id for node, path in taxonomy.walk() if path and not _is_leaf(node)]


def _is_leaf(node: TaxonomyNode) -> bool:
    return node.criterion is not None


def _fraction(weight: float) -> str:
    """1/588 rather than 0.0017: Eq. 2 weights are reciprocals of products of counts."""
    inverse = 1 / weight
    return f"1/{round(inverse)}" if abs(inverse - round(inverse)) < 1e-6 else f"{weight:.6g}"
