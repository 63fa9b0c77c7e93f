"""``assay grade --repeats R``: R runs of the same items, then each judge's consistency with
itself, flagged when low (imported only when the command runs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer

from assay.cli.consistency import EXIT_LOW_SELF_AGREEMENT, low_agreement_notes
from assay.cli.output import fail, stderr, stdout
from assay.errors import AssayError, InputError, Issue

EXIT_INCOMPLETE = 4


def run_repeats(args: dict[str, Any], options_of, source_of, check_outputs, fields_of) -> None:
    """Grade (or resume) a repeats study, print one line per repeat and the consistency
    table, write ``--json``; exit 4 when a repeat is not complete (consistency is then not
    computed: a missing verdict is not a disagreement), 6 when a judge's self-agreement is
    low. ``options_of``, ``source_of``, ``check_outputs`` and ``fields_of`` are ``assay
    grade``'s (this module is imported by it, never the other way)."""
    from assay.runs.repeats import arun_repeats

    args = {**args, "executor": args.get("executor") or "local"}
    try:
        if args["export"] or args["dry_run"] or args.get("taxonomy") is not None:
            raise InputError(Issue(None, None, "--repeats", "not with --export, --dry-run or "
                                   "--taxonomy: grade, then export each repeat's run"))
        check_outputs(args)
        if args["items"] is None:
            if args["resume"] is None:
                raise InputError(Issue(None, None, "ITEMS", "give the items to grade (or "
                                       "--resume STUDY)"))
            from assay.runs.options import RunOptions

            names = set(RunOptions.operational_fields()) - {"run_dir"}
            operational = RunOptions(**fields_of(args, names))
            reports = asyncio.run(arun_repeats(None, operational, args["repeats"],
                                               resume=args["resume"]))
        else:
            if args["resume"] is not None:
                raise InputError(Issue(None, None, "--resume", "resume a study with --resume "
                                       "STUDY alone (its items and settings are stored)"))
            reports = asyncio.run(arun_repeats(source_of(args), options_of(args), args["repeats"]))
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
    _finish(reports, args)


def _finish(reports: list[Any], args: dict[str, Any]) -> None:
    from assay.cli.tables.consistency import consistency_table
    from assay.metrics.consistency import runs_consistency

    study = Path(reports[0].run_dir).parent
    console = stdout()
    for r in reports:
        overall = "—" if r.scores.overall is None else f"{r.scores.overall:.4f}"
        console.print(f"{r.run_dir.name}: {r.status}, overall {overall} (seed "
                      f"{r.manifest.get('master_seed')})", highlight=False)
    incomplete = [r for r in reports if r.status != "complete"]
    report = None
    if not incomplete:
        try:
            report = runs_consistency([r.run_dir for r in reports],
                                      min_alpha=args["min_self_agreement"], seed=args["seed"])
        except (AssayError, OSError, ValueError) as exc:
            fail(exc)
    if args["json_out"] is not None:
        payload = {"study": str(study), "runs": [
            {"run_dir": str(r.run_dir), "status": r.status, "overall": r.scores.overall,
             "seed": r.manifest.get("master_seed")} for r in reports],
            "consistency": None if report is None else report.model_dump(mode="json")}
        Path(args["json_out"]).write_text(json.dumps(payload, indent=2), encoding="utf-8")
    if report is not None:
        console.print(consistency_table(report))
    console.print(f"study stored in {study}  (report: assay consistency {study}; resume: "
                  f"assay grade --resume {study})", highlight=False)
    if incomplete:
        stderr().print(f"incomplete: {len(incomplete)} of {len(reports)} repeats are not "
                       "complete; consistency is computed once every repeat is: "
                       f"assay grade --resume {study}", highlight=False)
        raise typer.Exit(EXIT_INCOMPLETE)
    notes = low_agreement_notes(report, {})
    for line in notes:
        stderr().print(line, highlight=False, soft_wrap=True)
    if notes:
        raise typer.Exit(EXIT_LOW_SELF_AGREEMENT)
