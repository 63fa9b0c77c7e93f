"""The work behind ``assay grade`` (imported only when the command runs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer

from assay.cli.output import exit_for_status, fail, print_issues, stderr, stdout
from assay.cli.prewarm import GRADE_FINISH, Prewarm
from assay.cli.process import freeze_startup
from assay.errors import AssayError, InputError, Issue


def run_grade(**args: Any) -> None:
    if args.get("executor") == "ray":  # Ray's set-up at once, before anything is read or asked
        from assay.distributed.ray_auth import check_ray_setup

        try:
            check_ray_setup(args.get("ray_address"))
        except AssayError as exc:
            fail(exc)
    from assay.runs.repeats import is_study

    if args.get("inspect_log") is not None:  # the items are the log's samples
        from assay.cli.grade_inspect import with_inspect_log

        try:
            args = with_inspect_log(args)
        except (AssayError, OSError) as exc:
            fail(exc)
    if args["repeats"] > 1 or (args["resume"] is not None and is_study(args["resume"])):
        from assay.cli.grade_repeats import run_repeats

        run_repeats(args, _options, _source, _check_outputs, _fields)
        return
    try:
        result = _grade(args)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    if result is None:  # dry run
        return
    _finish(result, args)


def _options(args: dict[str, Any]):
    """The run's options: every parameter of ``assay grade`` named as a RunOptions field goes
    in as itself; the template, HealthBench mode and the few-shot flags are read by
    :meth:`RunOptions.build`."""
    from assay.grading.fewshot import FewShot
    from assay.runs.options import RunOptions

    if not args["judges"]:
        raise InputError(Issue(None, None, "--judge", "give at least one judge spec"))
    few = FewShot(n=args["few_shot"], balance=not args["unbalanced"],
                  include_reason=args["few_shot_reasons"]) if args["few_shot"] else None
    args = {**args, "role": role_text(args.get("role")), "rubric": _run_wide_rubric(args["rubric"])}
    return RunOptions.build(template=args["template"], healthbench=args["healthbench"],
                            few_shot=few, **_fields(args, RunOptions.model_fields))


def role_text(role: str | None) -> str | None:
    """``--role``: one of RubricsTree's five role names (the paper's header, word for word), the
    header itself, or ``@FILE``'s text (an InputError names a missing or empty file).

    >>> role_text("medical-bioethicist").splitlines()[0]
    '### ROLE: MEDICAL BIOETHICIST & AI REVIEW BOARD MEMBER'
    """
    from assay.grading.auditor_roles import ROLES

    if role in ROLES:
        return ROLES[role]
    if role is None or not role.startswith("@"):
        return role
    path = Path(role[1:])
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InputError(Issue(str(path), None, "--role", f"cannot read: {exc.strerror or exc}"))
    if not text:
        raise InputError(Issue(str(path), None, "--role", "the role file is empty"))
    return text


def _run_wide_rubric(rubric: Path | None) -> Any:
    """``--rubric``: a file as given; a folder of reviewed rubrics (``RUN/reviewed-rubrics``)
    gives its rubric to items without their own when it holds one rubric (a run graded against
    one shared rubric), else none (items keep theirs, reviewed where a version was saved)."""
    if rubric is None or not Path(rubric).is_dir():
        return rubric
    from assay.review.rubrics import latest_reviewed

    reviewed = latest_reviewed(rubric)
    return next(iter(reviewed.values())) if len(reviewed) == 1 else None


def _fields(args: dict[str, Any], names: Any) -> dict[str, Any]:
    """The arguments named in ``names``; paths (but the rubric's, kept as given for its
    errors) made absolute, so that a resumed run finds them from anywhere."""
    return {name: str(Path(value).resolve()) if isinstance(value, Path) and name != "rubric"
            else value for name, value in args.items() if name in names and name != "few_shot"}


def _source(args: dict[str, Any]):
    from assay.runs.sources import ItemSource, read_responses

    if args.get("inspect_items") is not None:  # assay grade --inspect-log
        from assay.cli.grade_inspect import log_source

        return log_source(args)
    if not args["items"].exists():
        raise InputError(Issue(str(args["items"]), None, None, "no such file"))
    if args.get("conversations") is not None:  # seed 000's released rubric set + conversations
        from assay.rubric_eval.released import released_items

        notes: list[Issue] = []
        source = ItemSource(items=released_items(args["items"], args["conversations"], notes))
        for note in notes:  # a 0-point criterion, left out: a note, not a skipped record
            stderr().print(f"note: {note}", highlight=False, soft_wrap=True)
    else:
        source = ItemSource(path=Path(args["items"]).resolve())
    if args.get("rubric") is not None and Path(args["rubric"]).is_dir():
        from assay.review.rubrics import latest_reviewed

        source.reviewed = latest_reviewed(args["rubric"])  # curated versions of items' rubrics
    if args["responses"] is not None:
        source.responses = read_responses(args["responses"])
        source.responses_path = str(Path(args["responses"]).resolve())
    source.ideal = args["ideal"]
    if args["healthbench"] and source.responses is None and not source.ideal:
        raise InputError(Issue(None, None, "--responses",
                               "HealthBench mode needs the responses to grade: --responses FILE "
                               "or --ideal"))
    return source


def _grade(args: dict[str, Any]):
    from assay.runs.options import RunOptions
    from assay.runs.runner import arun, restore

    if args.get("executor") is None:  # a run that submitted batches goes on waiting for them
        from assay.runs.batch_ledger import executor_of

        args["executor"] = executor_of(args["resume"])
    if args.get("taxonomy") is not None:  # route first, then grade each item's active leaves
        from assay.cli.grade_taxonomy import grade_with_taxonomy

        return grade_with_taxonomy({**args, "router": args.get("router") or "tree",
                                    "dimension_level": args.get("dimension_level") or 1},
                                   _options, _source)
    given = [flag for flag, key in (("--router", "router"), ("--router-judge", "router_judge"),
                                    ("--router-threshold", "router_threshold"),
                                    ("--dimension-level", "dimension_level"))
             if args.get(key) is not None]
    if given:  # they would be ignored: a run must do what its command line says
        raise InputError([Issue(None, None, flag, "applies only with --taxonomy: give it or drop "
                                "this option") for flag in given])

    if args["items"] is None and args.get("inspect_items") is None:
        if args["resume"] is None:
            raise InputError(Issue(None, None, "ITEMS", "give the items to grade (or --resume RUN)"))
        operational = _fields(args, RunOptions.operational_fields())
        source, options = restore(args["resume"], RunOptions(**operational))
    else:
        source, options = _source(args), _options(args)
    _check_outputs(args)
    if args["dry_run"]:
        from assay.runs.checks import check_options

        check_options(options)
        _dry_run(source, options, args)
        return None
    freeze_startup()
    from assay.runs.manifest import package_versions

    prewarm = Prewarm(GRADE_FINISH, [package_versions]).start()
    try:
        return asyncio.run(arun(source, options, resume=args["resume"]))
    finally:
        prewarm.stop()


def _check_outputs(args: dict[str, Any]) -> None:
    """--export and --json are written after the last call: check them before the first."""
    from assay.runs.checks import output_path_issues
    from assay.runs.exports import FORMATS

    issues: list[Issue] = []
    for path in args["export"]:
        fmt = Path(path).suffix.lower().lstrip(".")
        if fmt not in FORMATS:
            issues.append(Issue(str(path), None, "--export",
                                f"cannot export to .{fmt}; use one of .{', .'.join(FORMATS)}"))
        else:
            issues.extend(output_path_issues(path, "--export"))
    if args["json_out"] is not None:
        issues.extend(output_path_issues(args["json_out"], "--json"))
    if issues:
        raise InputError(issues)


def _dry_run(source, options, args: dict[str, Any]) -> None:
    """The dry run's table (and ``--json``, written first); exit 1 if it lists an error."""
    from rich.table import Table

    from assay.runs.dryrun import dry_run

    plan = dry_run(source, options, resume=args["resume"])
    if args["json_out"] is not None:
        Path(args["json_out"]).write_text(json.dumps(plan.to_dict(), indent=2), encoding="utf-8")
    title = f"dry run: {plan.items} items (no call made)"
    if plan.resume is not None:
        title += f"; resuming {plan.resume}"
    table = Table(title=title)
    table.add_column("judge", overflow="fold")
    for col in ("calls", "cached", "done", "preflight", "prompt tokens", "completion (est.)",
                "USD live (est.)", "USD batch (est.)"):
        table.add_column(col, justify="right")
    for e in plan.judges:
        cost = e.cost
        usd = f"{e.usd:.4f}" if cost.priced else "unpriced"
        batch = f"{e.batch_usd:.4f}" if cost.priced else "unpriced"
        table.add_row(e.judge, f"{cost.n_calls:,}", f"{e.cached:,}", f"{e.finished:,}",
                      f"{e.preflight_requests:,}", f"{cost.prompt_tokens:,}",
                      f"{cost.completion_tokens:,}", usd, batch)
    table.caption = ("calls: to be sent (and paid); cached: answered by --cache; done: "
                     "finished in the resumed run; preflight: requests sent before the first "
                     "call (the completion check, paid, in the USD; a local server's /props "
                     "question, free); batch: with --executor batch (half price, results "
                     "within a day; the preflight live)")
    stdout().print(table)
    if args["json_out"] is not None:
        stdout().print(f"wrote {args['json_out']}", highlight=False)
    if plan.issues:
        print_issues(plan.issues)
        raise typer.Exit(1)


def _finish(report, args: dict[str, Any]) -> None:
    """Write --export and --json, then print the summary (a closed stdout, e.g. ``| head``,
    loses none of the files), then exit with the status's code."""
    from assay.cli.tables.run import summary_tables

    try:
        written = _write_outputs(report, args)
    except OSError as exc:  # checked before the run, but a disk may fill up meanwhile
        fail(InputError(Issue(exc.filename or None, None, None,
                              f"cannot write: {exc.strerror or exc}; the run itself is stored "
                              f"in {report.run_dir}")))
    console = stdout()
    for table in summary_tables(report.scores, report.totals, status=report.status,
                                run_dir=str(report.run_dir), items_in_input=report.items_in_input):
        console.print(table)
    if report.outcome.asked_again:
        stderr().print(final_pass_line(report.outcome), highlight=False)
    if report.skipped_without_response:
        stderr().print(f"{report.skipped_without_response} items had no response to grade and "
                       "were left out", highlight=False)
    for line in written:
        console.print(line, highlight=False)
    console.print(f"run stored in {report.run_dir}  (rescore: assay score {report.run_dir} "
                  "--aggregate ... --abstain ...)", highlight=False)
    if report.issues:
        print_issues(report.issues)
    resume = report.resume_command or f"assay grade --resume {report.run_dir}"
    if report.status == "budget":
        stderr().print(f"budget reached: resume with a larger --budget: {resume} --budget USD",
                       highlight=False)
    elif report.status == "incomplete":
        _explain_incomplete(report, resume)
    exit_for_status(report.status)


def final_pass_line(outcome) -> str:
    """What the final pass did (see :mod:`assay.runs.engine`).

    >>> from assay.runs.engine import EngineOutcome
    >>> final_pass_line(EngineOutcome(asked_again=3, recovered=2))
    'final pass: 3 failed calls asked again once every call had been sent; 2 recovered'
    """
    calls = "call" if outcome.asked_again == 1 else "calls"
    return (f"final pass: {outcome.asked_again} failed {calls} asked again once every call had "
            f"been sent; {outcome.recovered} recovered")


def _explain_incomplete(report, resume: str) -> None:
    """Why the run is incomplete, and what to do (a plain string: the console reads no markup
    and no escape from the quoted error)."""
    items, calls, commonest = report.missing
    if items:
        stderr().print(f"incomplete: {items} items lack verdicts ({calls} calls failed"
                       + (f"; most often {commonest}" if commonest else "") + "); retry them "
                       f"with: {resume}", highlight=False, soft_wrap=True)
    if report.issues:
        from assay.runs.status import skipped_records

        n = skipped_records(report.issues)
        stderr().print(f"incomplete: {n} input record{'s' if n != 1 else ''} skipped (named "
                       "above) and not graded; fix the input and grade it in a new run (a "
                       "changed input is a new run)", highlight=False, soft_wrap=True)


def _write_outputs(report, args: dict[str, Any]) -> list[str]:
    """Write the --export and --json files; return the lines that tell of them."""
    from assay.runs.exports import export

    written = []
    for path in args["export"]:
        n = export(report.run_dir, path, votes=args["votes"], scoring=report.scores.scoring)
        written.append(f"wrote {n} rows to {path}")
    if args["json_out"] is not None:
        payload = {"run_dir": str(report.run_dir), "status": report.status,
                   "overall": report.scores.overall, "ci": report.scores.ci,
                   "bootstrap_std": report.scores.bootstrap_std,
                   "by_axis": {k: vars(v) for k, v in report.scores.by_axis.items()},
                   "by_theme": {k: vars(v) for k, v in report.scores.by_theme.items()},
                   "totals": vars(report.totals),
                   "final_pass": {"asked_again": report.outcome.asked_again,
                                  "recovered": report.outcome.recovered},
                   **report.scores.table.to_dict(),
                   **getattr(report, "extra_json", {})}
        if report.scores.healthbench is not None:
            payload["healthbench_metrics"] = report.scores.healthbench.metrics
        Path(args["json_out"]).write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return written
