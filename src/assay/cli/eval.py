"""``assay eval``: sample the model under test, grade, score and report in one resumable run."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

EXIT_BUDGET = 3
EXIT_INCOMPLETE = 4
EXIT_BELOW = 5


@app.command("eval")
def eval_command(
    items: str | None = typer.Argument(None, help="healthbench (the official file, from "
                                       "assay data fetch), HealthBench JSONL (with "
                                       "--healthbench) or Assay items JSONL."),
    subset: str = typer.Option("all", "--subset", help="With healthbench: all | hard | "
                               "consensus."),
    data_root: Path | None = typer.Option(None, "--data-dir", help="Where assay data fetch "
                                          "stored it (default $ASSAY_DATA)."),
    model: str | None = typer.Option(None, "--model", "-m", help="The model under test (a judge "
                                     "spec)."),
    judge: list[str] | None = typer.Option(None, "--judge", "-j", help="The grader (repeat for "
                                           "an ensemble)."),
    rubric: Path | None = typer.Option(None, "--rubric", help="Rubric for items without their "
                                       "own: a file, or Health-SCORE's baseline single-axis or "
                                       "multi-axes."),
    healthbench: bool = typer.Option(False, "--healthbench", help="HealthBench rows, "
                                     "simple-evals' grader and metrics."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="The eval's directory."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this eval run."),
    n: int = typer.Option(1, "--n", min=1, help="Samples per item (n > 1: worst-at-k curve)."),
    examples: int | None = typer.Option(None, "--examples", min=1, help="Evaluate N items drawn "
                                        "as simple-evals draws them."),
    seed: int = typer.Option(0, "--seed", help="Seed of the --examples draw (simple-evals: 0)."),
    temperature: float | None = typer.Option(None, "--temperature", help="Sampling temperature."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Completion budget "
                                          "of the model under test."),
    sampling_seed: int | None = typer.Option(None, "--sampling-seed", help="Seed sent to the "
                                             "model under test (sample k: seed + k)."),
    reasoning_effort: str | None = typer.Option(None, "--reasoning-effort"),
    system: Path | None = typer.Option(None, "--system", help="System prompt file."),
    condition: list[str] | None = typer.Option(None, "--condition", help="A named system prompt "
                                               "(twice: compare two, paired tests): none, "
                                         "single-axis, multi-axes, health-score, "
                                         "health-score-adaptive (--selection), handbook "
                                         "(--taxonomy)."),
    bank: Path | None = typer.Option(None, "--bank", help="Bank of --condition health-score."),
    selection: Path | None = typer.Option(None, "--selection", help="Selections JSONL of "
                                          "assay bank select (health-score-adaptive)."),
    taxonomy: str | None = typer.Option(None, "--taxonomy", help="starter or a taxonomy file "
                                        "(handbook)."),
    protocol: str = typer.Option("assay", "--protocol", help="assay | simple-evals (with "
                                 "--healthbench: the model under test asked as simple-evals' "
                                 "model table samples it, and its exact grader request; no "
                                 "preflight request)."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file (assay.toml)."),
    budget: float | None = typer.Option(None, "--budget", help="Stop cleanly after this many USD "
                                        "(each stage)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Calls in flight."),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache (SQLite)."),
    executor: str | None = typer.Option(None, "--executor", help="local | batch | ray, for "
                                        "every stage (batch: the providers' batch APIs at half "
                                        "price; ray: calls on Ray workers). Default: local, or on "
                                        "--resume the one the eval began with."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="With --executor ray: Ray "
                                       "workers (default 2)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="With --executor ray: "
                                           "the cluster (default: a local Ray)."),
    batch_retry: str = typer.Option("batch", "--batch-retry", help="With --executor batch: ask "
                                    "a failed or expired request again in a new batch or live."),
    batch_poll_s: float = typer.Option(30.0, "--batch-poll-s", min=0.01, help="With --executor "
                                       "batch: seconds between polls of a pending batch."),
    fail_under: float | None = typer.Option(None, "--fail-under", help="Exit 5 if the overall "
                                            "score is below this (for CI)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the metrics here."),
    no_report: bool = typer.Option(False, "--no-report", help="Skip RUN/report.html."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Evaluate a model: sample it on every item, grade the answers, score, report."""
    import json

    from assay.cli.output import fail, stderr, stdout
    from assay.cli.tables.evaluation import eval_tables
    from assay.errors import AssayError
    from assay.evaluation import EvalOptions, evaluate

    given = {**locals(), "judges": judge, "condition": condition or None,
             "config_file": config, "report": not no_report, "progress": not quiet}
    try:
        options = EvalOptions(**{name: value for name, value in given.items()
                                 if name in EvalOptions.model_fields})
        result = evaluate(items, options, resume=resume)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    if result.stage == "done" and json_out is not None:
        json_out.write_text(json.dumps(result.metrics, indent=2, sort_keys=True) + "\n",
                            encoding="utf-8")
    for table in eval_tables(result):
        stdout().print(table)
    if result.stage != "done":
        stderr().print(f"{result.status} at the {result.stage} stage: no score; continue with "
                       f"assay eval --resume {result.run_dir}", highlight=False)
        raise typer.Exit(EXIT_BUDGET if result.status == "budget" else EXIT_INCOMPLETE)
    stdout().print(f"eval stored in {result.run_dir}"
                   + (f"  (report: {result.report_path})" if result.report_path else ""),
                   highlight=False)
    overall = result.metrics.get("overall_score")
    if fail_under is not None and (overall is None or overall < fail_under):
        stderr().print(f"overall score {overall} is below --fail-under {fail_under}",
                       highlight=False)
        raise typer.Exit(EXIT_BELOW)
