"""``assay cia``, ``assay nearmiss build|judge``, ``assay refine`` and ``assay rubric stats``:
is a rubric any good, and does it help (seed 000)?

Each model-calling command is a job in ``--out`` (resumable: run it again to continue; a
changed config is refused). Heavy imports happen inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app

nearmiss_app = typer.Typer(
    help="Near-miss pairs: build them, judge them with rubrics.", no_args_is_help=True
)
rubric_app = typer.Typer(
    help="Describe rubric sets (seed 000's released format, HealthBench).", no_args_is_help=True
)
app.add_typer(nearmiss_app, name="nearmiss")
app.add_typer(rubric_app, name="rubric")

_RUBRICS = (
    "Rubric set: seed 000 JSONL ({index, rubrics} or {index, original_query, "
    "generated_rubrics}), HealthBench JSONL, or one rubric shared by all queries."
)
_GOLD = (
    "Gold (physician) rubrics: HealthBench JSONL, or seed 000's reference_rubrics.jsonl "
    "(then give --conversations)."
)
_JUDGE = "Judge spec, e.g. openai:gpt-4.1 or openai-compatible:MODEL@URL."
_CACHE = "Response cache (SQLite) shared across jobs."
_BUDGET = "Hard spending limit in USD."


# Options every job command shares.
JobOut = Annotated[Path, typer.Option("--out", help="Job directory (created, or resumed).")]
Cache = Annotated[Path | None, typer.Option("--cache", help=_CACHE)]
BudgetUsd = Annotated[float | None, typer.Option("--budget", min=0, help=_BUDGET)]
Quiet = Annotated[bool, typer.Option("--quiet", help="No progress bars.")]


def _named(values: list[str], option: str) -> dict[str, Path | None]:
    """``NAME=FILE`` options (``none`` alone: the no-rubric baseline) as ``{name: path}``."""
    from assay.errors import InputError, Issue

    out: dict[str, Path | None] = {}
    for value in values:
        name, eq, path = value.partition("=")
        if not eq and value.strip().lower() == "none":
            name, target = "none", None
        elif not eq or not name.strip() or not path.strip():
            raise InputError(
                Issue(None, None, option, f"expected NAME=FILE (or none), got {value!r}")
            )
        else:
            name, target = name.strip(), Path(path.strip())
        if name in out:
            raise InputError(Issue(None, None, option, f"the name {name!r} is given twice"))
        out[name] = target
    return out


def _run(coroutine):
    import asyncio

    return asyncio.run(coroutine)


@app.command()
def cia(
    candidate: Annotated[Path, typer.Argument(help="The candidate rubric set. " + _RUBRICS)],
    gold: Annotated[Path, typer.Option("--gold", help=(
        "Gold (physician) rubrics: HealthBench JSONL or seed 000's reference_rubrics.jsonl "
        "(index-keyed)."))],
    judge: Annotated[str, typer.Option("--judge", help="The verifier (and atomiser). " + _JUDGE)],
    out: JobOut,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="A second rubric set to compare (McNemar and z-test on the paired gold points).",
        ),
    ] = None,
    atomize: Annotated[
        bool,
        typer.Option(
            "--atomize/--no-atomize",
            help="Split the gold criteria into atomic points first (else one point per criterion).",
        ),
    ] = True,
    gold_points: Annotated[
        Path | None,
        typer.Option(
            "--gold-points",
            help="Use the gold atomic points of an earlier job (its gold_atomic_points.jsonl) "
            "instead of atomising, so separate jobs share one gold atomisation.",
        ),
    ] = None,
    level: Annotated[float, typer.Option("--level", min=0.5, max=0.999, help="CI level.")] = 0.95,
    cache: Cache = None,
    budget: BudgetUsd = None,
    quiet: Quiet = False,
) -> None:
    """Clinical Intent Alignment: the share of gold points a rubric set covers (Wilson CI).

    Writes gold_atomic_points.jsonl (reusable with --gold-points), coverage.jsonl (what
    `assay coverage` reads; coverage_against.jsonl with --against) and cia.json. Only gold
    queries that every set has a rubric for are scored; the others are listed.
    """
    from assay.cli.command import Note, report

    def compute():
        from assay.rubric_eval import arun_cia

        return _run(arun_cia(candidate, gold, judge=judge, out=out, against=against,
                             atomize_gold=atomize, cache=cache, budget_usd=budget, level=level,
                             quiet=quiet, gold_points=gold_points))

    def show(result):
        from assay.cli.tables.meta import coverage_tables

        if result.summary is not None:
            yield from coverage_tables(result.summary, str(candidate),
                                       str(against) if against else None)
        points = sum(len(p) for p in result.points.values())
        counts = result.fallback_counts()
        why = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items()
                        if n and kind != "total")
        fell_back = (f" ({counts['total']} by the atomiser's fallback, one point per "
                     f"criterion: {why})" if counts["total"] else "")
        yield Note(f"{points} gold points from {len(result.points)} queries{fell_back}; "
                   f"outputs in {result.out}")
        names = {"candidate": candidate, "against": against}
        for label, missing in result.without_candidate.items():
            if missing:
                yield Note(f"note: {len(missing)} gold queries have no rubric in "
                           f"{names[label]} (first: {missing[0]}): left out of CIA, not "
                           "counted as uncovered")
        for label, extra in result.not_in_gold.items():
            if extra:
                yield Note(f"note: {len(extra)} queries of {names[label]} are not in the gold "
                           f"set (first: {extra[0]}): ignored")
        if len(result.scope) < result.gold_queries:
            yield Note(f"CIA covers {len(result.scope)} of {result.gold_queries} gold queries")

    _exit_if_failed(report(compute, show).failed)


@nearmiss_app.command("build")
def nearmiss_build(
    gold: Annotated[Path, typer.Option("--gold", help=_GOLD + " Targets are chosen from it.")],
    judge: Annotated[
        str, typer.Option("--judge", help="The editor that writes the perturbation. " + _JUDGE)
    ],
    out: JobOut,
    references: Annotated[
        Path | None,
        typer.Option(
            "--references",
            help="Reference answers "
            "({index, reference_response}); default: HealthBench's "
            "ideal completions.",
        ),
    ] = None,
    conversations: Annotated[
        Path | None,
        typer.Option(
            "--conversations",
            help="conversations.txt (index<TAB>User: ...) for a seed 000 gold file.",
        ),
    ] = None,
    pairs: Annotated[
        Path | None,
        typer.Option("--pairs", help="Write the pairs here (default: OUT/pairs.jsonl)."),
    ] = None,
    attempts: Annotated[
        int, typer.Option("--attempts", min=1, help="LLM edits tried before the rule fallback.")
    ] = 2,
    max_span_chars: Annotated[
        int, typer.Option("--max-span-chars", min=1,
                          help="The longest span (and replacement) an edit may change.")
    ] = 160,
    max_span_share: Annotated[
        float, typer.Option("--max-span-share", min=0.0, max=1.0,
                            help="The largest share of the reference an edit may change.")
    ] = 0.25,
    cache: Cache = None,
    budget: BudgetUsd = None,
    quiet: Quiet = False,
) -> None:
    """Build near-miss pairs: each reference answer with one bounded span changed so that one
    critical fact breaks (the candidate is built from the reference, never the model's text)."""
    from assay.cli.command import Note, report

    def compute():
        from assay.rubric_eval import arun_build

        return _run(arun_build(gold, judge=judge, out=out, references=references,
                               conversations=conversations, pairs_path=pairs, attempts=attempts,
                               max_span_chars=max_span_chars, max_span_share=max_span_share,
                               cache=cache, budget_usd=budget, quiet=quiet))

    def show(result):
        from assay.cli.tables.rubric_eval import pairs_table

        yield pairs_table(result)
        if result.skipped:
            first = next(iter(result.skipped.values()))
            yield Note(f"note: {len(result.skipped)} queries have no reference answer and were "
                       f"skipped (first: {first}); the job record lists them all")

    _exit_if_failed(report(compute, show).failed)


@nearmiss_app.command("judge")
def nearmiss_judge(
    pairs: Annotated[Path, typer.Argument(help="Pair file from `assay nearmiss build`.")],
    rubrics: Annotated[
        list[str],
        typer.Option(
            "--rubrics",
            help="NAME=FILE per rubric set (repeat); "
            "`none` for the no-rubric baseline. " + _RUBRICS,
        ),
    ],
    judge: Annotated[str, typer.Option("--judge", help="The pairwise judge. " + _JUDGE)],
    out: JobOut,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Trials per order.")] = 3,
    swap: Annotated[bool, typer.Option("--swap/--no-swap", help="Judge both orders.")] = True,
    totals: Annotated[
        str,
        typer.Option(
            "--totals",
            help="hits: V = Σ w·hit from the rubric's "
            "weights; judge: the totals the judge reports.",
        ),
    ] = "hits",
    n_bootstrap: Annotated[
        int, typer.Option("--n-bootstrap", min=1, help="Bootstrap resamples.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    cache: Cache = None,
    budget: BudgetUsd = None,
    quiet: Quiet = False,
) -> None:
    """Judge near-miss pairs with each rubric set: win/tie/loss, μΔ, AUROCs (seed 000 Table 2).

    Writes pair_calls_NAME.jsonl per set (what `assay discrimination` reads) and
    discrimination.json.
    """
    from assay.cli.command import Note, report

    def compute():
        from assay.errors import InputError, Issue

        if totals not in ("hits", "judge"):
            raise InputError(Issue(None, None, "--totals", f"hits or judge, not {totals!r}"))
        from assay.rubric_eval import arun_judge

        return _run(arun_judge(pairs, _named(rubrics, "--rubrics"), judge=judge, out=out,
                               trials=trials, swap=swap, totals=totals,
                               n_bootstrap=n_bootstrap, seed=seed, cache=cache,
                               budget_usd=budget, quiet=quiet))

    def show(result):
        from assay.cli.tables.rubric_eval import discrimination_overview

        yield discrimination_overview(result)
        for name, skipped in result.without_rubric.items():
            if skipped:
                yield Note(f"note: {len(skipped)} pairs have no {name} rubric and were skipped")
        yield Note(f"outputs in {result.out}")

    _exit_if_failed(report(compute, show).failed)


@app.command()
def refine(
    judge: Annotated[str, typer.Option("--judge", help="plan: the critic (edit plans); "
                                       "rubricstree: the auditor (grades the leaves). " + _JUDGE)],
    out: JobOut,
    method: Annotated[str, typer.Option(
        "--method", help="plan: seed 000's critique → edit plan → rewrite (the default); "
        "rubricstree: RubricsTree's route → audit → feedback report → one P4 revision → audit "
        "again (seed 003 §6.3).")] = "plan",
    gold: Annotated[
        Path | None, typer.Option("--gold", help="plan: " + _GOLD + " Used to score, and as "
                                  "the Oracle.")
    ] = None,
    base: Annotated[
        Path | None, typer.Option("--base", help="plan: frozen base responses ({index, "
                                  "response}).")
    ] = None,
    items: Annotated[Path | None, typer.Option(
        "--items", help="rubricstree: the items, each with its base response (and any health "
        "memory).")] = None,
    responses: Annotated[Path | None, typer.Option(
        "--responses", help="rubricstree: base responses for --items, as for assay grade.")] = None,
    taxonomy: Annotated[str, typer.Option(
        "--taxonomy", help="rubricstree: the taxonomy (starter, or a file).")] = "starter",
    router: Annotated[str, typer.Option(
        "--router", help="rubricstree: tree | catalogue | embedding | relevance | all.")] = "tree",
    router_judge: Annotated[str | None, typer.Option(
        "--router-judge", help="rubricstree: the router's judge (default: --judge).")] = None,
    actor: Annotated[str | None, typer.Option(
        "--actor", help="rubricstree: the model that revises (the model under test). "
        + _JUDGE)] = None,
    template: Annotated[str, typer.Option(
        "--template", help="rubricstree: auditor, or auditor:ROLE (an evaluator role).")
    ] = "auditor",
    config: Annotated[Path | None, typer.Option("--config", help="Judge config file.")] = None,
    rubrics: Annotated[
        list[str] | None,
        typer.Option(
            "--rubrics", help="NAME=FILE per rubric set guiding the critique (repeat). " + _RUBRICS
        ),
    ] = None,
    conversations: Annotated[
        Path | None,
        typer.Option("--conversations", help="conversations.txt for a seed 000 gold file."),
    ] = None,
    editor: Annotated[
        str | None, typer.Option("--editor", help="The rewriting model (default: --judge).")
    ] = None,
    scorer: Annotated[
        str | None, typer.Option("--scorer", help="The HealthBench grader (default: --judge).")
    ] = None,
    self_critique: Annotated[
        bool, typer.Option("--self-critique/--no-self-critique", help="Run the no-rubric control.")
    ] = True,
    oracle: Annotated[
        bool, typer.Option("--oracle/--no-oracle", help="Run the gold-rubric control.")
    ] = True,
    max_steps: Annotated[
        int | None,
        typer.Option("--max-steps", min=1, help="Cap on edit-plan steps (highest priority first)."),
    ] = None,
    n_bootstrap: Annotated[
        int, typer.Option("--n-bootstrap", min=1, help="Bootstrap resamples.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap and permutation seed.")] = 0,
    cache: Cache = None,
    budget: BudgetUsd = None,
    quiet: Quiet = False,
) -> None:
    """Rubric-guided refinement. ``--method plan`` (seed 000 Table 3): critique → edit plan →
    rewrite, scored with the HealthBench grader against the gold rubrics; paired tests between
    conditions. ``--method rubricstree`` (seed 003 §6.3): route, audit the active leaves, one
    revision guided by the feedback report, audit again; paired tests, per-axis and per-leaf
    gains."""
    from assay.cli.command import Note, report

    if method == "rubricstree":
        _refine_rubricstree(
            items=items, responses=responses, taxonomy=taxonomy, router=router,
            router_judge=router_judge, judge=judge, actor=actor, template=template, out=out,
            cache=cache, budget=budget, config=config, n_bootstrap=n_bootstrap, seed=seed,
            quiet=quiet, plan_only={"--gold": gold, "--base": base, "--rubrics": rubrics,
                                    "--conversations": conversations, "--editor": editor,
                                    "--scorer": scorer, "--max-steps": max_steps})
        return

    def compute():
        from assay.errors import InputError, Issue
        from assay.rubric_eval import arun_refine

        if method != "plan":
            raise InputError(Issue(None, None, "--method", f"unknown method {method!r}; choose "
                                   "plan or rubricstree"))
        for flag, value in (("--gold", gold), ("--base", base)):
            if value is None:
                raise InputError(Issue(None, None, flag, "--method plan needs --gold and --base"))
        assert gold is not None and base is not None

        named = _named(rubrics or [], "--rubrics")
        if None in named.values():
            raise InputError(Issue(None, None, "--rubrics", "the no-rubric condition is the "
                                   "self-critique control (on by default), not `none`"))
        paths = {name: path for name, path in named.items() if path is not None}  # (all are)
        return _run(arun_refine(gold, base, paths, judge=judge, out=out,
                                editor=editor, scorer=scorer, conversations=conversations,
                                self_critique=self_critique, oracle=oracle, max_steps=max_steps,
                                n_bootstrap=n_bootstrap, seed=seed, cache=cache,
                                budget_usd=budget, quiet=quiet))

    def show(result):
        from assay.cli.tables.rubric_eval import refine_tables

        yield from refine_tables(result)
        if result.skipped:
            yield Note(f"note: {len(result.skipped)} queries have an empty base response and "
                       f"were left out (first: {next(iter(result.skipped.values()))})")
        yield Note(f"outputs in {result.out}")

    _exit_if_failed(report(compute, show).failed)


def _refine_rubricstree(*, items, responses, taxonomy, router, router_judge, judge, actor,
                        template, out, cache, budget, config, n_bootstrap, seed, quiet,
                        plan_only) -> None:
    """``assay refine --method rubricstree`` (see :mod:`assay.routing.optimise`)."""
    from assay.cli.command import Note, report

    def compute():
        from assay.errors import InputError, Issue
        from assay.io import read_taxonomy
        from assay.routing.data import resolve_taxonomy
        from assay.routing.optimise import arun_rubricstree_refine
        from assay.routing.run import ROUTERS
        from assay.runs.sources import ItemSource, read_responses

        given = [flag for flag, value in plan_only.items()
                 if value not in (None, [], False)]
        if given:
            raise InputError(Issue(None, None, given[0], "belongs to --method plan"))
        if items is None or actor is None:
            raise InputError(Issue(None, None, "--items" if items is None else "--actor",
                                   "--method rubricstree needs --items and --actor"))
        if router not in ROUTERS:
            raise InputError(Issue(None, None, "--router", f"unknown router {router!r}; "
                                   f"choose one of {', '.join(ROUTERS)}"))
        source = ItemSource(path=items, responses=read_responses(responses)
                            if responses is not None else None)
        loaded = list(source)
        if source.issues:
            raise InputError(source.issues)
        if source.skipped_without_response:
            raise InputError(Issue(str(responses), None, "--responses", f"no base response for "
                                   f"{source.skipped_without_response} items"))
        if not loaded:
            raise InputError(Issue(str(items), None, None, "no items"))
        tree = read_taxonomy(resolve_taxonomy(taxonomy))
        return _run(arun_rubricstree_refine(
            loaded, tree, judge=judge, actor=actor, out=out, router=router,
            router_judge=router_judge, template=template, cache=cache, budget_usd=budget,
            config_file=config, n_bootstrap=n_bootstrap, seed=seed, quiet=quiet))

    def show(result):
        from assay.cli.tables.optimise import optimise_tables

        yield from optimise_tables(result)
        yield Note(f"cost ${result.cost_usd:.4f}; outputs in {result.out}")

    result = report(compute, show)
    _exit_if_failed({**result.not_revised, **result.failed})


@rubric_app.command("stats")
def rubric_stats_command(
    path: Annotated[Path, typer.Argument(help=_RUBRICS)],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Seed 000 §5.2's statistics: items, per query min/mean/max, negatives, Σ points, axes."""
    from assay.cli.command import report

    def compute():
        from assay.rubric_eval import read_rubric_set, rubric_stats

        return rubric_stats(read_rubric_set(path))

    def show(stats):
        from assay.cli.tables.rubric_eval import stats_table

        return [] if as_json else [stats_table(path.name, stats)]

    stats = report(compute, show)
    if as_json:
        typer.echo(stats.model_dump_json(indent=2))


def _exit_if_failed(failed: dict[str, str]) -> None:
    """An incomplete job's failed items, one ``error`` line each, then exit 4 (as every job
    with failed items: docs/run-safety.md)."""
    if not failed:
        return
    from assay.cli.output import EXIT_INCOMPLETE, print_issues
    from assay.errors import Issue

    print_issues([Issue(None, None, key, reason) for key, reason in failed.items()])
    typer.echo(
        "some items failed: fix the cause and run the same command again to finish", err=True
    )
    raise typer.Exit(EXIT_INCOMPLETE)
