"""``assay agreement`` and ``assay compare``: meta-evaluation of stored verdicts."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

_SOURCE_HELP = "A verdict JSONL file (one Verdict per line) or a run directory (assay grade)."
_RUBRIC_HELP = ("Rubric file (shared by every item) or items file with per-item rubrics "
                "(e.g. HealthBench JSONL). Default: a run's own rubrics; for a verdict file, "
                "criteria inferred from the verdicts.")


@app.command()
def agreement(
    source: Path = typer.Argument(..., help=_SOURCE_HELP),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Human labels: verdict JSONL, `judge` naming the rater. "
                                     "Default for a run: the labels stored by assay review."),
    rubric: Path | None = typer.Option(None, "--rubric", "-r", help=_RUBRIC_HELP),
    formula: str = typer.Option("autorubric", "--formula", "-f",
                                help="Score formula for score-level agreement."),
    abstain: str = typer.Option("skip", "--abstain", help="skip | zero | partial[:F] | fail."),
    max_rows: int = typer.Option(40, "--max-rows", help="Criteria shown per judge."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """Agreement of judge verdicts with human labels: per criterion, axis, pooled, per judge."""
    from assay.cli.output import abstention_option, fail, stdout
    from assay.errors import AssayError

    try:
        from assay.metrics.render import agreement_tables
        from assay.metrics.sources import read_source, read_verdicts, run_labels
        from assay.metrics.summary import agreement_summary

        abstention = abstention_option(abstain)
        verdicts, rubrics = read_source(source, rubric)
        human = read_verdicts(labels) if labels is not None else run_labels(source)
        summary = agreement_summary(verdicts, human, rubrics, formula=formula,
                                    abstention=abstention)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    console = stdout()
    for table in agreement_tables(summary, max_rows):
        console.print(table)
    if json_out is not None:
        json_out.write_text(summary.model_dump_json(indent=2))


@app.command()
def compare(
    source_a: Path = typer.Argument(..., help=_SOURCE_HELP),
    source_b: Path = typer.Argument(..., help="The second verdict set, over the same items."),
    rubric: Path | None = typer.Option(None, "--rubric", "-r", help=_RUBRIC_HELP),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Human labels: McNemar then tests correctness."),
    formula: str = typer.Option("autorubric", "--formula", "-f", help="Score formula."),
    abstain: str = typer.Option("skip", "--abstain", help="skip | zero | partial[:F] | fail."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and permutations."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """Paired tests between two verdict sets on the same items (scores and verdicts)."""
    from assay.cli.output import abstention_option, fail, stdout
    from assay.errors import AssayError

    try:
        from assay.metrics.render import comparison_tables
        from assay.metrics.sources import read_source, read_verdicts
        from assay.metrics.summary import comparison

        abstention = abstention_option(abstain)
        a, rubrics = read_source(source_a, rubric)
        b, _ = read_source(source_b, rubric)
        human = read_verdicts(labels) if labels is not None else None
        report = comparison(a, b, rubrics, labels=human, formula=formula,
                            abstention=abstention, seed=seed)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    console = stdout()
    for table in comparison_tables(report, str(source_a), str(source_b)):
        console.print(table)
    if json_out is not None:
        json_out.write_text(report.model_dump_json(indent=2))

