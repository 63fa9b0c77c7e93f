"""``assay grade --taxonomy TREE --router KIND``: route, then grade the active leaves only.

The routing step runs before the usual grading run, in the same run directory
(``RUN/routing``); the run's items carry the rubric of their active leaves, weighted by the
tree (Eq. 2), and are scored with Eq. 4 (``--formula pass-rate``, unless another is given).
``--router all`` grades every leaf (no routing), for comparison.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue


def grade_with_taxonomy(args: dict[str, Any], options_of, source_of):
    from assay.io import read_taxonomy
    from assay.routing.factory import ignored_options
    from assay.routing.run import ROUTERS, route_and_grade
    from assay.runs.runner import new_run_dir

    if args["router"] not in ROUTERS:
        raise InputError(Issue(None, None, "--router", f"unknown router {args['router']!r}; "
                               f"choose one of {', '.join(ROUTERS)}"))
    ignored = ignored_options(args["router"], judge=args["router_judge"] is not None,
                              threshold=args["router_threshold"] is not None)
    if ignored:
        raise InputError([Issue(None, None, f"--router-{name}", f"the {args['router']} router "
                                f"ignores it: drop it") for name in ignored])
    if args["rubric"] is not None or args["healthbench"]:
        raise InputError(Issue(None, None, "--taxonomy", "the taxonomy is the rubric: drop "
                               "--rubric / --healthbench"))
    if args["dry_run"]:
        raise InputError(Issue(None, None, "--dry-run", "routing calls a model: a dry run of "
                               "--taxonomy is not supported; use --router all to bound it"))
    if args["items"] is None and args.get("inspect_items") is None:
        raise InputError(Issue(None, None, "ITEMS", "with --taxonomy give the items again "
                               "(--resume RUN reuses the stored routing, making no new call)"))
    from assay.routing.data import resolve_taxonomy

    taxonomy = read_taxonomy(resolve_taxonomy(args["taxonomy"]))
    options = options_of(args)
    source = source_of(args)
    items = list(source)
    if not items:
        from assay.runs.runner import no_items

        raise no_items(source)
    run_dir = Path(args["resume"] or options.run_dir or new_run_dir(options))
    result = route_and_grade(
        items, taxonomy, options, run_dir, router=args["router"],
        router_judge=args["router_judge"], threshold=args["router_threshold"],
        resume=args["resume"], quiet=args["quiet"], formula=args["formula"] or "pass-rate",
        dimension_level=args["dimension_level"])
    _print_summary(result.summary, args["router"])
    from assay.runs.runner import record_skipped_input

    report = record_skipped_input(result.report, [*source.issues, *result.issues])
    report.issues = [*source.issues, *result.issues, *report.issues]
    report.extra_json = {"routing": result.summary}
    # the items and the routing are given again on a resume (they are not stored with the run)
    report.resume_command = f"the same assay grade command with --resume {run_dir}"
    return report


def _print_summary(summary: dict[str, Any], router: str) -> None:
    from assay.cli.output import stderr, stdout

    stdout().print(
        f"routing ({router}): {summary['items']} items, {summary['unique_queries']} distinct "
        f"queries, {summary['mean_active_leaves']:.1f} of {summary['leaves']} leaves active on "
        f"average; calls per item {summary['calls_per_item']:.1f} (routing "
        f"{summary['routing_calls_per_item']:.1f} + grading {summary['grading_calls_per_item']:.1f})"
        f" vs {summary['calls_per_item_all_leaves']} grading every leaf; measured: "
        f"{summary['measured_calls_per_item']:.1f} calls per item", highlight=False)
    excluded = summary.get("excluded_for_missing_data") or {}
    if excluded:
        stdout().print(excluded_line(excluded), highlight=False, soft_wrap=True)
    if summary.get("dropped_ids"):
        from assay.routing.grade import dropped_line

        stderr().print(dropped_line(summary["dropped_ids"]), highlight=False, soft_wrap=True)
    for item_id, reason in summary.get("routing_failed", {}).items():
        # a plain string: the console reads no markup and no escape from the quoted error
        stderr().print(f"routing failed for item {item_id!r} (a resume retries it): {reason}",
                       highlight=False, soft_wrap=True)


def excluded_line(excluded: dict[str, int], shown: int = 8) -> str:
    """What the health-memory guard excluded, most frequent requirement first.

    >>> excluded_line({"lab:ldl": 3, "wearable:hrv": 1}, shown=1)
    'leaves excluded for missing health data: 4 (item, leaf) pairs; lab:ldl 3, and 1 more'
    """
    parts = [f"{need} {n}" for need, n in list(excluded.items())[:shown]]
    if len(excluded) > shown:
        parts.append(f"and {len(excluded) - shown} more")
    return (f"leaves excluded for missing health data: {sum(excluded.values())} (item, leaf) "
            f"pairs; " + ", ".join(parts))
