"""``assay export``: a run's verdicts as a file, or the run as an Inspect eval log."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app


@app.command()
def export(
    run: Path = typer.Argument(..., help="A run directory.", exists=True, file_okay=False),
    out: Path = typer.Option(..., "--output", "-o", help="The file to write: LOG.eval or "
                             "LOG.json with --inspect; else verdicts as .jsonl/.csv/.parquet."),
    inspect: bool = typer.Option(
        False, "--inspect", help="Write an Inspect eval log (the inspect extra): one sample per "
        "item, its score and per-criterion verdicts and explanations, for inspect view."),
    votes: bool = typer.Option(False, "--votes", help="Verdict files: every judge's vote."),
) -> None:
    """Export a run without calling any model: its verdicts, or the whole run as an Inspect log."""
    from assay.cli.output import fail, stdout
    from assay.errors import AssayError, InputError, Issue

    try:
        if inspect:
            if votes:
                raise InputError(Issue(None, None, "--votes", "an Inspect log holds every vote "
                                       "already (in each score's metadata): drop --votes"))
            try:
                from assay.integrations.inspect.logs import write_run_log
            except ImportError:
                raise InputError(Issue(None, None, "--inspect", "the inspect extra is not "
                                       "installed: pip install 'assay[inspect]'")) from None
            log = write_run_log(run, out)
            [score] = log.results.scores
            line = (f"wrote {len(log.samples)} samples ({score.scored_samples} scored) to {out}; "
                    f"open it with: inspect view --log-dir {out.parent}")
        else:
            from assay.runs.exports import export as export_run

            line = f"wrote {export_run(run, out, votes=votes)} rows to {out}"
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    stdout().print(line, highlight=False, soft_wrap=True)
