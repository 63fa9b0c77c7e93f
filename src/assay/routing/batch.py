"""Routing many items: one routing per distinct query, cached and resumable in a job store.

A routing depends on the query only (conversation and health memory), never on the response,
so items that share a query (several responses to one prompt, stress-test variants, RL
rollouts) share one routing. Routings are kept in the :class:`~assay.jobs.CallStore` under
their :func:`~assay.routing.base.query_key` (router config + catalogue + query): rerunning, or
resuming after a crash, makes no call for a query already routed.

Example::

    job = JobDir.open("runs/x/routing", kind="route", config=router.config())
    batch = await route_items(items, router, job.store, quiet=True)
    batch.routings["q1"].ids, batch.unique_queries, batch.calls
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.item import Item
from assay.jobs import CallStore, run_batch
from assay.routing.base import Router, Routing, query_key


@dataclass
class RoutedBatch:
    """Routings by item id, failures by item id, and what it cost."""

    routings: dict[str, Routing] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    unique_queries: int = 0
    calls: int = 0
    # the routing calls' calls, tokens and dollars (see assay.routing.grade.routing_call_totals)
    totals: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.failed


async def route_items(items: Sequence[Item], router: Router, store: CallStore, *,
                      quiet: bool = True) -> RoutedBatch:
    """Route every item (see the module docstring)."""
    keys = {item.id: query_key(router, item) for item in items}
    first: dict[str, Item] = {}
    for item in items:
        first.setdefault(keys[item.id], item)

    async def worker(item: Item) -> dict:
        return (await router.route(item)).model_dump(mode="json")

    result = await run_batch(list(first.values()), worker, store=store,
                             item_id=lambda item: keys[item.id], label="routing", quiet=quiet)
    batch = RoutedBatch(unique_queries=len(first))
    for item in items:
        key = keys[item.id]
        if key in result.results:
            batch.routings[item.id] = Routing.model_validate(result.results[key])
        else:
            batch.failed[item.id] = result.failed.get(key, "not routed")
    batch.calls = sum(r.calls for k, r in _by_key(batch, keys).items())
    return batch


def _by_key(batch: RoutedBatch, keys: dict[str, str]) -> dict[str, Routing]:
    return {keys[item_id]: routing for item_id, routing in batch.routings.items()}
