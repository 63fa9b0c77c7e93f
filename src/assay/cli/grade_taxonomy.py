"""``assay grade --taxonomy TREE --router KIND``: route, then grade the active leaves only.

The routing step runs before the usual grading run, in the same run directory
(``RUN/routing``); the run's items carry the rubric of their active leaves, weighted by the
tree (Eq. 2), and are scored with Eq. 4 (``--formula pass-rate``, unless another is given).
``--router all`` grades every leaf (no routing), for comparison.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue

ROUTERS = ("tree", "catalogue", "embedding", "relevance", "all")


def grade_with_taxonomy(args: dict[str, Any], options_of, source_of):
    from assay.rubric.io import read_taxonomy
    from assay.runs.runner import _new_run_dir

    if args["router"] not in ROUTERS:
        raise InputError(Issue(None, None, "--router", f"unknown router {args['router']!r}; "
                               f"choose one of {', '.join(ROUTERS)}"))
    if args["rubric"] is not None or args["healthbench"]:
        raise InputError(Issue(None, None, "--taxonomy", "the taxonomy is the rubric: drop "
                               "--rubric / --healthbench"))
    if args["dry_run"]:
        raise InputError(Issue(None, None, "--dry-run", "routing calls a model: a dry run of "
                               "--taxonomy is not supported; use --router all to bound it"))
    if args["items"] is None:
        raise InputError(Issue(None, None, "ITEMS", "with --taxonomy give the items again "
                               "(--resume RUN reuses the stored routing, making no new call)"))
    from assay.routing.data import resolve_taxonomy

    taxonomy = read_taxonomy(resolve_taxonomy(args["taxonomy"]))
    options = options_of(args)
    if args["formula"] is None:
        options.formula = "pass-rate"
    source = source_of(args)
    items = list(source)
    run_dir = Path(args["resume"] or options.run_dir or _new_run_dir(options))
    report, summary, issues = route_and_grade(
        items, taxonomy, options, run_dir, router=args["router"],
        router_judge=args["router_judge"], threshold=args["router_threshold"],
        resume=args["resume"], quiet=args["quiet"])
    _print_summary(summary, args["router"])
    report.issues = [*source.issues, *issues, *report.issues]
    report.extra_json = {"routing": summary}
    return report


def route_and_grade(items, taxonomy, options, run_dir: Path, *, router: str,
                    router_judge: str | None = None, threshold: float | None = None,
                    resume: Any = None, quiet: bool = True, routing_dir: Path | None = None):
    """Route ``items``, grade their active leaves in the run ``run_dir``; returns the run
    report, the routing summary (calls per item measured) and the items left out."""
    from assay.runs.runner import arun
    from assay.runs.sources import ItemSource

    options.run_dir = str(run_dir)
    if options.formula in (None, ""):
        options.formula = "pass-rate"
    args = {"router": router, "router_judge": router_judge, "router_threshold": threshold,
            "quiet": quiet}
    routed, batch, issues, summary, router_obj = asyncio.run(
        _route(items, taxonomy, args, options, Path(routing_dir or run_dir / "routing")))
    report = asyncio.run(arun(ItemSource(items=routed), options, resume=resume, console=None))
    n_items = summary["items"] or 1
    summary["grading_calls_made"] = report.totals.calls
    summary["measured_calls_per_item"] = (summary["routing_calls"] + report.totals.calls) / n_items
    if router_obj is not None:
        from assay.routing.grade import record_routing

        record_routing(run_dir, taxonomy, router_obj, batch, summary)
    (run_dir / "routing").mkdir(parents=True, exist_ok=True)
    (run_dir / "routing" / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                                      encoding="utf-8")
    return report, summary, issues


async def _route(items, taxonomy, args, options, routing_dir: Path):
    from assay.routing import Catalogue, make_router
    from assay.routing.base import Routing, Selection
    from assay.routing.batch import RoutedBatch
    from assay.routing.grade import attach_rubrics, route_for_grading, routing_summary

    n_judges = len(options.judges)
    catalogue = Catalogue.from_taxonomy(taxonomy)
    if args["router"] == "all":
        batch = RoutedBatch(unique_queries=len(items))
        for item in items:
            batch.routings[item.id] = Routing(router="all", active=[
                Selection(id=e.id, reason="every leaf") for e in catalogue.entries])
        routed, issues = attach_rubrics(items, taxonomy, batch)
        return routed, batch, issues, routing_summary(batch, taxonomy, n_judges), None
    caller, judge = None, None
    if args["router"] != "embedding":
        from assay.jobs import StageCaller
        from assay.judges import make_judge
        from assay.judges.specs import config_from

        spec = args["router_judge"] or options.judges[0]
        judge = make_judge(config_from(spec, options.judge_config_file))
        caller = StageCaller(judge, None)  # its store is the routing job's (route_for_grading)
    try:
        router = make_router(args["router"], catalogue, caller=caller,
                             threshold=args["router_threshold"])
        routed, batch, issues = await route_for_grading(items, taxonomy, router, routing_dir,
                                                        quiet=args["quiet"], caller=caller)
    finally:
        if judge is not None:
            await judge.aclose()
    return routed, batch, issues, routing_summary(batch, taxonomy, n_judges), router


def _print_summary(summary: dict[str, Any], router: str) -> None:
    from assay.cli.output import stdout

    stdout().print(
        f"routing ({router}): {summary['items']} items, {summary['unique_queries']} distinct "
        f"queries, {summary['mean_active_leaves']:.1f} of {summary['leaves']} leaves active on "
        f"average; calls per item {summary['calls_per_item']:.1f} (routing "
        f"{summary['routing_calls_per_item']:.1f} + grading {summary['grading_calls_per_item']:.1f})"
        f" vs {summary['calls_per_item_all_leaves']} grading every leaf; measured: "
        f"{summary['measured_calls_per_item']:.1f} calls per item", highlight=False)
