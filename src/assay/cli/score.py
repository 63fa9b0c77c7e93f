"""``assay score``: score stored verdicts with any formula of the scoring core."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app
from assay.cli.run_status import REQUIRE_COMPLETE_HELP


@app.command()
def score(
    source: Path = typer.Argument(..., help="A verdict JSONL file (or a run directory).",
                                  exists=True),
    rubric: Path | None = typer.Option(
        None, "--rubric", "-r",
        help="Rubric file (one rubric for every item) or items file with per-item rubrics "
             "(e.g. HealthBench JSONL).",
    ),
    formula: str | None = typer.Option(
        None, "--formula", "-f",
        help="autorubric | raw | healthbench | pass-rate | reward. Default: the run's own, "
             "autorubric for a verdict file.",
    ),
    abstain: str | None = typer.Option(
        None, "--abstain",
        help="skip | zero | partial[:FRACTION] | fail. Default: the run's own, skip for a file."),
    judge: str | None = typer.Option(
        None, "--judge", help="Use only this judge's verdicts (votes, for a run)."),
    reward_normalization: str | None = typer.Option(
        None, "--reward-normalization", help="For --formula reward: minmax (default) | "
                                             "positive | count | none."),
    length_penalty: str | None = typer.Option(
        None, "--length-penalty",
        help="FREE,CAP[,PENALTY[,EXPONENT]] in words; on a verdict file it needs the responses "
             "(--items), a run has its own.",
    ),
    items: Path | None = typer.Option(
        None, "--items", help="For a verdict file: items file giving the responses "
                              "(length penalty)."),
    aggregate: str | None = typer.Option(
        None, "--aggregate", help="For a run directory: how to combine the judges' votes, e.g. "
                              "majority,ordinal=median,abstain=count."),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the bootstrap. Default: the run's master seed, 0 for a file."),
    json_out: Path | None = typer.Option(None, "--json", help="Write scores and summary here."),
    export: list[Path] | None = typer.Option(
        None, "--export", help="For a run directory: also write its verdicts, as rescored "
                             "(.jsonl/.csv/.parquet)."),
    votes: bool = typer.Option(False, "--votes", help="With --export: every judge's vote."),
    require_complete: bool = typer.Option(False, "--require-complete", help=REQUIRE_COMPLETE_HELP),
) -> None:
    """Score stored verdicts without calling any model.

    Every option applies to a run directory or is refused with a message (--rubric and
    --items belong to verdict files: a run stores its rubrics and responses).
    """
    from assay.cli.score_command import run_score

    run_score(
        source=source, rubric=rubric, formula=formula, abstain=abstain, judge=judge,
        reward_normalization=reward_normalization, length_penalty=length_penalty,
        items=items, aggregate=aggregate, seed=seed, json_out=json_out, export=export or [],
        votes=votes, require_complete=require_complete,
    )
