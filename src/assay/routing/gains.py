"""Where a revision helped: per-leaf and per-axis gains between two graded runs of one taxonomy.

A leaf *passes* when the auditor judged it so: a positive leaf met, a penalty leaf (negative
weight) not met. Only MET / UNMET verdicts count; a leaf without one (failed call, abstention)
is left out on both sides of every pair it would enter. An item's score on an axis (a level-1
node of the taxonomy, RubricsTree's "core dimension" d) is Eq. 4 over its graded active leaves
under that axis, S_d, with the tree's weights.

Example:
    >>> base = {"q1": {"a": LeafOutcome(True, 0.5, "ok"), "b": LeafOutcome(False, 0.5, "no")}}
    >>> revised = {"q1": {"a": LeafOutcome(True, 0.5, "ok"), "b": LeafOutcome(True, 0.5, "ok")}}
    >>> [(g.leaf_id, g.fixed, g.broken, g.gain) for g in leaf_gains(base, revised)]
    [('a', 0, 0, 0.0), ('b', 1, 0, 1.0)]
    >>> axis_scores(revised, {"a": "Skills", "b": "Memory"})
    {'Skills': {'q1': 1.0}, 'Memory': {'q1': 1.0}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.rubric import Taxonomy
from assay.scoring.formulas import score_points

Outcomes = Mapping[str, Mapping[str, "LeafOutcome"]]  # item id -> leaf id -> outcome


@dataclass(frozen=True)
class LeafOutcome:
    """One graded leaf of one item: passed, its (signed) weight, the auditor's reason."""

    passed: bool
    weight: float
    reasoning: str


@dataclass(frozen=True)
class LeafGain:
    """A leaf over the items graded on it in both runs: pass counts before and after, how many
    failures the revision fixed and passes it broke; ``gain`` is the change in pass rate."""

    leaf_id: str
    n_items: int
    base_passed: int
    revised_passed: int
    fixed: int
    broken: int

    @property
    def gain(self) -> float | None:
        return (self.revised_passed - self.base_passed) / self.n_items if self.n_items else None


def leaf_gains(base: Outcomes, revised: Outcomes) -> list[LeafGain]:
    """One :class:`LeafGain` per leaf graded in both runs on some item, by leaf id."""
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    for item_id, leaves in base.items():
        after = revised.get(item_id, {})
        for leaf_id, outcome in leaves.items():
            if leaf_id in after:
                pairs.setdefault(leaf_id, []).append((outcome.passed, after[leaf_id].passed))
    return [LeafGain(leaf_id, len(p), sum(b for b, _ in p), sum(a for _, a in p),
                     sum(a and not b for b, a in p), sum(b and not a for b, a in p))
            for leaf_id, p in sorted(pairs.items())]


def axis_scores(outcomes: Outcomes, axis_of: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """Axis -> item -> S_d (Eq. 4 over the item's graded leaves on that axis)."""
    out: dict[str, dict[str, float]] = {}
    for item_id, leaves in outcomes.items():
        by_axis: dict[str, list[tuple[float | None, float]]] = {}
        for leaf_id, o in leaves.items():
            # score_points reads a penalty's value as "met": a passed penalty was not met
            met = o.passed if o.weight > 0 else not o.passed
            by_axis.setdefault(axis_of[leaf_id], []).append((float(met), o.weight))
        for axis, points in by_axis.items():
            score = score_points(points, formula="pass-rate").score
            if score is not None:
                out.setdefault(axis, {})[item_id] = score
    return out


def axes_of(taxonomy: Taxonomy) -> dict[str, str]:
    """Leaf criterion id -> the name of its level-1 node (a leaf right under the root is its
    own axis)."""
    out: dict[str, str] = {}
    for node, path in taxonomy.walk():
        if node.criterion is not None:
            out[node.criterion.id] = path[1].name if len(path) > 1 else node.name
    return out
