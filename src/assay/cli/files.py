"""Commands over rubric and item files: ``assay validate``, ``assay convert``, ``assay schema``.

Only typer is imported at module level; readers, rich and pydantic load inside the commands so
that ``assay --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from assay.cli.app import app

if TYPE_CHECKING:
    from assay.io.formats import FileFormat
    from assay.verdict import Verdict

SCHEMA_NAMES = "rubric, item, taxonomy, verdict, healthbench"
CONVERT_KINDS = "items, healthbench, rubric, autorubric, autorubric-dataset"


@app.command()
def validate(
    files: list[Path] = typer.Argument(
        ..., help="Files to check: item or HealthBench JSONL, rubric/item/taxonomy YAML or JSON, "
        "Autorubric lists and datasets.", show_default=False),
    max_issues: int = typer.Option(
        0, "--max-issues", help="Print at most this many issues per file (0 = all).", min=0),
) -> None:
    """Check files and list every problem with file, line and field; exit 1 if any.

    Warnings (a criterion a rubric states twice: both copies are graded and counted) are
    listed but do not fail the check.
    """
    from assay.cli.output import console as safe_console
    from assay.io import check_file
    from assay.io.formats import ITEM_KINDS

    console = safe_console(markup=True, highlight=False, soft_wrap=True)
    total_issues = bad_files = total_warnings = 0
    for path in files:
        warnings: list = []
        file_format, issues, count = check_file(path, warnings=warnings)
        what = _describe(file_format, count) if file_format else ""
        total_warnings += len(warnings)
        for warning in warnings if not max_issues else warnings[:max_issues]:
            console.print(f"[yellow]warning[/] {_escape(str(warning))}")
        if not issues:
            console.print(f"[green]ok[/]  {_escape(str(path))}: {what}")
            continue
        bad_files += 1
        total_issues += len(issues)
        shown = issues if not max_issues else issues[:max_issues]
        for issue in shown:
            console.print(f"[red]error[/] {_escape(str(issue))}")
        if len(shown) < len(issues):
            console.print(f"      … and {len(issues) - len(shown)} more in {_escape(str(path))}")
        if file_format is not None and file_format.kind in (*ITEM_KINDS, "verdicts"):
            console.print(f"      {_escape(str(path))}: {what} valid")
    summary = (f"{len(files)} file{'s' if len(files) != 1 else ''} checked: "
               f"{len(files) - bad_files} valid, {bad_files} with problems, "
               f"{total_issues} issue{'s' if total_issues != 1 else ''}")
    if total_warnings:
        summary += f", {total_warnings} warning{'s' if total_warnings != 1 else ''}"
    console.print(f"[{'red' if bad_files else 'green'}]{summary}[/]")
    if bad_files:
        raise typer.Exit(1)


@app.command()
def convert(
    source: Path = typer.Argument(..., help="File to read (format detected).", show_default=False),
    target: Path = typer.Argument(
        ..., help="File to write (.jsonl, .json, .yaml or .yml).", show_default=False),
    to: str = typer.Option(
        None, "--to", help=f"What to write: {CONVERT_KINDS}. Default: items for item and "
        "HealthBench files and Autorubric datasets, rubric for rubrics and Autorubric lists, the "
        "same for taxonomies."),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Autorubric datasets: the label file (verdict JSONL) written "
        "from the ground truth (default TARGET.labels.jsonl), or read into it (verdict JSONL, "
        "run directory or dataset)."),
    rubric: Path | None = typer.Option(
        None, "--rubric", "-r", help="Autorubric datasets: write the shared rubric to this file "
        "instead of into every item, or read it from here."),
) -> None:
    """Convert between HealthBench JSONL, Assay items, rubrics, Autorubric lists and datasets.

    Nothing is written unless the whole input is valid.
    """
    from assay.cli.output import print_issues, stderr, stdout
    from assay.errors import InputError
    from assay.io.convert import convert_file

    try:
        given: Path | list[Verdict] | None = labels
        if labels is not None and labels.is_dir():  # a run directory: its judge's verdicts
            from assay.metrics.sources import verdicts_of

            given = verdicts_of(labels)
        message = convert_file(source, target, to, labels=given, rubric=rubric)
    except InputError as exc:
        print_issues(exc.issues)
        stderr().print(f"nothing written: {len(exc.issues)} problem(s) in the input", style="red")
        raise typer.Exit(1) from None
    stdout().print(message, highlight=False)


@app.command()
def schema(
    name: str = typer.Argument("rubric", help=f"One of: {SCHEMA_NAMES}."),
) -> None:
    """Print the JSON Schema of a rubric, item, taxonomy, verdict or HealthBench line."""
    import json

    from assay.io.schema import SCHEMAS
    from assay.io.schema import schema as build

    if name not in SCHEMAS:
        typer.echo(f"unknown schema {name!r}; choose one of: {SCHEMA_NAMES}", err=True)
        raise typer.Exit(2)
    typer.echo(json.dumps(build(name), indent=2, ensure_ascii=False))


_NOUNS = {"healthbench": "HealthBench example", "items": "item", "rubric": "rubric",
          "autorubric": "Autorubric rubric", "autorubric-dataset": "Autorubric dataset item",
          "taxonomy": "taxonomy", "verdicts": "verdict"}


def _describe(file_format: FileFormat, count: int) -> str:
    noun = _NOUNS[file_format.kind]
    return f"{count} {noun}{'' if count == 1 or noun == 'taxonomy' else 's'} ({file_format.syntax})"


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
