"""``assay sample``: the model under test answers every item (its output feeds ``assay grade``)."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

EXIT_INCOMPLETE = 4
#: Imported by ``assay sample`` only after its last call (the summary table).
SAMPLE_FINISH = ("rich.table", "rich._emoji_codes", "assay.cli.tables.sample")


@app.command()
def sample(
    items: Path = typer.Argument(..., help="Items to answer: HealthBench JSONL or Assay items."),
    model: str = typer.Option(..., "--model", "-m", help="The model under test, a judge spec: "
                              "openai:gpt-4.1, openai-compatible:MODEL@http://HOST:PORT/v1, "
                              "anthropic:..., or a [judges.NAME] of assay.toml."),
    out: Path = typer.Option(..., "--out", "-o", help="Output JSONL: HealthBench "
                             "{prompt_id, response} lines or items with their response."),
    n: int = typer.Option(1, "--n", min=1, help="Samples per item (numbered 0..N-1)."),
    temperature: float | None = typer.Option(None, "--temperature", help="Sampling temperature."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Completion budget."),
    seed: int | None = typer.Option(None, "--seed", help="Sampling seed (sample k: seed + k)."),
    reasoning_effort: str | None = typer.Option(None, "--reasoning-effort",
                                                help="low | medium | high (reasoning models)."),
    system: Path | None = typer.Option(None, "--system", help="A file whose text is the system "
                                       "prompt put before each conversation."),
    condition: str | None = typer.Option(None, "--condition", help="A named system prompt: none, "
                                         "single-axis, multi-axes, health-score, "
                                         "health-score-adaptive (--selection), handbook "
                                         "(--taxonomy)."),
    bank: Path | None = typer.Option(None, "--bank", help="The bank of --condition health-score "
                                     "(default: the shipped Health-SCORE bank)."),
    selection: Path | None = typer.Option(None, "--selection", help="Selections JSONL of "
                                          "assay bank select (health-score-adaptive)."),
    taxonomy: str | None = typer.Option(None, "--taxonomy", help="starter or a taxonomy file "
                                        "(handbook)."),
    output_format: str = typer.Option("auto", "--format", help="auto | healthbench | items "
                                      "(auto: HealthBench lines for HealthBench input)."),
    job_dir: Path | None = typer.Option(None, "--job-dir", help="Job folder (default OUT.job); "
                                        "run again to resume."),
    budget: float | None = typer.Option(None, "--budget", help="Stop cleanly after this many USD."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Calls in flight."),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache (SQLite) to use."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file (assay.toml)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    executor: str = typer.Option("local", "--executor", help="local | batch | ray. batch: "
                                 "through the model's batch API (OpenAI, Anthropic), at half "
                                 "price, within 24 h; the same command again waits for the same "
                                 "batches. ray: the calls on Ray workers."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="With --executor ray: Ray "
                                       "workers (default 2)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="With --executor ray: "
                                           "the cluster (default: a local Ray)."),
    protocol: str = typer.Option("assay", "--protocol", help="assay | simple-evals: ask the "
                                 "model as simple-evals' model table samples it (its system "
                                 "message, temperature, max_tokens or reasoning effort, its "
                                 "API), byte for byte, with no preflight request."),
    batch_retry: str = typer.Option("batch", "--batch-retry", help="With --executor batch: ask "
                                    "a failed or expired request again in a new batch or live."),
    batch_poll_s: float = typer.Option(30.0, "--batch-poll-s", min=0.01, help="With --executor "
                                       "batch: seconds between polls of a pending batch."),
) -> None:
    """Sample the model under test on every item (free text); grade the output with
    assay grade --responses OUT."""
    from assay.cli.output import exit_for_failed_items, fail, stdout
    from assay.cli.prewarm import Prewarm
    from assay.cli.process import freeze_startup
    from assay.errors import AssayError
    from assay.judges.sync import run_sync
    from assay.sampling import asample

    freeze_startup()  # what start-up built lives until exit: the collector stops walking it
    prewarm = Prewarm(SAMPLE_FINISH).start()  # the summary's imports, while the calls wait
    try:
        result = run_sync(asample(
            items, model=model, out=out, job_dir=job_dir, n=n, temperature=temperature,
            max_tokens=max_tokens, seed=seed, reasoning_effort=reasoning_effort, system=system,
            condition=condition, bank=bank, selection=selection,
            taxonomy=taxonomy, output_format=output_format, budget=budget,
            concurrency=concurrency, cache=cache, config_file=config, progress=not quiet,
            executor=executor, workers=workers, ray_address=ray_address,
            batch_retry=batch_retry, batch_poll_s=batch_poll_s, protocol=protocol))
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    finally:
        prewarm.stop()
    from assay.cli.tables.sample import sample_table

    stdout().print(sample_table(result))
    stdout().print(f"wrote {result.written} {result.output_format} lines to {out}  (job: "
                   f"{result.job_dir}; run the same command to resume)", highlight=False)
    exit_for_failed_items(result.failed, result.status, incomplete_exit=EXIT_INCOMPLETE,
                          incomplete_note=f"incomplete: {len(result.failed)} items not written; "
                          "run the same command again to retry them")
