"""The Python API of RubricsTree grading: route items over a taxonomy, then grade the run.

:func:`route_and_grade` (or the async :func:`aroute_and_grade`) is what ``assay grade
--taxonomy TREE --router KIND`` runs: routing into ``RUN/routing`` (or a shared
``routing_dir``), a normal grading run on each item's active leaves (Eq. 4 by default), the
routing recorded in the run, and the calls per item measured against grading every leaf.

Example::

    from assay.routing.run import route_and_grade
    from assay.runs import RunOptions
    result = route_and_grade(items, read_taxonomy("tree.yaml"),
                             RunOptions(judges=["openai:gpt-4.1-mini"],
                                        templates={"binary": "auditor"}, budget_usd=2.0),
                             "runs/tree", router="tree")
    result.report.scores.overall, result.summary["measured_calls_per_item"]
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import Issue
from assay.item import Item
from assay.routing.base import Catalogue, Routing, Selection
from assay.routing.batch import RoutedBatch
from assay.routing.factory import make_router
from assay.routing.grade import (
    attach_rubrics,
    record_routing,
    route_for_grading,
    routing_summary,
)
from assay.rubric import Taxonomy

ROUTERS = ("tree", "catalogue", "embedding", "relevance", "all")


@dataclass
class TaxonomyRun:
    """A graded run with its routing: the run report, the summary of calls, items left out."""

    report: Any  # assay.runs.runner.RunReport
    summary: dict[str, Any]
    routings: dict[str, Routing] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)


def route_and_grade(items: Sequence[Item], taxonomy: Taxonomy, options: Any,
                    run_dir: str | Path, **kwargs: Any) -> TaxonomyRun:
    """Blocking :func:`aroute_and_grade` (for scripts; use the async one inside a loop)."""
    return asyncio.run(aroute_and_grade(items, taxonomy, options, run_dir, **kwargs))


async def aroute_and_grade(
    items: Sequence[Item], taxonomy: Taxonomy, options: Any, run_dir: str | Path, *,
    router: str = "tree", router_judge: Any = None, threshold: float | None = None,
    resume: str | Path | None = None, quiet: bool = True, routing_dir: str | Path | None = None,
    formula: str | None = "pass-rate",
) -> TaxonomyRun:
    """Route, then grade ``items`` with ``options`` (a :class:`~assay.runs.options.RunOptions`)
    in ``run_dir``, scoring with ``formula`` (Eq. 4 by default; None keeps the options' own).
    ``router_judge`` defaults to the first grading judge; ``threshold`` is the router's τ or
    cut (see :func:`make_router`). Routing and grading share one budget of
    ``options.budget_usd``: what routing spends, grading cannot."""
    from assay.judges import Budget
    from assay.runs.runner import arun
    from assay.runs.sources import ItemSource
    from assay.runs.store import RunStore

    if router not in ROUTERS:
        raise ValueError(f"unknown router {router!r}; choose one of {', '.join(ROUTERS)}")
    run_dir = Path(run_dir)
    if resume is not None:  # one that cannot be written is refused before any routing call
        RunStore.open(resume, write=True).close()
    options = options.replace(run_dir=str(run_dir), formula=formula or options.formula)
    budget = Budget(options.budget_usd) if options.budget_usd is not None else None
    routed, batch, issues, router_obj = await _route(
        items, taxonomy, options, Path(routing_dir or run_dir / "routing"), router=router,
        router_judge=router_judge, threshold=threshold, quiet=quiet, budget=budget)
    summary = routing_summary(batch, taxonomy, len(options.judges))
    report = await arun(ItemSource(items=routed), options, resume=resume, budget=budget)
    n_items = summary["items"] or 1
    summary["grading_calls_made"] = report.totals.calls
    summary["measured_calls_per_item"] = (summary["routing_calls"] + report.totals.calls) / n_items
    if router_obj is not None:
        record_routing(run_dir, taxonomy, router_obj, batch, summary)
    (run_dir / "routing").mkdir(parents=True, exist_ok=True)
    (run_dir / "routing" / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                                      encoding="utf-8")
    return TaxonomyRun(report, summary, batch.routings, issues)


async def _route(items, taxonomy, options, routing_dir: Path, *, router, router_judge,
                 threshold, quiet, budget):
    catalogue = Catalogue.from_taxonomy(taxonomy)
    if router == "all":
        batch = RoutedBatch(unique_queries=len(items))
        for item in items:
            batch.routings[item.id] = Routing(router="all", active=[
                Selection(id=e.id, reason="every leaf") for e in catalogue.entries])
        routed, issues = attach_rubrics(items, taxonomy, batch)
        return routed, batch, issues, None
    caller = judge = cache = None
    if router != "embedding":
        from assay.jobs import StageCaller
        from assay.judges import make_judge
        from assay.judges.cache import ResponseCache
        from assay.judges.specs import config_from

        spec = router_judge or options.judges[0]
        config = config_from(spec, options.judge_config_file) if isinstance(spec, str) else spec
        # Routing shares the run's response cache and budget: what it spends, grading cannot.
        cache = ResponseCache(options.cache_path) if options.cache_path else None
        judge = make_judge(config, cache=cache, budget=budget)
        caller = StageCaller(judge, None)  # its store is the routing job's (route_for_grading)
    try:
        router_obj = make_router(router, catalogue, caller=caller, threshold=threshold)
        routed, batch, issues = await route_for_grading(items, taxonomy, router_obj, routing_dir,
                                                        quiet=quiet, caller=caller)
    finally:
        if judge is not None:
            await judge.aclose()
        if cache is not None:
            cache.close()
    return routed, batch, issues, router_obj
