"""The work behind ``assay route`` (imported only when a command runs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from assay.cli.output import EXIT_INCOMPLETE, exit_for_failed_items, fail, stderr, stdout
from assay.errors import AssayError, InputError, Issue


def run_route(**args: Any) -> None:
    try:
        asyncio.run(_route(args))
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


async def _route(args: dict[str, Any]) -> None:
    from assay.io import load_items, read_taxonomy
    from assay.io.jsonl import write_jsonl
    from assay.jobs import JobDir, StageCaller
    from assay.routing import Catalogue, make_router, route_items
    from assay.routing.data import resolve_taxonomy
    from assay.routing.factory import ignored_options

    ignored = ignored_options(args["router"], judge=args["judge"] is not None,
                              threshold=args["threshold"] is not None)
    if ignored:
        raise InputError([Issue(None, None, f"--{name}", f"the {args['router']} router "
                                "ignores it: drop it") for name in ignored])
    taxonomy = read_taxonomy(resolve_taxonomy(args["taxonomy"]))
    items = load_items(args["items"])
    judge = caller = None
    if args["router"] != "embedding":
        if args["judge"] is None:
            raise InputError(Issue(None, None, "--judge", f"the {args['router']} router calls "
                                   "a model: give a judge spec"))
        from assay.judges import make_judge
        from assay.judges.specs import config_from

        judge = make_judge(config_from(args["judge"], str(args["config"]) if args["config"]
                                       else None))
        caller = StageCaller(judge, None)
    try:
        router = make_router(args["router"], Catalogue.from_taxonomy(taxonomy), caller=caller,
                             threshold=args["threshold"])
        job = JobDir.open(args["job_dir"], kind="route",
                          config={"router": router.config(), "taxonomy": taxonomy.id,
                                  "taxonomy_version": taxonomy.version})
        if caller is not None:
            caller.store = job.store
        status = "incomplete"
        try:
            batch = await route_items(items, router, job.store, quiet=args["quiet"])
            status = "complete" if batch.complete else "incomplete"
        finally:
            job.finish(status=status, extra={"in_flight": {judge.id: judge.in_flight}}
                       if judge is not None else None)
    finally:
        if judge is not None:
            await judge.aclose()
    rows = [{"id": item_id, **routing.model_dump(mode="json")}
            for item_id, routing in batch.routings.items()]
    write_jsonl(rows, args["out"])
    mean = sum(len(r["active"]) for r in rows) / len(rows) if rows else 0.0
    stdout().print(f"routed {len(rows)} items ({batch.unique_queries} distinct queries, "
                   f"{batch.calls} calls): {mean:.1f} of {len(taxonomy.leaves())} leaves active "
                   f"on average -> {args['out']}", highlight=False)
    from assay.cli.grade_taxonomy import excluded_line
    from assay.routing.grade import dropped_ids, dropped_line, excluded_for_missing_data

    excluded = excluded_for_missing_data(batch)
    if excluded:
        stdout().print(excluded_line(excluded), highlight=False, soft_wrap=True)
    dropped = dropped_ids(batch)
    if dropped:
        stderr().print(dropped_line(dropped), highlight=False, soft_wrap=True)
    exit_for_failed_items(batch.failed, "incomplete", incomplete_exit=EXIT_INCOMPLETE)


def read_routings(path: Path) -> dict[str, set[str]]:
    """Active leaf ids per query from a route-run JSONL or a run directory's routing."""
    if path.is_dir():
        from assay.runs.store import RunStore

        store = RunStore.open(path)
        try:
            meta = json.loads(store.meta("routing") or "null")
        finally:
            store.close()
        if not meta:
            raise InputError(Issue(str(path), None, None, "this run was not graded with "
                                   "--taxonomy: it holds no routing"))
        return {k: {s["id"] for s in v["active"]} for k, v in meta["items"].items()}
    from pydantic import BaseModel, ConfigDict

    from assay.io.jsonl import iter_models

    class Row(BaseModel):
        model_config = ConfigDict(extra="allow")
        id: str
        active: list[dict[str, Any]]

    issues: list[Issue] = []
    out = {row.id: {str(s.get("id")) for s in row.active}
           for _, row in iter_models(path, Row, issues)}
    if issues:
        raise InputError(issues)
    return out


def run_route_eval(**args: Any) -> None:
    from assay.cli.command import dump_json, report

    def show(result):
        from assay.cli.tables.routing import route_eval_table

        evaluation, n_leaves = result
        yield route_eval_table(evaluation, n_leaves)
        if evaluation.missing:
            yield (f"{len(evaluation.missing)} expert queries were not routed: "
                   f"{', '.join(evaluation.missing[:5])}")

    json_out = None if args["json_out"] is None else Path(args["json_out"])
    report(lambda: _route_eval(args), show, json_out=json_out,
           dump=lambda result: dump_json(result[0].to_dict(), newline=True))


def _route_eval(args: dict[str, Any]):
    """The evaluation of the routings against the experts, and the taxonomy's leaf count."""
    from assay.io import read_taxonomy
    from assay.routing.data import resolve_taxonomy
    from assay.routing.evaluate import evaluate_routing, read_expert_selections

    taxonomy = read_taxonomy(resolve_taxonomy(args["taxonomy"]))
    universe = [criterion.id for criterion in taxonomy.leaf_criteria()]
    expert, scenarios = read_expert_selections(args["expert"], set(universe))
    predicted = read_routings(Path(args["routings"]))
    branch_of = {}
    for node, path in taxonomy.walk():
        if node.criterion is not None and len(path) > args["branch_level"]:
            branch_of[node.criterion.id] = path[args["branch_level"]].name
    evaluation = evaluate_routing(predicted, expert, universe=universe, branch_of=branch_of,
                                  scenario_of=scenarios)
    return evaluation, len(universe)
