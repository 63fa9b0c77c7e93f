"""``assay agreement`` and ``assay compare``: meta-evaluation of stored verdicts."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app
from assay.cli.run_status import REQUIRE_COMPLETE_HELP

_SOURCE_HELP = "A verdict JSONL file (one Verdict per line) or a run directory (assay grade)."
_RUBRIC_HELP = ("Rubric file (shared by every item) or items file with per-item rubrics "
                "(e.g. HealthBench JSONL). Default: a run's own rubrics; for a verdict file, "
                "criteria inferred from the verdicts.")


@app.command()
def agreement(
    source: Path = typer.Argument(..., help=_SOURCE_HELP),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Human labels: verdict JSONL (`judge` naming the rater) or "
        "an Autorubric dataset. Default for a run: the labels stored with it (by assay review, "
        "or a graded dataset's ground truth)."),
    rubric: Path | None = typer.Option(None, "--rubric", "-r", help=_RUBRIC_HELP),
    formula: str | None = typer.Option(
        None, "--formula", "-f", help="Score formula for score-level agreement. Default: the "
        "run's own (autorubric for a verdict file)."),
    abstain: str | None = typer.Option(
        None, "--abstain", help="skip | zero | partial[:F] | fail. Default: the run's own."),
    max_rows: int = typer.Option(40, "--max-rows", help="Criteria shown per judge."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap CIs.", min=0),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0,
                                  help="Bootstrap resamples (over items) for the CIs; 0 = none."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
    require_complete: bool = typer.Option(False, "--require-complete",
                                          help=REQUIRE_COMPLETE_HELP),
) -> None:
    """Agreement of judge verdicts with human labels: per criterion, axis, pooled, per judge.

    With several judges, their reliability too; an ensemble without labels gets that alone.

    κ, F1, accuracy and the score-level figures come with 95% percentile bootstrap CIs,
    resampling items (seeded); where a CI cannot be given, the JSON says why.
    """
    from assay.cli.command import report
    from assay.cli.run_status import dump_with_status, statuses_of, warnings

    statuses: list = []

    def compute():
        from assay.cli.output import abstention_option
        from assay.metrics.label_sources import check_labels_match, labels_for, stored_labels
        from assay.metrics.sources import judges_of, read_source
        from assay.metrics.summary import agreement_summary, reliability_summary
        from assay.metrics.verdict_sets import own_scoring

        statuses.extend(statuses_of([source, labels], require_complete=require_complete))
        own_formula, own_abstention = own_scoring(source)
        abstention = abstention_option(abstain) if abstain is not None else own_abstention
        scored_by = formula or own_formula or "autorubric"
        verdicts, rubrics = read_source(source, rubric)
        stored = stored_labels(source) if labels is None else []
        if labels is None and not stored and len(judges_of(verdicts)) > 1:
            return reliability_summary(verdicts, rubrics, formula=scored_by,
                                       abstention=abstention, seed=seed, n_resamples=bootstrap)
        human, label_rubrics = (stored, None) if stored else labels_for(source, labels)
        if labels is not None:
            check_labels_match(human, verdicts, labels)
        return agreement_summary(verdicts, human, label_rubrics if rubrics is None else rubrics,
                                 formula=scored_by, abstention=abstention, seed=seed,
                                 n_resamples=bootstrap)

    def show(summary):
        from assay.cli.tables.agreement import agreement_tables

        yield from warnings(statuses)
        if summary.stray_labels is not None:
            yield summary.stray_labels.line()
        if not summary.reports:
            yield ("no human labels: reliability between the judges only (for agreement with "
                   "humans, give --labels FILE, or label the run with assay review)")
        yield from agreement_tables(summary, max_rows)
        yield (f"[brackets]: 95% bootstrap CIs over items ({bootstrap} resamples, seed {seed}); "
               "a figure without one: see --json for why" if bootstrap else
               "no CIs (--bootstrap 0)")

    report(compute, show, json_out=json_out,
           dump=lambda summary: dump_with_status(summary, statuses, {"source": source,
                                                                     "labels": labels}))


@app.command()
def compare(
    source_a: Path = typer.Argument(..., help=_SOURCE_HELP),
    source_b: Path = typer.Argument(..., help="The second verdict set, over the same items."),
    rubric: Path | None = typer.Option(None, "--rubric", "-r", help=_RUBRIC_HELP),
    labels: Path | None = typer.Option(
        None, "--labels", "-l", help="Human labels: McNemar then tests correctness. Default "
        "for a run: the labels stored with A (as assay report does)."),
    formula: str | None = typer.Option(
        None, "--formula", "-f", help="Score formula. Default: run A's own (autorubric for a "
        "verdict file)."),
    abstain: str | None = typer.Option(
        None, "--abstain", help="skip | zero | partial[:F] | fail. Default: run A's own."),
    judge: str | None = typer.Option(
        None, "--judge", help="Compare this judge's votes in both sources. Default for a run: "
        "its aggregated verdicts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and permutations."),
    items: bool = typer.Option(
        False, "--items", help="Item by item too: each item's score in A and B, B − A and the "
        "criteria whose verdict flipped (the items that changed most, those that fell first; "
        "--json holds every item with each criterion's verdict in A and B)."),
    max_rows: int = typer.Option(20, "--max-rows", min=1, help="Items shown with --items."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full results here."),
    require_complete: bool = typer.Option(False, "--require-complete",
                                          help=REQUIRE_COMPLETE_HELP),
) -> None:
    """Paired tests between two verdict sets on the same items (scores and verdicts).

    A run (an ensemble too) is compared on its aggregated verdicts, scored by run A's own
    formula and abstention, as assay report compares it: the same pair, the same p-values.
    With --items, where the difference is: the items whose score fell or rose, and the
    criteria that flipped.
    """
    from assay.cli.command import report
    from assay.cli.run_status import dump_with_status, statuses_of, warnings

    statuses: list = []
    left_out: list[str] = []

    def compute():
        from assay.cli.output import abstention_option
        from assay.metrics.item_changes import item_changes
        from assay.metrics.label_sources import check_labels_match, labels_for
        from assay.metrics.sources import inferred_rubrics
        from assay.metrics.summary import comparison
        from assay.metrics.verdict_sets import verdict_set

        statuses.extend(statuses_of([source_a, source_b, labels],
                                    require_complete=require_complete))
        a = verdict_set(source_a, rubric, judge=judge)
        b = verdict_set(source_b, rubric, judge=judge)
        if not {v.item_id for v in a.verdicts} & {v.item_id for v in b.verdicts}:
            from assay.errors import InputError, Issue

            raise InputError(Issue(f"{source_a}, {source_b}", None, None,
                                   "no item in common: a paired comparison needs the same items "
                                   "graded on both sides"))
        human = a.labels or None
        if labels is not None:
            human = labels_for(source_a, labels)[0]
            check_labels_match(human, [*a.verdicts, *b.verdicts], labels)
        compared = a.compared if a.compared == b.compared else f"A: {a.compared}; B: {b.compared}"
        left_out.extend(f"{side}: {len(s.ungraded)} item(s) left out, a criterion not graded "
                        f"(a failed or skipped call): {', '.join(s.ungraded[:5])}"
                        for side, s in (("A", a), ("B", b)) if s.ungraded)
        scored_by = formula or a.formula or "autorubric"
        abstention = abstention_option(abstain) if abstain is not None else a.abstention
        result = comparison(a.verdicts, b.verdicts, a.rubrics, labels=human, formula=scored_by,
                            abstention=abstention, seed=seed, compared=compared)
        changes = None
        if items:
            rubrics = a.rubrics or inferred_rubrics([*a.verdicts, *b.verdicts])
            changes = item_changes(a.verdicts, b.verdicts, rubrics, formula=scored_by,
                                   abstention=abstention)
        return result, changes

    def show(result):
        from assay.cli.tables.agreement import comparison_tables, item_change_table

        comparison_report, changes = result
        yield from warnings(statuses)
        yield from left_out
        yield from comparison_tables(comparison_report, str(source_a), str(source_b))
        if changes is not None:
            yield from item_change_table(changes, max_rows)

    def dump(result):
        comparison_report, changes = result
        extra = None if changes is None else {
            "items": [change.model_dump(mode="json") for change in changes]}
        return dump_with_status(comparison_report, statuses, {
            "a": source_a, "b": source_b, "labels": labels}, extra=extra)

    report(compute, show, json_out=json_out, dump=dump)
