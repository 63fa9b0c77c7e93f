"""Router (a): the LLM walks the taxonomy top down, pruning what is not relevant (§3.1).

One call per depth: the model rates every node of the current frontier from 0 to 1 (the first
call also classifies the query). A node's joint relevance is its own rating combined with its
parent's joint relevance: ``min`` (default: a leaf is active when every node on its path
reaches τ, i.e. only children of relevant nodes are opened) or ``product`` (relevance decays
with depth); the paper says "joint relevance along the path" without choosing. Eq. 3's soft threshold τ(q, c) is set per query from the
query class: emergency queries get the lowest τ (recall first), narrow factual ones the highest
(precision first); the paper gives no numbers, so :data:`DEFAULT_TAU` is ours and configurable.
A node whose joint relevance is below τ is pruned with its whole subtree, so only the children
of relevant nodes are ever shown to the model; a leaf at or above τ is active. A node the reply
leaves unrated is asked about once more (alone with the other unrated ones); one still unrated
is kept open at its path's relevance and listed in ``details["unrated"]``: a missing rating is
not a rating of 0.

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
        unrated_ids: list[str] = []
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
            ratings = _ratings(data)
            unrated = [(node, path) for node, path, _ in frontier if node.id not in ratings]
            if unrated:
                # a node left unrated is not known to be irrelevant: ask once more, for those
                # nodes only, before keeping them open
                again = await self.caller.ask(
                    STAGE, messages_of(None, tree_prompt(
                        text, memory, [_row(n, p) for n, p in unrated], depth,
                        first_level=False)),
                    tree_schema(False, sorted(useful)), item_id=query.id,
                    budget=tree_budget(len(unrated)))
                trace.calls += 1
                shown = {n.id for n, _ in unrated}
                ratings.update({k: v for k, v in _ratings(again).items() if k in shown})
            following = []
            for node, path, parent in frontier:
                rating = ratings.get(node.id)
                if rating is None:
                    # still unrated after the re-ask: kept open at its path's relevance and
                    # listed, never pruned as if the model had said "irrelevant"
                    unrated_ids.append(node.id)
                    own, joint, reason = None, parent, "not rated after a re-ask: kept open"
                else:
                    own = float(rating.get("relevance", 0.0))
                    joint = parent * own if self.combine == "product" else min(parent, own)
                    reason = str(rating.get("reason") or "")
                kept = rating is None or joint >= tau
                decisions[node.id] = {"relevance": own, "joint": round(joint, 6), "kept": kept}
                if not kept:
                    continue
                if node.criterion is not None:
                    chosen.append(Selection(id=node.criterion.id, reason=reason, score=joint))
                else:
                    following += [(c, [*path, c.name], joint)
                                  for c in node.children if c.id in useful]
            frontier, depth = following, depth + 1
        trace.details["nodes"] = decisions
        trace.details["pruned"] = sorted(k for k, v in decisions.items() if not v["kept"])
        if unrated_ids:
            trace.details["unrated"] = unrated_ids
        return chosen


def _ratings(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The reply's ratings by node id (a rating with no relevance is no rating)."""
    return {str(n.get("id")): n for n in data.get("nodes", [])
            if isinstance(n, Mapping) and isinstance(n.get("relevance"), (int, float))}


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
