"""``assay report``: a self-contained HTML report of one or several runs."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app
from assay.cli.run_status import REQUIRE_COMPLETE_HELP


@app.command()
def report(
    runs: list[Path] = typer.Argument(..., help="Run directories (assay grade); the first is the "
                                                "baseline of paired comparisons."),
    out: Path = typer.Option(Path("report.html"), "--out", "-o", help="The HTML file to write."),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Human labels (verdict JSONL); default: the labels "
                                     "reviewers stored in each run (assay review)."),
    max_items: int = typer.Option(5000, "--max-items", min=1, help="Items shown per run."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the comparison bootstraps."),
    require_complete: bool = typer.Option(False, "--require-complete",
                                          help=REQUIRE_COMPLETE_HELP),
) -> None:
    """One HTML file that opens offline: scores with CIs, axes and themes, agreement, paired
    comparisons, cost, and every item with its votes and explanations. Each run's status
    heads the report; a run that is not complete is named there and here."""
    from assay.cli.output import fail
    from assay.cli.run_status import statuses_of, warnings
    from assay.errors import AssayError

    try:
        from assay.report import write_report

        if out.is_dir():
            raise AssayError(f"--out {out}: is a directory; give a file name such as report.html")
        statuses = statuses_of(runs, require_complete=require_complete)
        path = write_report(runs, out, labels=labels, max_items=max_items, seed=seed)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc, getattr(exc, "exit_code", 1))
    for line in warnings(statuses):
        typer.echo(line)
    typer.echo(f"wrote {path}")
