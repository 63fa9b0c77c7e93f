"""Grading with a taxonomy: route each item, then grade only its active leaves (RubricsTree).

Each item gets the rubric of its active leaves, weighted by the tree's auto-weights (Eq. 2,
static full-tree weights; a penalty leaf keeps its sign), and the run scores it with the
``pass-rate`` formula, Eq. 4: ``S = Σ_{active} w·f / Σ_{active} w``. An item with no active
leaf is not graded (Eq. 4 is undefined on an empty set) and is reported. Routing lives in the
run directory (``RUN/routing``: its manifest and traced calls) and in the run store's
``routing`` metadata (active leaves with reasons per item).

Example::

    routed, batch, issues = await route_for_grading(items, taxonomy, router, run_dir / "routing")
    report = await arun(ItemSource(items=routed), options)      # the usual grading run
    record_routing(run_dir, taxonomy, router, batch)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import Issue
from assay.item import Item
from assay.jobs import JobDir, StageCaller
from assay.routing.base import Router
from assay.routing.batch import RoutedBatch, route_items
from assay.rubric import Taxonomy


async def route_for_grading(
    items: Sequence[Item], taxonomy: Taxonomy, router: Router, routing_dir: str | Path, *,
    quiet: bool = True, caller: StageCaller | None = None,
) -> tuple[list[Item], RoutedBatch, list[Issue]]:
    """Route ``items`` in the job ``routing_dir`` (usually ``RUN/routing``) and give each the
    rubric of its active leaves.

    ``caller`` (the router's) is pointed at the routing job's call store, so every routing call
    is traced in the run directory.
    """
    job = JobDir.open(Path(routing_dir), kind="route",
                      config={"router": router.config(), "taxonomy": taxonomy.id,
                              "taxonomy_version": taxonomy.version})
    if caller is not None:
        caller.store = job.store
    try:
        batch = await route_items(items, router, job.store, quiet=quiet)
    finally:
        job.finish(status="complete")
    routed, issues = attach_rubrics(items, taxonomy, batch)
    return routed, batch, issues


def attach_rubrics(items: Sequence[Item], taxonomy: Taxonomy,
                   batch: RoutedBatch) -> tuple[list[Item], list[Issue]]:
    """Items carrying the rubric of their active leaves; the rest reported as issues."""
    routed, issues = [], []
    for item in items:
        if item.id in batch.failed:
            issues.append(Issue(None, None, f"item[{item.id}]", f"routing failed: "
                                f"{batch.failed[item.id]}"))
            continue
        ids = batch.routings[item.id].ids
        if not ids:
            issues.append(Issue(None, None, f"item[{item.id}]",
                                "no active leaf: nothing to grade (Eq. 4 is undefined)"))
            continue
        try:
            rubric = taxonomy.to_rubric(ids)
        except ValidationError:
            issues.append(Issue(None, None, f"item[{item.id}]",
                                "only penalty leaves are active: nothing to pass"))
            continue
        routed.append(item.model_copy(update={"rubric": rubric.model_copy(
            update={"id": f"{taxonomy.id}@{taxonomy.version}:{item.id}"})}))
    return routed, issues


def routing_summary(batch: RoutedBatch, taxonomy: Taxonomy, n_judges: int = 1) -> dict[str, Any]:
    """Calls and active leaves per item, against grading every leaf."""
    n_items = len(batch.routings) + len(batch.failed)
    active = [len(r.ids) for r in batch.routings.values()]
    n_leaves = len(taxonomy.leaves())
    mean_active = sum(active) / len(active) if active else 0.0
    routing_calls_per_item = batch.calls / n_items if n_items else 0.0
    return {
        "items": n_items,
        "unique_queries": batch.unique_queries,
        "leaves": n_leaves,
        "mean_active_leaves": mean_active,
        "routing_calls": batch.calls,
        "routing_calls_per_item": routing_calls_per_item,
        "grading_calls_per_item": mean_active * n_judges,
        "calls_per_item": routing_calls_per_item + mean_active * n_judges,
        "calls_per_item_all_leaves": n_leaves * n_judges,
    }


def record_routing(run_dir: str | Path, taxonomy: Taxonomy, router: Router,
                   batch: RoutedBatch, summary: dict[str, Any]) -> None:
    """Store the routing of every item in the run store's metadata (``routing``)."""
    from assay.runs.store import RunStore

    store = RunStore.open(run_dir, write=True)
    try:
        store.set_meta("routing", {
            "taxonomy": {"id": taxonomy.id, "version": taxonomy.version},
            "router": router.config(),
            "summary": summary,
            "items": {k: r.model_dump(mode="json") for k, r in batch.routings.items()},
            "failed": batch.failed,
        })
    finally:
        store.close()
