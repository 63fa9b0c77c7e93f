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
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, Issue
from assay.item import Item
from assay.routing.base import Catalogue, Routing, Selection
from assay.routing.batch import RoutedBatch
from assay.routing.factory import ignored_options, make_router
from assay.routing.grade import (
    attach_rubrics,
    route_for_grading,
    routing_failures,
    routing_summary,
    store_routing,
)
from assay.rubric import Taxonomy
from assay.runs.sources import ItemSource
from assay.runs.status import ENDED_BY_ITSELF

ROUTERS = ("tree", "catalogue", "embedding", "relevance", "all")


@dataclass
class TaxonomyRun:
    """A graded run with its routing: the run report, the summary of calls, the items that have
    nothing to grade (``issues``) and those whose routing failed (``routing_issues``: a resumed
    run retries exactly those routings)."""

    report: Any  # assay.runs.runner.RunReport
    summary: dict[str, Any]
    routings: dict[str, Routing] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    routing_issues: list[Issue] = field(default_factory=list)


@dataclass
class RoutedItems(ItemSource):
    """The routed items of a taxonomy run, fingerprinted by its input (every item, routed or
    not) and the taxonomy: a resume that routes an item whose routing failed before is the same
    run, not a changed config."""

    input_fingerprint: str = ""

    def fingerprint(self) -> str:
        return self.input_fingerprint


def input_fingerprint(items: Sequence[Item], taxonomy: Taxonomy) -> str:
    """What a taxonomy run grades: its items and the taxonomy (a SHA-256)."""
    digest = hashlib.sha256(ItemSource(items=list(items)).fingerprint().encode())
    digest.update(taxonomy.model_dump_json().encode())
    return digest.hexdigest()


def route_and_grade(items: Sequence[Item], taxonomy: Taxonomy, options: Any,
                    run_dir: str | Path, **kwargs: Any) -> TaxonomyRun:
    """Blocking :func:`aroute_and_grade` (for scripts; use the async one inside a loop)."""
    return asyncio.run(aroute_and_grade(items, taxonomy, options, run_dir, **kwargs))


async def aroute_and_grade(
    items: Sequence[Item], taxonomy: Taxonomy, options: Any, run_dir: str | Path, *,
    router: str = "tree", router_judge: Any = None, threshold: float | None = None,
    resume: str | Path | None = None, quiet: bool = True, routing_dir: str | Path | None = None,
    formula: str | None = "pass-rate", stands_for: Sequence[Item] | None = None,
    dimension_level: int | None = 1,
) -> TaxonomyRun:
    """Route, then grade ``items`` with ``options`` (a :class:`~assay.runs.options.RunOptions`)
    in ``run_dir``, scoring with ``formula`` (Eq. 4 by default; None keeps the options' own).
    ``router_judge`` defaults to the first grading judge; ``threshold`` is the router's τ or
    cut (see :func:`make_router`). ``dimension_level`` picks the branches whose S_d the report
    gives (``scores.by_axis``: level-1 capabilities by default, 2 for sub-aspects). Routing and grading share one budget of
    ``options.budget_usd``: what routing spends, grading cannot.

    The routing calls count in the run's totals (calls, tokens, dollars: ``manifest.json``
    and the report's); a routing that failed leaves the run ``incomplete`` (or ``budget``, when
    the budget stopped it), and resuming retries exactly the failed routings.

    ``stands_for``: the items the run's fingerprint is taken from (default ``items``): a run of
    revised responses stands for its base items, so resuming it with more revisions done is
    the same run."""
    from assay.judges import Budget
    from assay.runs.runner import arun
    from assay.runs.store import RunStore

    if router not in ROUTERS:
        raise ValueError(f"unknown router {router!r}; choose one of {', '.join(ROUTERS)}")
    ignored = ignored_options(router, judge=router_judge is not None,
                              threshold=threshold is not None)
    if ignored:
        raise ConfigError(f"the {router} router ignores its {' and '.join(ignored)}: drop it")
    run_dir = Path(run_dir)
    if resume is not None:  # one that cannot be written is refused before any routing call
        RunStore.open(resume, write=True).close()
    options = options.replace(run_dir=str(run_dir), formula=formula or options.formula)
    budget = Budget(options.budget_usd) if options.budget_usd is not None else None
    routed, batch, issues, router_obj = await _route(
        items, taxonomy, options, Path(routing_dir or run_dir / "routing"), router=router,
        router_judge=router_judge, threshold=threshold, quiet=quiet, budget=budget,
        dimension_level=dimension_level)
    summary = routing_summary(batch, taxonomy, len(options.judges))
    fingerprint = input_fingerprint(items if stands_for is None else stands_for, taxonomy)
    source = RoutedItems(items=routed, input_fingerprint=fingerprint,
                         may_be_empty=bool(batch.failed))
    report = await arun(source, options, resume=resume, budget=budget)
    _settle_run(report, taxonomy, router_obj, batch, summary,
                budget_stopped=budget is not None and budget.exhausted)
    (run_dir / "routing").mkdir(parents=True, exist_ok=True)
    (run_dir / "routing" / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                                      encoding="utf-8")
    return TaxonomyRun(report, summary, batch.routings, issues, routing_failures(batch))


def _settle_run(report: Any, taxonomy: Taxonomy, router_obj: Any, batch: RoutedBatch,
                summary: dict[str, Any], *, budget_stopped: bool) -> None:
    """Put the routing (and its calls' totals) in the graded run, and restate the run's status,
    totals and manifest with them."""
    from assay.runs.manifest import write_manifest
    from assay.runs.store import RunStore, Totals

    status = run_status(report.status, batch, budget_stopped=budget_stopped)
    store = RunStore.open(report.run_dir)
    try:
        grading = store.grading_totals()
        grading_calls = grading.calls
        n_items = summary["items"] or 1
        summary["grading_calls_made"] = grading_calls
        summary["grading_totals"] = {k: getattr(grading, k) for k in (
            "calls", "calls_ok", "cache_hits", "errors", "prompt_tokens", "completion_tokens",
            "cost_usd")}
        summary["measured_calls_per_item"] = (summary["routing_calls"] + grading_calls) / n_items
        summary["routing_totals"] = batch.totals
        summary["routing_failed"] = dict(batch.failed)
        store_routing(store, taxonomy, router_obj, batch, summary)
        sessions = json.loads(store.meta("sessions") or "[]")
        if sessions:
            sessions[-1]["status"] = status
        store.set_meta("sessions", sessions)
        report.manifest = write_manifest(store, status=status, sessions=sessions)
    finally:
        store.close()
    report.status = status
    report.totals = Totals(**report.manifest["totals"])
    if batch.failed:
        items, calls, commonest = report.missing
        report.missing = (items + len(batch.failed), calls + batch.totals.get("errors", 0),
                          commonest or next(iter(batch.failed.values())))


def run_status(grading: str, batch: RoutedBatch, *, budget_stopped: bool) -> str:
    """A taxonomy run's status: its grading run's, unless some routing failed: then
    ``budget`` if the budget stopped the run, else ``incomplete`` (never ``complete``).

    >>> run_status("complete", RoutedBatch(failed={"q1": "unparseable"}), budget_stopped=False)
    'incomplete'
    """
    if not batch.failed or grading in ENDED_BY_ITSELF:
        return grading
    return "budget" if budget_stopped else "incomplete"


async def _route(items, taxonomy, options, routing_dir: Path, *, router, router_judge,
                 threshold, quiet, budget, dimension_level):
    catalogue = Catalogue.from_taxonomy(taxonomy)
    if router == "all":
        batch = RoutedBatch(unique_queries=len(items))
        for item in items:
            batch.routings[item.id] = Routing(router="all", active=[
                Selection(id=e.id, reason="every leaf") for e in catalogue.entries])
        routed, issues = attach_rubrics(items, taxonomy, batch, dimension_level=dimension_level)
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
                                                        quiet=quiet, caller=caller,
                                                        dimension_level=dimension_level)
    finally:
        if judge is not None:
            await judge.aclose()
        if cache is not None:
            cache.close()
    return routed, batch, issues, router_obj
