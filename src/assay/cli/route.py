"""``assay route run`` / ``assay route eval``: route queries over a taxonomy, score a router
against expert selections."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

route_app = typer.Typer(help="Route queries to taxonomy leaves; evaluate routers.",
                        no_args_is_help=True)
app.add_typer(route_app, name="route")


@route_app.command("run")
def route_run(
    items: Path = typer.Argument(..., help="Items (their conversations and health memory)."),
    taxonomy: Path = typer.Option(..., "--taxonomy", help="Criterion tree ('starter': the "
                                  "shipped one)."),
    router: str = typer.Option("tree", "--router", help="tree | catalogue | embedding | "
                               "relevance."),
    judge: str | None = typer.Option(None, "--judge", "-j", help="Judge spec of the router "
                                     "(not needed for embedding)."),
    threshold: float | None = typer.Option(None, "--threshold", help="Embedding τ, relevance "
                                           "1-5 cut, or τ of standard queries (tree)."),
    job_dir: Path = typer.Option(Path("routing"), "--job-dir", help="Job directory (manifest "
                                 "+ traced calls; rerun to resume)."),
    out: Path = typer.Option(..., "--out", "-o", help="Write one JSON line per item here."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Route every item (one routing per distinct query; no call repeated on a rerun)."""
    from assay.cli.route_command import run_route

    run_route(items=items, taxonomy=taxonomy, router=router, judge=judge, threshold=threshold,
              job_dir=job_dir, out=out, config=config, quiet=quiet)


@route_app.command("eval")
def route_eval(
    routings: Path = typer.Argument(..., help="Routings: `assay route run` JSONL or a run "
                                    "directory graded with --taxonomy."),
    expert: Path = typer.Option(..., "--expert", help="Expert selections JSONL: "
                                '{"id", "selected": [leaf ids], "scenario"?}.'),
    taxonomy: Path = typer.Option(..., "--taxonomy", help="The taxonomy routed over (its "
                                  "leaves are the decisions)."),
    branch_level: int = typer.Option(1, "--branch-level", min=1, help="Tree level whose "
                                     "nodes are the branches of the breakdown."),
    json_out: Path | None = typer.Option(None, "--json", help="Write every figure here."),
) -> None:
    """Precision, recall, F1, exact match and accuracy vs experts: per query, pooled, per
    branch and per scenario (RubricsTree §5.5)."""
    from assay.cli.route_command import run_route_eval

    run_route_eval(routings=routings, expert=expert, taxonomy=taxonomy,
                   branch_level=branch_level, json_out=json_out)
