"""``assay rag grade | train | score | report``: ASTRID's RAG clinical QA metrics (seed 002).

Heavy imports happen inside the commands."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

rag_app = typer.Typer(help="RAG clinical QA metrics (ASTRID): CF, CR, RA, RAGAS baselines, "
                           "harm/helpfulness classifiers.", no_args_is_help=True)
app.add_typer(rag_app, name="rag")


@rag_app.command("grade")
def rag_grade(
    items: Path = typer.Argument(..., help="RAG conversations (JSONL)."),
    judge: str = typer.Option(..., "--judge", "-j", help="Judge spec, e.g. openai:gpt-4.1-mini or "
                              "openai-compatible:MODEL@http://HOST:PORT/v1."),
    out: Path = typer.Option(..., "--out", "-o", help="Job directory (re-running it resumes)."),
    turns: str = typer.Option("last", "--turns", help="last | all: which assistant turns to grade."),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines",
                                   help="Also compute RAGAS faithfulness and context relevance."),
    empty_cf: str = typer.Option("zero", "--empty-cf", help="CF with no informative sentence: "
                                 "zero | one | undefined."),
    cf_high: float = typer.Option(0.5, "--cf-high", help="CF at or above this reads as High in "
                                  "the Figure 11 diagnosis (0-1)."),
    context_tokens: int | None = typer.Option(None, "--context-tokens", min=1, help="About "
                                              "how many tokens of each turn's retrieved "
                                              "passages the judge sees, all together (default: "
                                              "all); for a judge with a small context."),
    prompts_file: Path | None = typer.Option(None, "--prompts", help="TOML of listing overrides: a "
                                             "'default' table and per judge model "
                                             "'models.NAME' tables."),
    budget: float | None = typer.Option(None, "--budget", help="Stop cleanly after this many USD."),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache (SQLite) to use."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file (assay.toml)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Grade each conversation's assistant turn(s): CF, CR, RA (and the RAGAS baselines).
    With --turns all, the averages are over every graded turn."""
    from pydantic import ValidationError

    from assay.cli.command import report
    from assay.cli.output import fail
    from assay.errors import InputError, Issue
    from assay.judges import check_judges, make_judge, run_sync
    from assay.rag.grading import RagOptions, grade_rag_async
    from assay.rag.items import read_rag_items

    try:
        options = RagOptions(turns=turns, baselines=baselines, empty_cf=empty_cf,
                             cf_high=cf_high, context_tokens=context_tokens)
    except ValidationError as exc:
        fail(InputError([Issue(None, None, "--" + str(e["loc"][0]).replace("_", "-"), e["msg"])
                         for e in exc.errors()]))

    def compute():
        from assay.rag.prompt_overrides import PromptOverrides, read_prompt_overrides

        conversations = read_rag_items(items)
        overrides = (read_prompt_overrides(prompts_file) if prompts_file is not None
                     else PromptOverrides())

        async def main():
            from assay.judges.budget import Budget
            from assay.judges.cache import ResponseCache

            extra = {}
            if budget is not None:
                extra["budget"] = Budget(budget)
            if cache is not None:
                extra["cache"] = ResponseCache(cache)
            try:
                async with make_judge(judge, config_file=config, **extra) as opened:
                    await check_judges([opened])  # unreachable or refused: fail before any work
                    chosen = options.model_copy(
                        update={"templates": overrides.for_model(opened.model)})
                    return await grade_rag_async(conversations, opened, out, options=chosen,
                                                 quiet=quiet)
            finally:
                if "cache" in extra:
                    extra["cache"].close()

        return run_sync(main())

    def show(run):
        from assay.cli.command import Note
        from assay.cli.tables.rag import averages_table
        from assay.rag.validation import averages

        yield averages_table([averages(run.grades, run.manifest["config"]["judge"])])
        for grade in run.grades:
            for turn in grade.turns:
                if turn.cf_unmatched:
                    yield Note(f"note: {grade.id} turn {turn.turn}: CF undefined: "
                               f"{len(turn.cf_unmatched)} answer sentence(s) the judge's replies "
                               f"do not name: " + "; ".join(repr(s) for s in turn.cf_unmatched))

    run = report(compute, show)
    lacking = f" ({len(run.partial)} without a RAGAS baseline)" if run.partial else ""
    typer.echo(f"{len(run.grades)} graded{lacking}, {len(run.failed)} failed -> "
               f"{run.grades_path}")
    for item_id, reason in run.failed.items():
        typer.echo(f"  failed {item_id}: {reason}", err=True)
    for item_id, reason in run.partial.items():
        typer.echo(f"  baseline failed {item_id}: {reason}", err=True)
    if run.failed or run.partial:  # run the same command again to retry exactly those calls
        from assay.cli.output import EXIT_INCOMPLETE

        raise typer.Exit(EXIT_INCOMPLETE)


@rag_app.command("train")
def rag_train(
    items: Path = typer.Argument(..., help="RAG conversations with human labels (JSONL)."),
    grades: Path | None = typer.Option(None, "--grades", "-g", help="grades.jsonl or a job "
                                       "directory of `assay rag grade` (the judge's features)."),
    target: str = typer.Option("harmful", "--target", help="harmful | helpful."),
    source: str = typer.Option("judge", "--features", help="judge (from --grades) | human "
                               "(the items' cf/cr/ra labels, as the paper)."),
    families: str = typer.Option("random_forest,svm,naive_bayes,mlp", "--models",
                                 help="Comma-separated model families."),
    folds: int = typer.Option(5, "--folds", min=2, help="Cross-validation folds."),
    grid: bool = typer.Option(True, "--grid/--no-grid", help="Grid-search RF and SVM in each fold."),
    seed: int = typer.Option(0, "--seed", help="Master seed (folds, models, bootstrap)."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for model.skops + model.json."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Cross-validate harm/helpfulness classifiers on [CF, CR, RA, scope]; save the best."""
    from assay.cli.command import dump_model, report
    from assay.cli.output import fail
    from assay.errors import InputError, Issue
    from assay.rag.classify import FAMILIES, SOURCES, TARGETS, labelled_set, save_model, train
    from assay.rag.grading import read_grades
    from assay.rag.items import read_rag_items

    chosen = [f.strip() for f in families.split(",") if f.strip()]
    problems = [Issue(None, None, "--models", f"unknown family {f!r}; choose from "
                      f"{', '.join(FAMILIES)}") for f in chosen if f not in FAMILIES]
    if target not in TARGETS:
        problems.append(Issue(None, None, "--target", f"{target!r}: use harmful or helpful"))
    if source not in SOURCES:
        problems.append(Issue(None, None, "--features", f"{source!r}: use judge or human"))
    if source == "judge" and grades is None:
        problems.append(Issue(None, None, "--grades", "needed with --features judge"))
    if problems or target not in TARGETS or source not in SOURCES:  # (the last two: narrowing)
        fail(InputError(problems))

    def compute():
        conversations = read_rag_items(items)
        graded = read_grades(grades) if grades is not None else None
        data = labelled_set(conversations, graded, target, source)
        trained, model = train(data, target=target, source=source, families=chosen,
                               folds=folds, seed=seed, grid=grid)
        save_model(out, model, trained)
        return trained

    def show(trained):
        from assay.cli.tables.rag import train_table

        return [train_table(trained)]

    trained = report(compute, show, json_out=json_out, dump=lambda result: dump_model(result, newline=True))
    typer.echo(f"{trained.n} rows ({trained.positives} {target}), {len(trained.skipped)} skipped; "
               f"saved {trained.chosen} -> {out}")


@rag_app.command("table2")
def rag_table2(
    items: Path = typer.Argument(..., help="RAG conversations with clinicians' labels (JSONL)."),
    grades: Path | None = typer.Option(None, "--grades", "-g", help="grades.jsonl or a job "
                                       "directory of `assay rag grade` (the judge's features)."),
    source: str = typer.Option("judge", "--features", help="judge (from --grades) | human "
                               "(the items' cf/cr/ra labels, as the paper)."),
    families: str = typer.Option("random_forest,svm,naive_bayes,mlp", "--models",
                                 help="Comma-separated model families."),
    targets: str = typer.Option("harmful,helpful,inappropriate", "--targets",
                                help="Comma-separated targets."),
    test_size: float = typer.Option(0.175, "--test-size", min=0.05, max=0.5,
                                    help="Held-out share (the paper: 0.175)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and the models."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the table as JSON here."),
) -> None:
    """Seed 002 Table 2: every model family on one fixed stratified held-out split, per-class
    F1 for harm, helpfulness and the 3-class inappropriateness."""
    from assay.cli.command import dump_model, report
    from assay.cli.output import fail
    from assay.errors import InputError, Issue
    from assay.rag.classify import FAMILIES, SOURCES
    from assay.rag.grading import read_grades
    from assay.rag.held_out import CLASSES, held_out_table
    from assay.rag.items import read_rag_items

    chosen = [f.strip() for f in families.split(",") if f.strip()]
    wanted = [t.strip() for t in targets.split(",") if t.strip()]
    problems = [Issue(None, None, "--models", f"unknown family {f!r}; choose from "
                      f"{', '.join(FAMILIES)}") for f in chosen if f not in FAMILIES]
    problems += [Issue(None, None, "--targets", f"unknown target {t!r}; choose from "
                       f"{', '.join(CLASSES)}") for t in wanted if t not in CLASSES]
    if source not in SOURCES:
        problems.append(Issue(None, None, "--features", f"{source!r}: use judge or human"))
    if source == "judge" and grades is None:
        problems.append(Issue(None, None, "--grades", "needed with --features judge"))
    if problems:
        fail(InputError(problems))

    def compute():
        conversations = read_rag_items(items)
        graded = read_grades(grades) if grades is not None else None
        return held_out_table(conversations, graded, source=source, families=chosen, seed=seed,
                              test_size=test_size, targets=wanted)

    def show(table2):
        from assay.cli.command import Note
        from assay.cli.tables.rag import held_out_table as render

        yield render(table2)
        for target, why in table2.skipped.items():
            yield Note(f"note: {target} left out: {why}")

    report(compute, show, json_out=json_out, dump=lambda result: dump_model(result, newline=True))


@rag_app.command("merge-labels")
def rag_merge_labels(
    items: Path = typer.Argument(..., help="RAG conversations whose metadata holds the "
                                 "clinicians' raw answers (JSONL)."),
    rules: Path = typer.Option(..., "--rules", help="TOML of merging rules per target."),
    out: Path = typer.Option(..., "--out", "-o", help="Items with the merged labels (JSONL)."),
) -> None:
    """Merge the clinicians' raw axes into the harmful / helpful / inappropriate labels."""
    from assay.cli.command import Note, report
    from assay.rag.items import read_rag_items, write_rag_items
    from assay.rag.label_merge import merge_labels, read_rules

    def compute():
        merged, summary = merge_labels(read_rag_items(items), read_rules(rules))
        write_rag_items(merged, out)
        return summary

    def show(summary):
        for target, counts in summary.counts.items():
            shown = ", ".join(f"{value}: {n}" for value, n in sorted(counts.items()))
            yield f"{target}: {shown or 'none'}; {len(summary.unlabelled[target])} unlabelled"
            if summary.unlabelled[target]:
                yield Note(f"note: {target}: no rule holds for " +
                           ", ".join(summary.unlabelled[target]) + " (left unlabelled; a label "
                           "they had is cleared)")
            for replacement in summary.replaced[target]:
                yield Note(f"note: {target}: replaced {replacement}")
        yield f"-> {out}"

    report(compute, show)


@rag_app.command("score")
def rag_score(
    grades: Path = typer.Argument(..., help="grades.jsonl or a job directory to score."),
    model: Path = typer.Option(..., "--model", "-m", help="A model directory from `rag train`."),
    out: Path = typer.Option(..., "--out", "-o", help="Predictions JSONL to write."),
) -> None:
    """Score a grading run with a saved classifier: P(target) per item."""
    from assay.cli.output import fail
    from assay.errors import AssayError
    from assay.io.jsonl import write_jsonl
    from assay.rag.classify import load_model
    from assay.rag.grading import read_grades

    try:
        trained = load_model(model)
        graded = read_grades(grades)
    except AssayError as exc:
        fail(exc)
    target = trained.report.target
    probs = trained.probabilities(graded)
    write_jsonl(({"id": k, f"p_{target}": p, target: None if p is None else p >= 0.5,
                  "model": trained.report.chosen} for k, p in probs.items()), out)
    flagged = sum(1 for p in probs.values() if p is not None and p >= 0.5)
    typer.echo(f"scored {len(probs)} items: {flagged} predicted {target} -> {out}")


@rag_app.command("report")
def rag_report_command(
    items: Path = typer.Argument(..., help="The RAG conversations (with any human labels)."),
    grades: list[Path] = typer.Option(..., "--grades", "-g", help="A grading run (grades.jsonl "
                                      "or job directory); repeat to compare judges."),
    model: list[Path] = typer.Option([], "--model", "-m", help="Saved classifier(s) to evaluate "
                                     "on the first run."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full report as JSON here."),
    html_out: Path | None = typer.Option(None, "--html", help="Also write it as one offline HTML "
                                         "file, with every conversation and its diagnosis."),
) -> None:
    """The §8 validation report: Table 3 averages, CF vs RAGAS faithfulness against perceived
    faithfulness, judge-vs-human and across-judge agreement, hazards, classifiers."""
    from assay.cli.command import dump_model, report
    from assay.rag.classify import load_model
    from assay.rag.grading import read_grades
    from assay.rag.items import read_rag_items
    from assay.rag.validation import rag_report

    def compute():
        conversations = read_rag_items(items)
        runs, sources = {}, {}
        for path in grades:
            graded = read_grades(path)
            name = graded[0].judge if graded else path.stem
            name = name if name not in runs else f"{name} ({path})"
            runs[name], sources[name] = graded, str(path)
        models = [load_model(m) for m in model]
        result = rag_report(conversations, runs, models=models, seed=seed, sources=sources)
        if html_out is not None:
            from assay.report.rag_html import write_rag_html

            write_rag_html(result, conversations, runs, html_out)
        return result

    def show(rag):
        from assay.cli.command import Note
        from assay.cli.tables.rag import report_tables

        yield from report_tables(rag)
        for c in rag.coverage:
            if c.not_graded or c.not_items:
                yield Note(f"note: run {c.run}: {c.shared} of {c.items} items graded; "
                           f"{c.not_graded} items without a grade and {c.not_items} grades of "
                           "no item are left out")
        yield (f"every figure, judge and human, is over the {rag.items_compared} items "
               "graded by every run")

    report(compute, show, json_out=json_out, dump=lambda result: dump_model(result, newline=True))
