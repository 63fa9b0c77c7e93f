"""Router (a): the LLM walks the taxonomy top down, pruning what is not relevant (§3.1).

One call per depth: the model rates every node of the current frontier from 0 to 1 (the first
call also classifies the query). A node's joint relevance is its own rating combined with its
parent's joint relevance: ``min`` (default: a leaf is active when every node on its path
reaches τ, i.e. only children of relevant nodes are opened) or ``product`` (relevance decays
with depth); the paper says "joint relevance along the path" without choosing. Eq. 3's soft threshold τ(q, c) is set per query from the
query class: emergency queries get the lowest τ (recall first), narrow factual ones the highest
(precision first); the paper gives no numbers, so :data:`DEFAULT_TAU` is ours and configurable.
A node whose joint relevance is below τ is pruned with its whole subtree, so only the children
of relevant nodes are ever shown to the model; a leaf at or above τ is active.

Example::

    router = TreeWalkRouter(Catalogue.from_taxonomy(tree), caller)
    routing = await router.route(item)          # at most depth-many "route_tree" calls
    routing.details["tau"], routing.details["pruned"]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from assay.jobs import StageCaller, messages_of
from assay.routing.base import Catalogue, Entry, Router, Selection, Trace, memory_text, query_text
from assay.routing.prompts import (
    TREE_PROMPT,
    prompt_version,
    tree_budget,
    tree_prompt,
    tree_schema,
)
from assay.rubric import TaxonomyNode

STAGE = "route_tree"
DEFAULT_TAU: dict[str, float] = {"emergency": 0.3, "broad": 0.4, "standard": 0.5, "narrow": 0.6}


class TreeWalkRouter(Router):
    kind = "tree"

    def __init__(self, catalogue: Catalogue, caller: StageCaller, *,
                 tau: Mapping[str, float] | None = None,
                 combine: Literal["product", "min"] = "min"):
        super().__init__(catalogue)
        if catalogue.taxonomy is None:
            raise ValueError("the tree walk needs a taxonomy (Catalogue.from_taxonomy)")
        if combine not in ("product", "min"):
            raise ValueError(f"combine must be 'product' or 'min', got {combine!r}")
        self.caller = caller
        self.tau = {**DEFAULT_TAU, **(tau or {})}
        bad = {k: v for k, v in self.tau.items() if not 0 <= v <= 1}
        if bad:
            raise ValueError(f"thresholds must be in [0, 1]: {bad}")
        self.combine = combine

    def config(self) -> dict[str, Any]:
        return {**super().config(), "model": self.caller.judge.id, "tau": self.tau,
                "combine": self.combine, "prompt": prompt_version(TREE_PROMPT)}

    async def select(self, query, eligible: list[Entry], trace: Trace) -> list[Selection]:
        taxonomy = self.catalogue.taxonomy
        assert taxonomy is not None
        wanted = {e.id for e in eligible}
        useful = _nodes_with_leaves(taxonomy.root, wanted)
        text, memory = query_text(query), memory_text(query)
        frontier = [(c, [c.name], 1.0) for c in taxonomy.root.children if c.id in useful]
        tau, depth, chosen = None, 1, []
        decisions: dict[str, dict[str, Any]] = {}
        while frontier:
            rows = [_row(node, path) for node, path, _ in frontier]
            prompt = tree_prompt(text, memory, rows, depth, first_level=tau is None)
            # the closed set of ids a rating may name: every node on the way to an eligible
            # leaf (a rating of a node not shown at this depth is ignored, never an error)
            data = await self.caller.ask(STAGE, messages_of(None, prompt),
                                         tree_schema(tau is None, sorted(useful)),
                                         item_id=query.id, budget=tree_budget(len(frontier)))
            trace.calls += 1
            if tau is None:
                trace.details["query_class"] = data["query_class"]
                tau = self.tau[data["query_class"]]
                trace.details["tau"] = tau
            ratings = {str(n.get("id")): n for n in data.get("nodes", [])}
            following = []
            for node, path, parent in frontier:
                rating = ratings.get(node.id, {})
                own = float(rating.get("relevance", 0.0))
                joint = parent * own if self.combine == "product" else min(parent, own)
                reason = str(rating.get("reason") or ("not rated" if not rating else ""))
                decisions[node.id] = {"relevance": own, "joint": round(joint, 6),
                                      "kept": joint >= tau}
                if joint < tau:
                    continue
                if node.criterion is not None:
                    chosen.append(Selection(id=node.criterion.id, reason=reason, score=joint))
                else:
                    following += [(c, [*path, c.name], joint)
                                  for c in node.children if c.id in useful]
            frontier, depth = following, depth + 1
        trace.details["nodes"] = decisions
        trace.details["pruned"] = sorted(k for k, v in decisions.items() if not v["kept"])
        return chosen


def _nodes_with_leaves(node: TaxonomyNode, wanted: set[str]) -> set[str]:
    """Ids of the nodes that have an eligible leaf at or below them."""
    found: set[str] = set()

    def visit(n: TaxonomyNode) -> bool:
        if n.criterion is not None:
            hit = n.criterion.id in wanted
        else:
            hits = [visit(c) for c in n.children]  # visit every child: each may be useful
            hit = any(hits)
        if hit:
            found.add(n.id)
        return hit

    visit(node)
    return found


def _row(node: TaxonomyNode, path: list[str]) -> str:
    if node.criterion is not None:
        about = node.criterion.trigger or node.criterion.text
    else:
        about = node.description or "covers " + ", ".join(c.name for c in node.children)
    return f"ID:{node.id}, Taxonomy: {' -> '.join(path)}, Trigger Condition: {about}"
