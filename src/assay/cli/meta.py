"""``assay meta-eval``, ``assay discrimination`` and ``assay coverage``.

HealthBench's grader-vs-physician meta-evaluation, near-miss discrimination with the stress
test, and CIA coverage, from files and run directories. Tables go to the terminal
(:mod:`assay.cli.tables.meta`); ``--json`` writes every figure, with the reason for any that is
undefined.
"""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

_VERDICTS = "Verdict JSONL file or run directory (assay grade)."


@app.command("meta-eval")
def meta_eval(
    meta: Path = typer.Argument(..., help="HealthBench meta-eval JSONL (one row per completion × "
                                "rubric criterion, with the physicians' binary_labels)."),
    grades: Path | None = typer.Option(
        None, "--grades", "-g", help="The grader's verdicts on the rows: " + _VERDICTS
        + " Ids: item = hbm-<hash of prompt + completion>, criterion = c-<hash of rubric>."),
    to_items: Path | None = typer.Option(
        None, "--to-items", help="Write the rows as items to grade (prompt, completion as the "
        "response, one criterion per rubric) to this .jsonl, for `assay grade --template "
        "healthbench`."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """HealthBench meta-eval: a grader's pairwise balanced F1 against physicians.

    Overall and per category, next to the physicians' leave-one-out baseline, as simple-evals
    computes it.
    """
    from assay.cli.command import Note, dump_data, print_all, report

    def compute():
        from assay.errors import InputError, Issue
        from assay.metrics.healthbench_meta import (
            meta_eval_items,
            meta_evaluate_by_judge,
            read_meta_eval,
        )
        from assay.metrics.sources import verdicts_of

        if grades is None and to_items is None:
            raise InputError(Issue(None, None, "--grades", "give the grader's verdicts "
                                   "(--grades) or ask for items to grade (--to-items)"))
        rows = read_meta_eval(meta)
        if to_items is not None:
            from assay.io import write_items

            count = write_items(meta_eval_items(rows), to_items)
            print_all([Note(f"wrote {count} items ({len(rows)} rows) to {to_items}")])
        if grades is None:
            return None
        verdicts = verdicts_of(grades)
        keys = {(r.item_id, r.criterion_id) for r in rows}
        unmatched = sum(1 for v in verdicts if (v.item_id, v.criterion_id) not in keys)
        reports = meta_evaluate_by_judge(rows, verdicts)
        blind = [j for j, r in reports.items() if r.n_rows_without_verdict == r.n_rows]
        if not reports or blind:
            raise InputError(Issue(str(grades), None, "item_id/criterion_id", (
                f"no verdict of {', '.join(blind) or 'any judge'} matches a row of {meta.name}: "
                "verdicts must use the rows' ids (write gradable items with --to-items)")))
        return rows, reports, unmatched

    def show(result):
        from assay.cli.tables.meta import meta_eval_tables

        rows, reports, unmatched = result
        if unmatched:
            yield Note(f"note: {unmatched} verdicts match no meta-eval row and were ignored")
        yield from meta_eval_tables(rows, reports)

    report(compute, show, json_out=json_out,
           dump=lambda result: dump_data({"n_rows": len(result[0]), "reports": result[1]}))


@app.command()
def discrimination(
    pairs: Path | None = typer.Argument(
        None, show_default=False, help="Pair-call JSONL: {pair_id, ref, cand, decision?, label?} per judge call. "
        "Or give --good and --degraded instead."),
    good: Path | None = typer.Option(None, "--good", help="Verdicts on the good responses: "
                                        + _VERDICTS),
    degraded: Path | None = typer.Option(
        None, "--degraded", help="Verdicts on the degraded responses, same item ids."),
    rubric: Path | None = typer.Option(
        None, "--rubric", "-r", help="Rubric or items file with per-item rubrics (default: the "
        "--good run's own rubrics, else criteria inferred from the verdicts)."),
    formula: str = typer.Option("autorubric", "--formula", "-f", help="Score formula."),
    abstain: str = typer.Option("skip", "--abstain", help="skip | zero | partial[:F] | fail."),
    n_bootstrap: int = typer.Option(1000, "--n-bootstrap", min=1, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    max_rows: int = typer.Option(20, "--max-rows", min=0, help="Pairs shown in the table."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """Discrimination of good vs degraded responses: μΔ, win/tie/loss, AUROCs, DR, ΔMP.

    Per-pair deltas, majority-vote win/tie/loss, μΔ with a bootstrap CI, the paper's, the
    judge-vote and the true-label AUROCs, Detection Rate and Mean Penalty.
    """
    from assay.cli.command import dump_data, report

    def compute():
        from assay.errors import InputError, Issue
        from assay.metrics.pairs import discrimination_summary

        if (pairs is None) == (good is None and degraded is None):
            raise InputError(Issue(None, None, "PAIRS", "give a pair-call file, or --good and "
                                   "--degraded verdicts (not both)"))
        if pairs is None and (good is None or degraded is None):
            missing = "--degraded" if degraded is None else "--good"
            raise InputError(Issue(None, None, missing, "--good and --degraded go together"))
        near_miss = _pairs(pairs, good, degraded, rubric, formula, abstain)
        return discrimination_summary(near_miss, n_bootstrap=n_bootstrap, seed=seed)

    def show(summary):
        from assay.cli.tables.meta import discrimination_tables

        return discrimination_tables(summary, max_rows)

    report(compute, show, json_out=json_out,
           dump=lambda summary: dump_data({"formula": None if pairs is not None else formula,
                                           **summary.model_dump(mode="json")}))


@app.command()
def coverage(
    verdicts: Path = typer.Argument(..., help="Coverage verdicts (one per gold point: MET = "
                                    "covered by the generated rubric): " + _VERDICTS),
    rubric: Path | None = typer.Option(
        None, "--rubric", "-r", help="The gold rubrics (rubric, or items file such as HealthBench "
        "JSONL): gold points without a verdict count as not covered. Default: a run's own "
        "rubrics, else the judged points."),
    against: Path | None = typer.Option(
        None, "--against", help="Coverage verdicts of a second rubric set on the same gold points."),
    judge: str | None = typer.Option(
        None, "--judge", help="Which judge's verdicts to use from a source that holds several."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="CI level."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
) -> None:
    """CIA coverage of gold criteria (Wilson CI); --against compares two rubric sets.

    The comparison runs McNemar's exact test on the paired gold points and the pooled
    two-proportion z-test.
    """
    from assay.cli.command import dump_data, report

    def compute():
        from assay.errors import InputError
        from assay.metrics.coverage_gold import check_coverage_verdicts, coverage_summary
        from assay.metrics.sources import read_source, verdicts_of

        mine, gold = read_source(verdicts, rubric)
        sets = [(verdicts, mine)] + ([(against, verdicts_of(against))] if against else [])
        chosen, issues = [], []
        for source, given in sets:
            given, lines = _one_judge(given, _lines(source), judge, source)
            issues += check_coverage_verdicts(given, gold, source=str(source), lines=lines)
            chosen.append(given)
        if issues:
            raise InputError(issues)
        return coverage_summary(chosen[0], gold=gold, against=chosen[1] if against else None,
                                level=level)

    def show(summary):
        from assay.cli.tables.meta import coverage_tables

        return coverage_tables(summary, str(verdicts), str(against) if against else None)

    report(compute, show, json_out=json_out,
           dump=lambda summary: dump_data(summary.model_dump(mode="json")))


def _pairs(pairs, good, degraded, rubric, formula, abstain):
    from assay.cli.output import abstention_option
    from assay.metrics.pairs import pairs_from_verdicts, read_pair_calls
    from assay.metrics.sources import read_source, verdicts_of

    if pairs is not None:
        return read_pair_calls(pairs)
    good_verdicts, rubrics = read_source(good, rubric)
    bad_verdicts = verdicts_of(degraded)
    return pairs_from_verdicts(good_verdicts, bad_verdicts, rubrics, formula=formula,
                               abstention=abstention_option(abstain))


def _one_judge(verdicts, lines, judge: str | None, source: Path):
    """The verdicts (and lines) of one judge: the only one, else ``judge`` (required then)."""
    from assay.errors import InputError, Issue

    judges = sorted({v.judge for v in verdicts})
    if judge is None and len(judges) > 1:
        raise InputError(Issue(str(source), None, "judge", f"verdicts from {len(judges)} judges "
                               f"({', '.join(judges)}): choose one with --judge"))
    if len(judges) <= 1:
        return verdicts, lines
    if judge not in judges:
        raise InputError(Issue(str(source), None, "judge", f"no verdict from judge {judge!r} "
                               f"(judges: {', '.join(judges)})"))
    keep = [i for i, v in enumerate(verdicts) if v.judge == judge]
    return [verdicts[i] for i in keep], None if lines is None else [lines[i] for i in keep]


def _lines(source: Path) -> list[int] | None:
    """The line of each verdict of a JSONL file (its non-blank lines); None for a run directory."""
    from assay.io.jsonl import iter_jsonl

    return None if source.is_dir() else [line for line, _ in iter_jsonl(source)]
