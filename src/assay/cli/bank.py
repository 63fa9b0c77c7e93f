"""``assay bank build|select|prompt|show``: criterion banks (Health-SCORE, seed 004).
Heavy imports happen inside the commands."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app
from assay.errors import AssayError

bank_app = typer.Typer(help="Criterion banks: build from instance rubrics, select per prompt, "
                       "rubric system prompts.", no_args_is_help=True)
app.add_typer(bank_app, name="bank")

_BANK_HELP = "A bank: 'health-score' (the paper's 29 criteria) or a bank/rubric file."


@bank_app.command("build")
def bank_build(
    sources: list[Path] = typer.Argument(..., help="HealthBench/item JSONL files with rubrics, or "
                                         "rubric files.", show_default=False),
    out: Path = typer.Option(..., "--out", "-o", help="The bank to write (.yaml or .json)."),
    report: Path | None = typer.Option(None, "--report", help="Also write the cluster report as "
                                       "Markdown here (the JSON report always goes to "
                                       "OUT.report.json)."),
    theme: str | None = typer.Option(None, "--theme", help="Only items tagged theme:THEME "
                                     "(the paper: health_data_tasks)."),
    method: str = typer.Option("agglomerative", "--method", help="agglomerative or hdbscan."),
    distance_threshold: float | None = typer.Option(
        0.45, "--distance-threshold", help="Agglomerative: cosine distance at which clusters stop "
        "merging (ignored with --n-clusters; a fixed number applies to each sign)."),
    n_clusters: int | None = typer.Option(None, "--n-clusters", help="Agglomerative: a fixed "
                                          "number of clusters instead of a threshold."),
    linkage: str = typer.Option("average", "--linkage", help="average, complete or single."),
    min_cluster_size: int = typer.Option(3, "--min-cluster-size", help="HDBSCAN's "
                                         "min_cluster_size."),
    min_samples: int | None = typer.Option(None, "--min-samples", help="HDBSCAN's min_samples."),
    epsilon: float = typer.Option(0.0, "--epsilon", help="HDBSCAN's cluster_selection_epsilon."),
    drop_templates: bool = typer.Option(True, "--drop-templates/--keep-templates", help="Leave "
                                        "HealthBench's consensus criteria (level:cluster) out "
                                        "before clustering."),
    generalise: bool = typer.Option(True, "--generalise/--verbatim", help="Cluster criteria "
                                    "without their instance details (examples, asides, "
                                    "justifications) and write each representative as a "
                                    "stand-alone criterion ('The response ...'); --verbatim: "
                                    "the medoid as written."),
    min_size: int = typer.Option(2, "--min-size", help="Clusters with fewer rubric items are "
                                 "outliers."),
    min_prompts: int = typer.Option(2, "--min-prompts", help="Clusters drawn from fewer "
                                    "conversations are too specific to keep."),
    max_criteria: int = typer.Option(40, "--max-criteria", help="Keep at most this many (0: all)."),
    dedup: float = typer.Option(0.9, "--dedup", help="Pool clusters of one sign whose medoids "
                                "are at least this similar (cosine)."),
    max_sources: int = typer.Option(20_000, "--max-sources", help="Sub-sample (seeded) above this "
                                    "many distinct criteria (0: never)."),
    seed: int = typer.Option(0, "--seed", help="Master seed (sub-sampling)."),
    embedding_model: str | None = typer.Option(None, "--embedding-model", help="A local "
                                               "sentence-transformers folder (default: the "
                                               "bundled all-MiniLM-L6-v2)."),
    bank_id: str = typer.Option("bank", "--id", help="Bank id (criterion ids are ID-01, ...)."),
    version: str | None = typer.Option(None, "--version", help="Bank version (default: a hash "
                                       "of its criteria)."),
    reference: str = typer.Option("health-score", "--reference", help="Measure one-to-one "
                                  "coverage of this bank ('health-score', a file, or 'none') "
                                  "beside the most frequent criteria."),
    coverage_threshold: float = typer.Option(0.7, "--coverage-threshold", help="Cosine "
                                             "similarity at which a matched pair counts."),
    distil: str | None = typer.Option(None, "--distil", help="Distil one criterion per cluster "
                                      "with this judge (default: the medoid, generalised)."),
    job_dir: Path | None = typer.Option(None, "--job-dir", help="With --distil: where calls are "
                                        "traced and resumed (default OUT.job/)."),
) -> None:
    """Embed every criterion, cluster, one representative per cluster: a bank file and a report."""
    from assay.cli.output import fail

    try:
        _build(locals())
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


def _build(args: dict) -> None:
    import json

    from assay.bank.builder import BankConfig, abuild_bank
    from assay.bank.cluster import ClusterParams
    from assay.bank.report import render_markdown
    from assay.io import write_rubric
    from assay.judges.sync import run_sync

    params = ClusterParams(
        method=args["method"], distance_threshold=None if args["n_clusters"] else
        args["distance_threshold"], n_clusters=args["n_clusters"], linkage=args["linkage"],
        min_cluster_size=args["min_cluster_size"], min_samples=args["min_samples"],
        cluster_selection_epsilon=args["epsilon"])
    config = BankConfig(cluster=params, min_size=args["min_size"], min_prompts=args["min_prompts"],
                        max_criteria=args["max_criteria"] or None, dedup_similarity=args["dedup"],
                        theme=args["theme"], max_sources=args["max_sources"] or None,
                        drop_templates=args["drop_templates"], generalise=args["generalise"],
                        seed=args["seed"], embedding_model=args["embedding_model"],
                        bank_id=args["bank_id"], version=args["version"],
                        reference=None if args["reference"] == "none" else args["reference"],
                        coverage_threshold=args["coverage_threshold"])
    out: Path = args["out"]

    async def build():
        if not args["distil"]:
            return await abuild_bank(args["sources"], config)
        from assay.bank.distil import LLMDistiller
        from assay.jobs import JobDir, StageCaller
        from assay.judges import make_judge

        job = JobDir.open(args["job_dir"] or out.with_suffix(".job"), kind="bank-build",
                          config={"bank": config.to_dict(), "judge": args["distil"],
                                  "sources": [str(p) for p in args["sources"]]})
        judge = make_judge(args["distil"])
        try:
            result = await abuild_bank(args["sources"], config,
                                       distiller=LLMDistiller(StageCaller(judge, job.store)))
        except BaseException:
            job.finish(status="failed")
            raise
        finally:
            await judge.aclose()
        job.finish(status="complete")
        return result

    result = run_sync(build())
    write_rubric(result.bank, out)
    report_json = out.with_name(out.stem + ".report.json")
    report_json.write_text(json.dumps(result.report_dict(), indent=2, ensure_ascii=False) + "\n")
    if args["report"]:
        args["report"].write_text(render_markdown(result.reports, coverage=result.coverage))
    kept = sorted((r for r in result.reports if r.status == "kept"),
                  key=lambda r: r.criterion_id or "")
    typer.echo(f"{result.n_sources} distinct criteria ({result.n_occurrences} rubric items; "
               f"{result.templates_dropped} consensus templates left out) -> "
               f"{len(result.reports)} clusters -> {len(kept)} bank criteria")
    for r in kept:
        text = " ".join(r.representative.split())
        typer.echo(f"  {r.criterion_id}  {'-' if r.polarity == 'negative' else '+'}  "
                   f"size {r.size:>3}  prompts {r.prompt_count:>3}  {text[:80]}")
    typer.echo(f"mixed-polarity clusters kept: {result.mixed_polarity_kept}")
    if result.coverage is not None:
        typer.echo(coverage_line(result.coverage))
    typer.echo(f"wrote {out} (version {result.bank.version}) and {report_json}")


def coverage_line(coverage) -> str:
    """One line: the bank's and the baseline's one-to-one coverage of the reference."""
    bank, base = coverage.bank, coverage.most_frequent
    return (f"one-to-one coverage of {coverage.reference} ({bank.reference_size} criteria, "
            f"cosine >= {bank.threshold}): bank {bank.matched}, the {base.candidates} most "
            f"frequent criteria {base.matched}")


@bank_app.command("select")
def bank_select(
    items: Path = typer.Argument(..., help="HealthBench or item JSONL: the prompts.",
                                 show_default=False),
    judge: str = typer.Option(..., "--judge", "-j", help="The selector model (a judge spec)."),
    out: Path = typer.Option(..., "--out", "-o", help="Selections JSONL (one line per item)."),
    bank: str = typer.Option("health-score", "--bank", help=_BANK_HELP),
    threshold: int = typer.Option(4, "--threshold", help="Keep criteria scoring at least this "
                                  "(1-5)."),
    fallback: str = typer.Option("best", "--fallback", help="When none passes: best, all or none."),
    store: Path | None = typer.Option(None, "--store", help="Call store (resume; default "
                                      "OUT.calls.sqlite)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Score every bank criterion's relevance (1-5) per prompt and keep those above threshold."""
    from assay.cli.output import fail

    try:
        _select(items, judge, out, bank, threshold, fallback, store, quiet)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


def _select(items_path, judge_spec, out, bank_name, threshold, fallback, store_path, quiet):
    import json

    from assay.bank.selection import RelevanceSelector, checked_fallback
    from assay.bank.shipped import load_bank
    from assay.io import load_items
    from assay.jobs import CallStore, StageCaller, run_batch
    from assay.judges import estimate_tokens, make_judge
    from assay.judges.sync import run_sync

    bank = load_bank(bank_name)
    items = load_items(items_path)
    store = CallStore.open(store_path or out.with_name(out.name + ".calls.sqlite"))

    fallback = checked_fallback(fallback)

    async def go():
        judge = make_judge(judge_spec)
        selector = RelevanceSelector(StageCaller(judge, store), bank, threshold=threshold,
                                     fallback=fallback)
        # A store may hold selections made with another bank, threshold, fallback or model:
        # each is stored under its settings' key, so none is returned for other settings (the
        # ratings themselves are reused wherever the call is the same).
        settings = selector.settings_key

        async def worker(item):
            messages = [m.model_dump() for m in item.messages]
            return (await selector.select(messages, key=item.id)).to_dict()

        try:
            return settings, await run_batch(items, worker, store=store,
                                             item_id=lambda i: f"{settings}/{i.id}",
                                             label="selecting", quiet=quiet)
        finally:
            await judge.aclose()

    settings, result = run_sync(go())
    texts = {c.id: c.text for c in bank.criteria}
    counts, tokens = [], []
    with out.open("w") as f:
        for item in items:
            row = result.results.get(f"{settings}/{item.id}")
            if row is None:
                continue
            f.write(json.dumps({"item_id": item.id, **row}, ensure_ascii=False) + "\n")
            counts.append(len(row["selected"]))
            tokens.append(sum(estimate_tokens(texts[c]) for c in row["selected"]))
    if counts:
        typer.echo(f"{len(counts)} prompts: {sum(counts) / len(counts):.1f} of "
                   f"{len(bank.criteria)} criteria selected on average "
                   f"(~{sum(tokens) / len(tokens):.0f} tokens; the paper: 11.5 of 29, 431 "
                   f"tokens) -> {out}")
    for key, error in result.failed.items():
        typer.echo(f"failed {key.removeprefix(settings + '/')}: {error}", err=True)
    store.close()
    if result.failed:
        raise typer.Exit(1)


@bank_app.command("prompt")
def bank_prompt(
    condition: str = typer.Argument(..., help="none, single-axis, multi-axes, llm-generated, "
                                    "health-score, health-score-adaptive, instance-specific."),
    bank: str | None = typer.Option(None, "--bank", help=_BANK_HELP + " Default: health-score "
                                    "(for health-score, health-score-adaptive, llm-generated)."),
    criteria: str | None = typer.Option(None, "--criteria", help="Comma-separated criterion ids "
                                        "of --bank (health-score-adaptive, llm-generated)."),
    selection: Path | None = typer.Option(None, "--selection", help="A selections JSONL from "
                                          "'assay bank select' (with --item)."),
    item: str | None = typer.Option(None, "--item", help="The item whose selection to use."),
) -> None:
    """Print the rubric system prompt of a condition (the paper's §3.5)."""
    from assay.cli.output import fail

    try:
        text = _prompt(condition, bank, criteria, selection, item)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    typer.echo(text if text is not None else "(no system prompt)")


# The options each condition reads; any other given is refused rather than silently ignored.
_PROMPT_OPTIONS = {"none": (), "single-axis": (), "multi-axes": (), "instance-specific": (),
                   "health-score": ("--bank",),
                   "health-score-adaptive": ("--bank", "--criteria", "--selection", "--item"),
                   "llm-generated": ("--bank", "--criteria", "--selection", "--item")}


def _prompt(condition, bank_name, criteria, selection, item):
    from assay.bank.shipped import load_bank
    from assay.bank.system_prompt import system_prompt
    from assay.errors import ConfigError

    if condition not in _PROMPT_OPTIONS or condition == "instance-specific":
        return system_prompt(condition)  # raises, naming the choices or why not
    given = {"--bank": bank_name, "--criteria": criteria, "--selection": selection,
             "--item": item}
    ignored = [name for name, value in given.items()
               if value is not None and name not in _PROMPT_OPTIONS[condition]]
    if ignored:
        reads = ", ".join(_PROMPT_OPTIONS[condition]) or "no option"
        raise ConfigError(f"{condition} ignores {', '.join(ignored)} (it reads {reads})")
    if criteria is not None and selection is not None:
        raise ConfigError("give --criteria or --selection, not both")
    if (selection is None) != (item is None):
        raise ConfigError("--selection and --item go together: the item whose selection to show")
    bank = load_bank(bank_name or "health-score")
    if condition == "health-score":
        return system_prompt(condition, bank.criteria)
    if criteria is None and selection is None:
        raise ConfigError(f"{condition} shows the criteria chosen for one prompt: give "
                          "--criteria or --selection and --item")
    if criteria is not None:
        ids = [c.strip() for c in criteria.split(",") if c.strip()]
        chosen = _bank_criteria(bank, ids, source=None, line=None, field="--criteria")
    else:
        chosen = _selected(bank, selection, item)
    return system_prompt(condition, chosen)


def _selected(bank, path: Path, item: str):
    """The criteria of ``item``'s selection in a selections JSONL; errors name file and line."""
    import json

    from assay.errors import InputError, Issue

    found = None
    with path.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(Issue(str(path), line_no, None, f"invalid JSON: {exc.msg}")) \
                    from None
            if isinstance(row, dict) and row.get("item_id") == item:
                found = (line_no, row.get("selected"))
    if found is None:
        raise InputError(Issue(str(path), None, None, f"no selection for item {item!r}"))
    line_no, ids = found
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InputError(Issue(str(path), line_no, "selected", "expected a list of criterion ids"))
    return _bank_criteria(bank, ids, source=str(path), line=line_no, field="selected")


def _bank_criteria(bank, ids, *, source, line, field):
    """``ids`` as criteria of ``bank``; an unknown id is an error at ``field`` (and line)."""
    from assay.errors import InputError, Issue

    known = {c.id: c for c in bank.criteria}
    issues = [Issue(source, line, f"{field}[{i}]" if source else field,
                    f"unknown criterion id {cid!r}; bank {bank.id!r} has "
                    f"{', '.join(list(known)[:3])}, ... ({len(known)} criteria)")
              for i, cid in enumerate(ids) if cid not in known]
    if issues:
        raise InputError(issues)
    return [known[cid] for cid in ids]


@bank_app.command("show")
def bank_show(bank: str = typer.Argument("health-score", help=_BANK_HELP)) -> None:
    """List a bank's criteria with their polarity."""
    from assay.bank.shipped import load_bank
    from assay.cli.output import fail

    try:
        rubric = load_bank(bank)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    typer.echo(f"{rubric.id} version {rubric.version}: {len(rubric.criteria)} criteria")
    for c in rubric.criteria:
        inferred = " (polarity inferred)" if c.metadata.get("polarity_inferred") else ""
        typer.echo(f"  {c.id}  {'-' if c.is_penalty else '+'}  {c.text}{inferred}")


@bank_app.command("llm-rubrics")
def bank_llm_rubrics(
    items: Path = typer.Argument(..., help="HealthBench or item JSONL: the prompts.",
                                 show_default=False),
    judge: str = typer.Option(..., "--judge", "-j", help="The model writing the rubrics (the "
                              "paper: GPT-4.1)."),
    out: Path = typer.Option(..., "--out", "-o", help="Items JSONL, each with its generated "
                             "rubric (for assay eval / assay grade)."),
    store: Path | None = typer.Option(None, "--store", help="Call store (resume, and reuse by "
                                      "assay serve --bank llm-generated --store; default "
                                      "OUT.calls.sqlite)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Health-SCORE's LLM-Generated baseline: a model writes a rubric for every prompt."""
    from assay.cli.output import fail

    try:
        _llm_rubrics(items, judge, out, store, quiet)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


def _llm_rubrics(items_path, judge_spec, out, store_path, quiet):
    from pydantic import ValidationError

    from assay.bank.llm_rubric import LlmRubricWriter, generated_rubric
    from assay.io import load_items
    from assay.io.items import write_items
    from assay.jobs import CallStore, StageCaller, run_batch
    from assay.judges import make_judge
    from assay.judges.sync import run_sync

    items = load_items(items_path)
    store = CallStore.open(store_path or out.with_name(out.name + ".calls.sqlite"))

    async def go():
        judge = make_judge(judge_spec)
        writer = LlmRubricWriter(StageCaller(judge, store))
        settings = writer.settings_key

        async def worker(item):
            messages = [m.model_dump() for m in item.messages]
            selection = await writer.select(messages, key=item.id)
            try:
                rubric = generated_rubric(item.id, selection, judge.model)
            except ValidationError as exc:  # e.g. only undesirable criteria: nothing to pass
                raise AssayError(f"item {item.id}: the generated rubric is not usable: "
                                 f"{exc.errors()[0]['msg']}") from None
            return rubric.model_dump(mode="json")

        try:
            return settings, await run_batch(items, worker, store=store,
                                             item_id=lambda i: f"{settings}/{i.id}",
                                             label="writing rubrics", quiet=quiet)
        finally:
            await judge.aclose()

    from assay.rubric import Rubric

    settings, result = run_sync(go())
    written = [item.model_copy(update={"rubric": Rubric.model_validate(row)})
               for item in items if (row := result.results.get(f"{settings}/{item.id}"))]
    write_items(written, out)
    if written:
        mean = sum(len(i.rubric.criteria) for i in written if i.rubric) / len(written)
        typer.echo(f"{len(written)} prompts: {mean:.1f} generated criteria on average (the "
                   f"paper: 7.8) -> {out}")
    for key, error in result.failed.items():
        typer.echo(f"failed {key.removeprefix(settings + '/')}: {error}", err=True)
    store.close()
    if result.failed:
        raise typer.Exit(1)
