"""``assay generate``: rubrics from evidence (seed 000), the evidence from a knowledge base
(:mod:`assay.cli.kb`) and web search."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app


@app.command()
def generate(
    queries: Path = typer.Argument(..., help="Queries: a text file (one per line), seed 000's "
                                   "conversations.txt (INDEX<TAB>User: ...; the indices are the "
                                   "ids), item JSONL or HealthBench JSONL."),
    kb: Path | None = typer.Option(None, "--kb", help="Knowledge-base folder (assay kb build)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Judge spec of the model that "
                                     "writes the rubric, e.g. openai:gpt-4.1 or "
                                     "openai-compatible:MODEL@http://HOST:PORT/v1."),
    fast_model: str | None = typer.Option(None, "--fast-model", help="Model for reranking "
                                          "(default: --model)."),
    search: str | None = typer.Option(None, "--search", help="Web search adapter: tavily (key "
                                      "from TAVILY_API_KEY) or tavily@URL. Off by default."),
    pages: bool = typer.Option(True, "--pages/--no-pages", help="With --search: fetch each hit's "
                               "page and use its main text (Trafilatura, 5,000 characters, "
                               "10 s and 2 MB per page), else the search snippet only."),
    out: Path = typer.Option(..., "--out", "-o", help=".jsonl (HealthBench lines), .yaml/.json "
                             "(one rubric) or a folder."),
    method: str = typer.Option("pipeline", "--method", help="pipeline | one-step | generic."),
    job_dir: Path | None = typer.Option(None, "--job-dir", help="Job folder (default OUT.job); "
                                        "run again to resume."),
    templates: Path | None = typer.Option(None, "--templates", help="Folder of STAGE.txt prompt "
                                          "overrides."),
    top_k: int = typer.Option(5, "--top-k", min=1, help="Evidence chunks kept after reranking."),
    no_rerank: bool = typer.Option(False, "--no-rerank", help="Keep the fused order, no rerank call."),
    evidence_tokens: int | None = typer.Option(None, "--evidence-tokens", min=1, help="About "
                                               "how many tokens of source text the evidence "
                                               "synthesis sees, all chunks together (default: "
                                               "each chunk's first 5,000 characters); lower it "
                                               "for a model with a small context."),
    mode: str = typer.Option("auto", "--retrieval", help="auto | bm25 | dense | hybrid."),
    max_criteria: int = typer.Option(20, "--max-criteria", min=1, help="Size cap of the final rubric."),
    refine_rounds: int = typer.Option(1, "--refine-rounds", min=0, help="Extra audit rounds while a "
                                      "red flag or negative constraint is uncited."),
    budget: float | None = typer.Option(None, "--budget", help="Stop cleanly after this many USD."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Calls in flight."),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache (SQLite) to use."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file (assay.toml)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count calls, tokens, dollars; call nothing."),
    executor: str = typer.Option("local", "--executor", help="local | ray: stage calls on Ray "
                                 "workers, the job store here | batch: every stage through the "
                                 "models' batch APIs (half price; each stage up to 24 h)."),
    batch_retry: str = typer.Option("batch", "--batch-retry", help="With --executor batch: ask "
                                    "a failed or expired request again in a new batch or live."),
    batch_poll_s: float = typer.Option(30.0, "--batch-poll-s", min=0.01, help="With --executor "
                                       "batch: seconds between polls of a pending batch."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Ray workers (default 2)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Join this Ray cluster "
                                           "(default: a local instance)."),
) -> None:
    """Generate an evidence-grounded rubric per query (seed 000); the output feeds assay grade."""
    from assay.cli.generate_command import run_generate

    run_generate(**locals())
