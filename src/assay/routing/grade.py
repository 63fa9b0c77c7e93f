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
from assay.jobs import CallStore, JobDir, StageCaller
from assay.routing.base import Router
from assay.routing.batch import RoutedBatch, route_items
from assay.rubric import Taxonomy


async def route_for_grading(
    items: Sequence[Item], taxonomy: Taxonomy, router: Router, routing_dir: str | Path, *,
    quiet: bool = True, caller: StageCaller | None = None, dimension_level: int | None = 1,
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
    batch = None
    try:
        batch = await route_items(items, router, job.store, quiet=quiet)
        batch.totals = routing_call_totals(job.store, {item.id for item in items})
    finally:
        job.finish(status="incomplete" if batch is None or batch.failed else "complete")
    routed, issues = attach_rubrics(items, taxonomy, batch, dimension_level=dimension_level)
    return routed, batch, issues


def routing_call_totals(store: CallStore, item_ids: set[str]) -> dict[str, Any]:
    """The calls, tokens and dollars of the routing calls made for ``item_ids`` (a call is
    stored under the id of the first item of its query), in the fields of the run's
    :class:`~assay.runs.store.Totals`. A call never sent (refused by the budget) is not one."""
    totals: dict[str, Any] = dict.fromkeys(("calls", "calls_ok", "cache_hits", "errors",
                                            "prompt_tokens", "completion_tokens", "abandoned"), 0)
    totals["cost_usd"] = totals["estimated_usd"] = 0.0
    for call in store.calls():
        if call.item_id not in item_ids or (call.attempts == 0 and not call.cached):
            continue
        totals["calls"] += 1
        totals["calls_ok"] += call.ok
        totals["cache_hits"] += call.cached
        totals["errors"] += not call.ok
        totals["prompt_tokens"] += call.prompt_tokens
        totals["completion_tokens"] += call.completion_tokens
        totals["cost_usd"] += call.cost_usd
        totals["estimated_usd"] += call.estimated_usd
        totals["abandoned"] += call.abandoned
    return totals


def routing_failures(batch: RoutedBatch) -> list[Issue]:
    """One issue per item whose routing failed (a resumed run retries those routings)."""
    return [Issue(None, None, f"item[{item_id}]", f"routing failed: {reason}")
            for item_id, reason in batch.failed.items()]


def attach_rubrics(items: Sequence[Item], taxonomy: Taxonomy, batch: RoutedBatch, *,
                   dimension_level: int | None = 1) -> tuple[list[Item], list[Issue]]:
    """Items carrying the rubric of their active leaves, each leaf's axis its branch at
    ``dimension_level`` (S_d per dimension); the items that have nothing to grade reported as
    issues. Items whose routing failed are left out (see :func:`routing_failures`)."""
    routed, issues = [], []
    for item in items:
        if item.id in batch.failed:
            continue
        ids = batch.routings[item.id].ids
        if not ids:
            issues.append(Issue(None, None, f"item[{item.id}]",
                                "no active leaf: nothing to grade (Eq. 4 is undefined)"))
            continue
        try:
            rubric = taxonomy.to_rubric(ids, dimension_level=dimension_level)
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
        "excluded_for_missing_data": excluded_for_missing_data(batch),
        "dropped_ids": dropped_ids(batch),
    }


def dropped_ids(batch: RoutedBatch) -> dict[str, list[str]]:
    """Per item, the ids its router's reply named that are not in the catalogue, dropped after
    the re-asks (:mod:`assay.routing.catalogue`); items with none are left out.

    >>> from assay.routing.base import Routing
    >>> dropped_ids(RoutedBatch(routings={"q": Routing(router="catalogue",
    ...     details={"dropped_ids": ["zz"]}), "r": Routing(router="catalogue")}))
    {'q': ['zz']}
    """
    return {item_id: list(routing.details["dropped_ids"])
            for item_id, routing in batch.routings.items()
            if routing.details.get("dropped_ids")}


def dropped_line(dropped: dict[str, list[str]], shown: int = 5) -> str:
    """What the routers' replies named outside the catalogue, and was dropped.

    >>> print(dropped_line({"q1": ["zz"], "q2": ["yy", "xx"]}, shown=1))
    unknown leaf ids dropped from 2 routings (after the re-asks; the known ids kept):
    q1: zz, and 1 more
    """
    parts = [f"{item}: {', '.join(ids)}" for item, ids in list(dropped.items())[:shown]]
    if len(dropped) > shown:
        parts.append(f"and {len(dropped) - shown} more")
    return (f"unknown leaf ids dropped from {len(dropped)} routings (after the re-asks; the "
            f"known ids kept): {', '.join(parts)}")


def excluded_for_missing_data(batch: RoutedBatch) -> dict[str, int]:
    """How many (item, leaf) pairs the health-memory guard excluded, by missing requirement.

    >>> from assay.routing.base import Routing
    >>> batch = RoutedBatch(routings={"q": Routing(router="tree", excluded={
    ...     "b1": "health memory has no lab:ldl", "b2": "health memory has no lab:ldl"})})
    >>> excluded_for_missing_data(batch)
    {'lab:ldl': 2}
    """
    counts: dict[str, int] = {}
    for routing in batch.routings.values():
        for reason in routing.excluded.values():
            missing = reason.removeprefix("health memory has no ")
            counts[missing] = counts.get(missing, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def record_routing(run_dir: str | Path, taxonomy: Taxonomy, router: Router | None,
                   batch: RoutedBatch, summary: dict[str, Any]) -> None:
    """Store the routing of every item in the run store's metadata (see :func:`store_routing`)."""
    from assay.runs.store import RunStore

    store = RunStore.open(run_dir, write=True)
    try:
        store_routing(store, taxonomy, router, batch, summary)
    finally:
        store.close()


def store_routing(store: Any, taxonomy: Taxonomy, router: Router | None, batch: RoutedBatch,
                  summary: dict[str, Any]) -> None:
    """Put the routing of every item (``routing``: active leaves with reasons, failures) and the
    routing calls' totals (``routing_totals``, counted in the run's totals) in the open run
    store ``store``. ``router`` None: every leaf was graded, nothing was routed."""
    if router is not None:
        store.set_meta("routing", {
            "taxonomy": {"id": taxonomy.id, "version": taxonomy.version},
            "router": router.config(),
            "summary": summary,
            "items": {k: r.model_dump(mode="json") for k, r in batch.routings.items()},
            "failed": batch.failed,
        })
    store.set_meta("routing_totals", batch.totals)  # also marks the run as a taxonomy run
