"""A taxonomy of criteria (RubricsTree, seed 003): a tree whose leaves are atomic criteria.

Internal nodes group capabilities (level 1), sub-aspects (level 2, 3, ...); each leaf holds one
binary :class:`Criterion` with a ``trigger`` condition that a router reads to decide whether the
leaf applies to a query. Leaf weights follow RubricsTree's Eq. 2: the root has weight 1 and each
node splits its weight equally among its children, so a leaf's weight is the product of
1/len(children) along its path.

Example:
    >>> t = Taxonomy(id="pha", root={"id": "root", "name": "all", "children": [
    ...     {"id": "skills", "name": "Medical skills", "children": [
    ...         {"id": "s1", "name": "Refers emergencies",
    ...          "criterion": {"id": "s1", "text": "Refers chest pain to emergency care."}},
    ...         {"id": "s2", "name": "Stays in scope",
    ...          "criterion": {"id": "s2", "text": "Does not diagnose definitively."}}]},
    ...     {"id": "memory", "name": "Health memory", "children": [
    ...         {"id": "m1", "name": "Uses HbA1c",
    ...          "criterion": {"id": "m1", "text": "Mentions the user's HbA1c."}}]}]})
    >>> t.auto_weights()
    {'s1': 0.25, 's2': 0.25, 'm1': 0.5}
    >>> t.level_of("s1")
    2
    >>> t.dimensions(level=1)
    {'s1': 'Medical skills', 's2': 'Medical skills', 'm1': 'Health memory'}
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.rubric.criterion import Criterion, CriterionKind
from assay.rubric.rubric import Rubric


class TaxonomyNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str | None = None
    children: list[TaxonomyNode] = Field(default_factory=list)
    criterion: Criterion | None = Field(default=None, description="Set on leaves only.")

    @model_validator(mode="after")
    def _leaf_or_branch(self) -> TaxonomyNode:
        if self.children and self.criterion is not None:
            raise ValueError(f"node {self.id!r} has both children and a criterion")
        if not self.children and self.criterion is None:
            raise ValueError(f"leaf {self.id!r} has no criterion")
        if self.criterion is not None and self.criterion.kind is not CriterionKind.BINARY:
            raise ValueError(f"leaf {self.id!r}: taxonomy leaves are binary checks")
        return self

    @property
    def is_leaf(self) -> bool:
        return self.criterion is not None


class Taxonomy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    root: TaxonomyNode
    version: str = "1"

    @model_validator(mode="after")
    def _unique_ids(self) -> Taxonomy:
        node_ids: set[str] = set()
        criterion_ids: set[str] = set()
        duplicates: list[str] = []
        for node, _ in self.walk():
            if node.id in node_ids:
                duplicates.append(f"node id {node.id!r}")
            node_ids.add(node.id)
            if node.criterion is not None:
                if node.criterion.id in criterion_ids:
                    duplicates.append(f"criterion id {node.criterion.id!r}")
                criterion_ids.add(node.criterion.id)
        if duplicates:  # all of them: a curator fixes them in one pass
            raise ValueError("duplicate " + ", duplicate ".join(duplicates))
        return self

    def walk(self) -> Iterator[tuple[TaxonomyNode, list[TaxonomyNode]]]:
        """Every node with its ancestors (root first), depth first."""
        stack: list[tuple[TaxonomyNode, list[TaxonomyNode]]] = [(self.root, [])]
        while stack:
            node, path = stack.pop()
            yield node, path
            for child in reversed(node.children):
                stack.append((child, [*path, node]))

    def leaves(self) -> list[TaxonomyNode]:
        return [node for node, _ in self.walk() if node.is_leaf]

    def leaf_criteria(self) -> list[Criterion]:
        """The criterion of every leaf, depth first (the order of :meth:`leaves`)."""
        return [node.criterion for node, _ in self.walk() if node.criterion is not None]

    def level_of(self, node_id: str) -> int:
        """Depth below the root (root = 0, level-1 capabilities = 1, ...)."""
        for node, path in self.walk():
            if node.id == node_id:
                return len(path)
        raise KeyError(node_id)

    def auto_weights(self) -> dict[str, float]:
        """Leaf criterion id -> product of 1/len(children) along the root-to-leaf path."""
        weights: dict[str, float] = {}
        for node, path in self.walk():
            if node.criterion is not None:
                weight = 1.0
                for ancestor in path:
                    weight /= len(ancestor.children)
                weights[node.criterion.id] = weight
        return weights

    def dimensions(self, level: int = 1) -> dict[str, str]:
        """Leaf criterion id -> its branch at ``level`` (level-1: ``"Medical skills"``; level-2:
        ``"Medical skills > Safety"``): the core dimensions d of Eq. 4's S_d. A leaf at or
        above ``level`` is its own branch."""
        if level < 1:
            raise ValueError(f"dimension level must be 1 or more, got {level}")
        return {node.criterion.id: " > ".join(n.name for n in [*path[1:], node][:level])
                for node, path in self.walk() if node.criterion is not None}

    def to_rubric(self, criterion_ids: list[str] | None = None, *,
                  dimension_level: int | None = 1) -> Rubric:
        """A rubric of the chosen leaves (all by default), weighted by :meth:`auto_weights`.

        Each criterion's ``axis`` is its branch at ``dimension_level`` (:meth:`dimensions`),
        unless the leaf states one, so a run reports S_d per dimension with no leaf tagged by
        hand (``None``: no axis added).
        """
        weights = self.auto_weights()
        leaves = {criterion.id: criterion for criterion in self.leaf_criteria()}
        chosen = list(leaves) if criterion_ids is None else criterion_ids
        unknown = [cid for cid in chosen if cid not in leaves]
        if unknown:
            raise KeyError(f"taxonomy {self.id!r} has no leaves {unknown}")
        branch = self.dimensions(dimension_level) if dimension_level is not None else {}
        # A penalty leaf (negative weight) keeps its sign: its polarity, not its size, is authored.
        criteria = [
            leaves[cid].model_copy(update={
                "weight": weights[cid] * (-1 if leaves[cid].weight < 0 else 1),
                "axis": leaves[cid].axis or branch.get(cid)})
            for cid in chosen
        ]
        return Rubric(id=f"{self.id}:{len(criteria)}-leaves", criteria=criteria)
