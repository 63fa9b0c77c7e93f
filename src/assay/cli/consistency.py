"""``assay consistency``: how consistent each judge is with itself across repeated runs of the
same items (``assay grade --repeats R``), and sweeps over a factor (temperature, judge backbone,
evaluator role, scenario), one table per factor. ``--json`` writes every figure."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

# assay.metrics.consistency.DEFAULT_MIN_SELF_ALPHA, here without importing the metrics (a
# command's module stays light: tests/metrics/test_consistency.py checks they are equal)
MIN_SELF_AGREEMENT = 0.667


@app.command()
def consistency(
    runs: list[Path] = typer.Argument(
        None, show_default=False, help="A study directory (assay grade --repeats) or two or "
        "more run directories of the same items."),
    sweep: list[str] = typer.Option(
        [], "--sweep", help="FACTOR=LEVEL=STUDY: a study graded at one level of a factor, e.g. "
        "temperature=0.7=runs/t07 or role=auditor=runs/auditor; repeat for every level (one "
        "table per factor)."),
    by_tag: str | None = typer.Option(
        None, "--by-tag", help="Scenario sweep: a table over the values of the items' TAG:VALUE "
        "tags (e.g. theme), each computed on its items alone."),
    min_alpha: float = typer.Option(
        MIN_SELF_AGREEMENT, "--min-self-agreement", min=-1.0, max=1.0,
        help="Flag a judge whose Krippendorff's α across its own runs is below this."),
    n_bootstrap: int = typer.Option(1000, "--n-bootstrap", min=1, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    max_rows: int = typer.Option(10, "--max-rows", min=0, help="Items shown by variance."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """Run-to-run consistency: per-item variance, ICC and Krippendorff's α across runs, CIs.

    A judge whose α across its own runs is below --min-self-agreement (or undefined) is
    flagged LOW, and the command exits with code 6: do not use its scores before looking.
    """
    from assay.cli.command import Note, dump_data, report

    def compute():
        from assay.errors import InputError, Issue
        from assay.metrics.consistency import runs_consistency

        if not runs and not sweep:
            raise InputError(Issue(None, None, "RUNS", "give a study, run directories or --sweep"))
        if by_tag is not None and not runs:
            raise InputError(Issue(None, None, "--by-tag", "give the study to split by tag"))
        options = {"min_alpha": min_alpha, "seed": seed, "n_resamples": n_bootstrap}
        main = runs_consistency(study_runs(runs), **options) if runs else None
        levels = {}  # factor -> level -> report
        for factor, level, study in map(parse_sweep, sweep):
            levels.setdefault(factor, {})[level] = runs_consistency(study_runs([study]),
                                                                    **options)
        if by_tag is not None:
            from assay.metrics.consistency import scenarios

            run_dirs = study_runs(runs)
            levels[f"scenario ({by_tag})"] = {
                value: runs_consistency(run_dirs, items=ids, **options)
                for value, ids in scenarios(run_dirs[0], by_tag).items()}
        return main, levels

    def show(result):
        from assay.cli.tables.consistency import (
            consistency_table,
            item_variance_table,
            sweep_tables,
        )

        main, levels = result
        if main is not None:
            yield consistency_table(main)
            table = item_variance_table(main, max_rows)
            if table is not None:
                yield table
        yield from sweep_tables(levels)
        for line in low_agreement_notes(main, levels):
            yield Note(line)

    def dump(result):
        main, levels = result
        return dump_data({"consistency": main, "sweep": levels})

    result = report(compute, show, json_out=json_out, dump=dump)
    if result is not None and low_agreement_notes(*result):
        raise typer.Exit(EXIT_LOW_SELF_AGREEMENT)


EXIT_LOW_SELF_AGREEMENT = 6  # README "Exit codes and limits"


def low_agreement_notes(main, levels) -> list[str]:
    """A warning per flagged judge (of the main report and of every sweep level)."""
    reports = ([("", main)] if main is not None else []) + [
        (f" at {factor}={level}", r) for factor, by_level in levels.items()
        for level, r in by_level.items()]
    return [f"warning: judge {judge}{where}: low self-agreement ({c.flag_reason}); check "
            "it before using its scores"
            for where, r in reports for judge, c in r.judges.items() if c.flagged]


def study_runs(paths: list[Path]) -> list[Path]:
    """The run directories of a study (its repeats), or the run directories given."""
    from assay.runs.repeats import is_study, read_repeats

    if len(paths) == 1 and is_study(paths[0]):
        return [r.run_dir for r in read_repeats(paths[0])]
    return list(paths)


def parse_sweep(text: str) -> tuple[str, str, Path]:
    """``FACTOR=LEVEL=STUDY`` (the level may not hold "=").

    >>> parse_sweep("temperature=0.7=runs/t07")
    ('temperature', '0.7', PosixPath('runs/t07'))
    """
    from assay.errors import InputError, Issue

    parts = text.split("=", 2)
    if len(parts) != 3 or not all(parts):
        raise InputError(Issue(None, None, "--sweep", f"expected FACTOR=LEVEL=STUDY, got {text!r}"))
    return parts[0], parts[1], Path(parts[2])
