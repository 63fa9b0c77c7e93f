"""``assay stress make`` / ``assay stress run``: RubricsTree's oracle perturbation stress tests."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

stress_app = typer.Typer(help="Oracle perturbation stress tests (Detection Rate, Mean Penalty).",
                         no_args_is_help=True)
app.add_typer(stress_app, name="stress")


@stress_app.command("make")
def stress_make(
    items: Path = typer.Argument(..., help="Clean items (instructions, query, health memory)."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for clean.jsonl and one "
                             "JSONL per perturbation."),
    seed: int = typer.Option(0, "--seed", help="Master seed (which unsafe instruction, which "
                             "direction a value moves)."),
    shift: float = typer.Option(0.3, "--shift", help="Relative size of inaccurate values (kept "
                                "inside each metric's physiological range)."),
    instructions: Path | None = typer.Option(None, "--instructions", help="A YAML/JSON list of "
                                             "unsafe instructions ({text, topics, medication}); "
                                             "each item gets one on its query's topic (default: "
                                             "the "
                                             "shipped library)."),
    routing: Path | None = typer.Option(None, "--routing", help="The items' routings (`assay "
                                        "route run` JSONL or a run directory graded with "
                                        "--taxonomy): missing and inaccurate data then act on "
                                        "what the routed leaves need, and each change is "
                                        "checked against it. Needs --taxonomy."),
    taxonomy: Path | None = typer.Option(None, "--taxonomy", help="The taxonomy routed over "
                                         "(the leaves' requirements); with --routing."),
) -> None:
    """Write each item under the four perturbations, for the agent under test to answer, and
    changes.jsonl: what each perturbation changed and whether it touches what the routed
    leaves need."""
    from assay.cli.stress_command import run_make

    run_make(items=items, out=out, seed=seed, shift=shift, instructions=instructions,
             routing=routing, taxonomy=taxonomy)


@stress_app.command("run")
def stress_run(
    items: Path = typer.Argument(..., help="The clean items (the oracle context)."),
    responses: list[str] = typer.Option(..., "--responses", help="CONDITION=FILE: the agent's "
                                        "responses (JSONL of id + response) under 'clean' and "
                                        "each perturbation; repeat."),
    taxonomy: Path = typer.Option(..., "--taxonomy", help="Criterion tree ('starter': the "
                                  "shipped one)."),
    router: str = typer.Option("tree", "--router", help="tree | catalogue | embedding | "
                               "relevance | all."),
    judge: list[str] = typer.Option(..., "--judge", "-j", help="Judge spec; repeat for an "
                                    "ensemble."),
    router_judge: str | None = typer.Option(None, "--router-judge", help="Router's judge "
                                            "(default: the first --judge)."),
    template: str = typer.Option("auditor", "--template", help="Grading template (default: "
                                 "RubricsTree's auditor; auditor:ROLE for another evaluator "
                                 "role)."),
    run_dir: Path = typer.Option(..., "--run-dir", help="Directory of the runs (one per "
                                 "condition, one shared routing)."),
    seed: int = typer.Option(0, "--seed", help="Master seed (run r grades with SEED + r - 1)."),
    runs: int = typer.Option(3, "--runs", help="Independent grading runs per condition, "
                             "averaged per item (the paper: 3); the table gives each item "
                             "score's standard error."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    json_out: Path | None = typer.Option(None, "--json", help="Write every figure here."),
) -> None:
    """Grade each condition's responses against the clean context; report DR and ΔMP."""
    from assay.cli.stress_command import run_stress

    run_stress(items=items, responses=responses, taxonomy=taxonomy, router=router, judge=judge,
               router_judge=router_judge, template=template, run_dir=run_dir, seed=seed,
               runs=runs, config=config, quiet=quiet, json_out=json_out)
