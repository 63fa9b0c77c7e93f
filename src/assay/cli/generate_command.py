"""The work behind ``assay generate`` (imported only when the command runs)."""

from __future__ import annotations

import asyncio
from typing import Any

import typer

from assay.cli.output import fail, print_issues, stderr, stdout
from assay.errors import AssayError, ConfigError

EXIT_BUDGET = 3


def run_generate(**args: Any) -> None:
    try:
        if args["dry_run"]:
            _dry_run(args)
            return
        result = _generate(args)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    _finish(result, args)


def _settings(args: dict[str, Any]) -> dict[str, Any]:
    return {"top_k": args["top_k"], "rerank": not args["no_rerank"],
            "retrieval_mode": args["mode"], "max_criteria": args["max_criteria"],
            "refine_rounds": args["refine_rounds"]}


def _generate(args: dict[str, Any]):
    from assay.generate.job import agenerate

    if args["method"] == "pipeline" and args["kb"] is None and not args["search"]:
        raise ConfigError("the pipeline needs evidence: --kb KB (assay kb build) and/or --search")
    return asyncio.run(agenerate(
        str(args["queries"]), kb=args["kb"], model=args["model"], fast_model=args["fast_model"],
        search=args["search"], method=args["method"], out=args["out"], job_dir=args["job_dir"],
        templates=args["templates"], budget=args["budget"], concurrency=args["concurrency"],
        cache=args["cache"], config_file=args["config"], progress=not args["quiet"],
        executor=args["executor"], workers=args["workers"], ray_address=args["ray_address"],
        **_settings(args)))


def _dry_run(args: dict[str, Any]) -> None:
    from rich.table import Table

    from assay.evidence import KnowledgeBase
    from assay.generate.estimate import estimate_generation
    from assay.generate.pipeline import GenerateConfig
    from assay.generate.queries import read_queries
    from assay.generate.templates import load_templates
    from assay.judges.specs import config_from

    queries = read_queries(args["queries"])
    model = config_from(args["model"], args["config"]).model if args["model"] else "-"
    kb = KnowledgeBase.load(args["kb"]) if args["kb"] is not None else None
    estimate = estimate_generation(
        queries, method=args["method"], model=model, kb=kb,
        config=GenerateConfig(method=args["method"], **_settings(args)),
        templates=load_templates(args["templates"]))
    table = Table(title=f"dry run: {len(queries)} queries, method {args['method']} (no call made)")
    for col in ("model", "calls", "prompt tokens (est.)", "completion tokens (est.)", "USD (est.)"):
        table.add_column(col, justify="left" if col == "model" else "right")
    usd = f"{estimate.usd:.4f}" if estimate.priced else "unpriced"
    table.add_row(model, f"{estimate.n_calls:,}", f"{estimate.prompt_tokens:,}",
                  f"{estimate.completion_tokens:,}", usd)
    stdout().print(table)


def _finish(result, args: dict[str, Any]) -> None:
    from rich.table import Table

    console = stdout()
    table = Table(title=f"assay generate: {result.status}")
    for col in ("queries done", "failed", "resumed", "calls", "prompt tokens", "completion tokens",
                "USD", "wall s"):
        table.add_column(col, justify="right")
    t = result.totals
    table.add_row(str(len(result.rubrics)), str(len(result.failed)), str(result.resumed),
                  str(t.calls if t else 0), str(t.prompt_tokens if t else 0),
                  str(t.completion_tokens if t else 0), f"{t.cost_usd if t else 0:.4f}",
                  f"{result.wall_s:.1f}")
    console.print(table)
    console.print(f"wrote {result.written} rubrics to {args['out']}"
                  + (f"  (job: {result.job_dir}; run the same command to resume)"
                     if result.job_dir else ""), highlight=False)
    if result.failed:
        print_issues([f"item {key}: {reason}" if not reason.startswith("item ") else reason
                      for key, reason in result.failed.items()])
        if result.status == "budget":
            stderr().print("budget reached: run again with a larger --budget to resume",
                           highlight=False)
            raise typer.Exit(EXIT_BUDGET)
        raise typer.Exit(1)
