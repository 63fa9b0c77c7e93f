"""``assay grade``: grade items against rubrics with LLM judges, resumably."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app
from assay.cli.consistency import MIN_SELF_AGREEMENT


@app.command()
def grade(
    items: Path | None = typer.Argument(
        None, help="Items to grade (item JSONL/JSON/YAML, or HealthBench JSONL with --healthbench)."),
    rubric: Path | None = typer.Option(
        None, "--rubric", "-r", help="Rubric file for every item (items may carry their own), "
        "Health-SCORE's baseline single-axis or multi-axes, or a folder of reviewed rubrics "
        "(RUN/reviewed-rubrics: each rubric's newest reviewed version)."),
    judges: list[str] = typer.Option(
        [], "--judge", "-j", help="Judge spec, e.g. openai:gpt-4.1-mini or "
        "openai-compatible:MODEL@http://HOST:PORT/v1; repeat for an ensemble."),
    weights: list[float] = typer.Option([], "--weight", help="Ensemble weight per --judge, in order."),
    mode: str = typer.Option("per-criterion", "--mode", help="per-criterion | per-item."),
    template: list[str] = typer.Option(
        [], "--template", help="healthbench, auditor, auditor:ROLE (RubricsTree's evaluator "
        "roles: senior-medical-auditor, medical-informaticist, medical-bioethicist, "
        "patient-wellness-advocate, alignment-coach), a template FILE, or SLOT=FILE "
        "(slots: binary, multi_choice, per_item)."),
    aggregation: str = typer.Option(
        "majority", "--aggregate", help="Ensemble aggregation: majority|weighted|unanimous|any, "
        "ordinal=mean|median|mode, nominal=mode, abstain=drop|count (an abstaining judge's vote "
        "is dropped, the default, or counts for the abstention); comma-separated."),
    shuffle: bool = typer.Option(True, "--shuffle/--no-shuffle", help="Shuffle options per call."),
    few_shot: int = typer.Option(0, "--few-shot", min=0, help="Examples per criterion."),
    few_shot_items: Path | None = typer.Option(None, "--few-shot-items",
                                                  help="Labelled items (their responses)."),
    few_shot_labels: Path | None = typer.Option(None, "--few-shot-labels",
                                                   help="Their reference verdicts (verdict JSONL)."),
    few_shot_reasons: bool = typer.Option(False, "--few-shot-reasons",
                                          help="Show the examples' reasons."),
    unbalanced: bool = typer.Option(False, "--few-shot-unbalanced",
                                    help="Draw examples without balancing verdicts."),
    seed: int = typer.Option(0, "--seed", help="Master seed (shuffles, few-shot, bootstrap)."),
    role: str | None = typer.Option(
        None, "--role", help="An evaluator role header opening the system message of every judge "
        "call: one of RubricsTree's five role names (senior-medical-auditor, "
        "medical-informaticist, medical-bioethicist, patient-wellness-advocate, alignment-coach), "
        "any text, or @FILE."),
    repeats: int = typer.Option(
        1, "--repeats", min=1, help="Grade the items R times, each a run with its own recorded "
        "seed (RUN_DIR/repeat-1..R, repeats.json), then report each judge's consistency with "
        "itself (resume the whole study with --resume RUN_DIR)."),
    min_self_agreement: float = typer.Option(
        MIN_SELF_AGREEMENT, "--min-self-agreement", min=-1.0, max=1.0,
        help="With --repeats: flag a judge whose α across its own runs is below this "
        "(exit 6)."),
    protocol: str = typer.Option(
        "assay", "--protocol", help="assay | simple-evals: with --healthbench, send "
        "simple-evals' exact grader request and re-send it until it parses (at most "
        "--max-reasks times), so scores compare with simple-evals' by construction."),
    max_reasks: int | None = typer.Option(
        None, "--max-reasks", help="Re-asks of a reply that does not parse, each quoting its "
        "parse error (0-10; default: each judge's max_reasks, 2)."),
    abstention: str = typer.Option("skip", "--abstain", help="skip | zero | partial[:F] | fail."),
    formula: str | None = typer.Option(
        None, "--formula", help="autorubric | raw | healthbench | pass-rate | reward "
        "(default: healthbench with --healthbench, else autorubric)."),
    healthbench: bool = typer.Option(
        False, "--healthbench", help="HealthBench mode: simple-evals' grader prompt and the "
        "official HealthBench score."),
    inspect_log: Path | None = typer.Option(
        None, "--inspect-log", help="Grade the samples of an Inspect eval log (.eval or .json; "
        "the inspect extra) instead of ITEMS: their outputs and, for an inspect_evals "
        "HealthBench log, their rubrics (HealthBench mode, unless --rubric or --taxonomy)."),
    responses: Path | None = typer.Option(
        None, "--responses", help="JSONL of {prompt_id, response} to grade (HealthBench mode)."),
    ideal: bool = typer.Option(False, "--ideal", help="Grade the ideal completions."),
    conversations: Path | None = typer.Option(
        None, "--conversations", help="Seed 000's released conversations.txt (index<TAB>User: "
        "...): ITEMS is then a released rubric set keyed by the same indices."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Where to create the run."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run directory."),
    budget_usd: float | None = typer.Option(None, "--budget", help="Stop cleanly after this many USD."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                              help="Requests in flight to each judge (default: its "
                                              "limits.max_in_flight, 64)."),
    cache_path: Path | None = typer.Option(None, "--cache", help="Response cache (SQLite) to use."),
    executor: str | None = typer.Option(None, "--executor", help="local (default; on --resume: "
                                        "batch if the run submitted batches) | ray: make the judge calls "
                                 "on Ray workers (needs the distributed extra) | batch: through "
                                 "the provider's batch API (OpenAI, Anthropic), at half price, "
                                 "within 24 h; kill and --resume wait for the same batches."),
    batch_retry: str = typer.Option("batch", "--batch-retry", help="With --executor batch: ask "
                                    "a failed or expired request again in a new batch (batch) "
                                    "or live, at live prices (live)."),
    batch_poll_s: float = typer.Option(30.0, "--batch-poll-s", help="With --executor batch: "
                                       "seconds between polls of a pending batch."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Join this Ray cluster "
                                           "(HOST:PORT, or auto); default: a local instance."),
    workers: int | None = typer.Option(None, "--workers", min=1,
                                       help="Ray judge workers (default 2)."),
    final_passes: int = typer.Option(
        1, "--final-passes", min=0, max=10, help="Ask the calls that failed on 429s, 5xx, "
        "timeouts or unparsed replies again, this many times, once every call has been sent "
        "(as --resume would), before the run's status is decided; 0: none (--executor batch asks "
        "again in new batches: --batch-retry)."),
    judge_config_file: Path | None = typer.Option(None, "--config", help="Judge config file (assay.toml)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (CI)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count calls, tokens, dollars; call nothing."),
    export: list[Path] = typer.Option([], "--export", help="Also write verdicts (.jsonl/.csv/.parquet)."),
    votes: bool = typer.Option(False, "--votes", help="Export every judge's vote, not final verdicts."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the summary as JSON here."),
    taxonomy: Path | None = typer.Option(
        None, "--taxonomy", help="A criterion tree ('starter': the shipped one): route each "
        "item, grade only its active leaves (tree auto-weights), score with Eq. 4 (pass-rate)."),
    router: str | None = typer.Option(
        None, "--router", help="With --taxonomy: tree (default) | catalogue | embedding | "
        "relevance | all (every leaf, no routing)."),
    router_judge: str | None = typer.Option(
        None, "--router-judge", help="Judge spec of the router (default: the first --judge)."),
    router_threshold: float | None = typer.Option(
        None, "--router-threshold", help="Embedding: cosine τ; relevance: the 1-5 cut (default "
        "4); tree: τ of standard queries."),
    dimension_level: int | None = typer.Option(
        None, "--dimension-level", min=1, help="With --taxonomy: the tree level whose branches "
        "get a score S_d each (the report's axes): 1 = capabilities (default), 2 = sub-aspects."),
) -> None:
    """Grade responses against rubrics with LLM judges; every verdict is stored as it arrives."""
    # The parameters that are RunOptions fields carry the field's name (the flag may differ).
    from assay.cli.grade_command import run_grade

    run_grade(**locals())
