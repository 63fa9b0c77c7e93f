"""The work behind ``assay generate`` (imported only when the command runs)."""

from __future__ import annotations

import asyncio
from typing import Any

from assay.cli.output import EXIT_INCOMPLETE, exit_for_failed_items, fail, stdout
from assay.errors import AssayError, ConfigError


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
            "refine_rounds": args["refine_rounds"], "pages": args["pages"],
            "evidence_tokens": args["evidence_tokens"]}


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
        batch_retry=args["batch_retry"], batch_poll_s=args["batch_poll_s"],
        **_settings(args)))


def _dry_run(args: dict[str, Any]) -> None:
    from assay.cli.tables.generate import estimate_table
    from assay.evidence import KnowledgeBase
    from assay.generate.estimate import estimate_generation
    from assay.generate.pipeline import GenerateConfig
    from assay.generate.queries import read_queries
    from assay.generate.templates import load_templates
    from assay.judges.specs import config_from

    queries = read_queries(args["queries"])
    judges = [config_from(spec, args["config"]) for spec in dict.fromkeys(
        s for s in (args["model"], args["fast_model"]) if s)]
    model = judges[0].model if judges else "-"
    kb = KnowledgeBase.load(args["kb"]) if args["kb"] is not None else None
    estimate = estimate_generation(
        queries, method=args["method"], model=model, kb=kb,
        config=GenerateConfig(method=args["method"], **_settings(args)),
        templates=load_templates(args["templates"]), judges=judges)
    stdout().print(estimate_table(estimate, model, n_queries=len(queries), method=args["method"]))


def _finish(result, args: dict[str, Any]) -> None:
    from assay.cli.tables.generate import generation_table

    console = stdout()
    console.print(generation_table(result))
    console.print(f"wrote {result.written} rubrics to {args['out']}"
                  + (f"  (job: {result.job_dir}; run the same command to resume)"
                     if result.job_dir else ""), highlight=False)
    exit_for_failed_items(result.failed, result.status, incomplete_exit=EXIT_INCOMPLETE)
