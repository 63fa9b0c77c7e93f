"""The work behind ``assay stress`` (imported only when a command runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cli.output import exit_for_status, fail, print_issues, stdout
from assay.errors import AssayError, InputError, Issue


def run_make(**args: Any) -> None:
    try:
        _make(args)
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)


def _make(args: dict[str, Any]) -> None:
    from assay.io import load_items, write_items
    from assay.io.jsonl import write_jsonl
    from assay.routing.stress import PERTURBATIONS, perturbation
    from assay.routing.unsafe_instructions import DEFAULT_LIBRARY, load_library

    library = load_library(args["instructions"]) if args["instructions"] else DEFAULT_LIBRARY
    items = load_items(args["items"])
    requirements = _routed_requirements(args, items)
    out = Path(args["out"])
    out.mkdir(parents=True, exist_ok=True)
    write_items([i.model_copy(update={"response": None}) for i in items], out / "clean.jsonl")
    counts, records, untouched = {}, [], {}
    for kind in PERTURBATIONS:
        made = [p for i in items
                if (p := perturbation(i, kind, seed=args["seed"], shift=args["shift"],
                                      instructions=library,
                                      requirements=requirements.get(i.id))) is not None]
        write_items([p.item for p in made], out / f"{kind}.jsonl")
        records += [p.record() for p in made]
        counts[kind] = len(made)
        untouched[kind] = [p.item.id for p in made if not p.touches_needed]
    write_jsonl(records, out / "changes.jsonl")
    lines = ", ".join(f"{k} {v}" for k, v in counts.items())
    console = stdout()
    console.print(f"{len(items)} clean items -> {out}: {lines} (an item a perturbation cannot "
                  "act on is left out of it); what changed: changes.jsonl", highlight=False)
    basis = "routed leaves" if args["routing"] else "query (no --routing)"
    for kind, ids in untouched.items():
        if ids:
            console.print(f"{kind}: {len(ids)} item(s) touch nothing the {basis} need: "
                          + ", ".join(ids), highlight=False, soft_wrap=True)


def _routed_requirements(args: dict[str, Any], items) -> dict[str, list[str] | None]:
    """Each item's routed leaves' requirements (empty without --routing)."""
    if args["routing"] is None:
        if args["taxonomy"] is not None:
            raise InputError(Issue(None, None, "--taxonomy", "give --routing too: the "
                                   "taxonomy says what the routed leaves require"))
        return {}
    if args["taxonomy"] is None:
        raise InputError(Issue(None, None, "--routing", "give --taxonomy too (the taxonomy "
                               "routed over): its leaves say what they require"))
    from assay.cli.route_command import read_routings
    from assay.io import read_taxonomy
    from assay.routing import Catalogue
    from assay.routing.data import resolve_taxonomy
    from assay.routing.needs import requirements_of

    catalogue = Catalogue.from_taxonomy(read_taxonomy(resolve_taxonomy(args["taxonomy"])))
    routed = read_routings(Path(args["routing"]))
    missing = [i.id for i in items if i.id not in routed]
    if missing:
        raise InputError(Issue(str(args["routing"]), None, None, f"no routing for item(s) "
                               f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}: "
                               "route them first (assay route run)"))
    unknown = sorted({leaf for ids in routed.values() for leaf in ids} - set(catalogue.ids))
    if unknown:
        raise InputError(Issue(str(args["routing"]), None, None, f"leaves not in the taxonomy: "
                               f"{', '.join(unknown[:5])}: was it routed over another one?"))
    return {i.id: requirements_of(sorted(routed[i.id], key=catalogue.ids.index), catalogue)
            for i in items}


def run_stress(**args: Any) -> None:
    from assay.cli.command import Note, dump_json, report

    def show(result):
        from assay.cli.tables.routing import stress_table

        # One run has no standard error: the columns would only say n/a.
        yield stress_table(result.figures, errors=result.errors if args["runs"] > 1 else None,
                           scores=result.scores, runs=args["runs"])
        if result.status != "complete":
            yield Note(f"status: {result.status} ({_status_why(result)})")

    def dump(result):
        return dump_json({"status": result.status, "statuses": result.statuses,
                          "conditions": {k: r.model_dump(mode="json")
                                         for k, r in result.figures.items()},
                          "runs": args["runs"], "scores": result.scores,
                          "standard_errors": result.errors, "routing": result.calls},
                         newline=True)

    json_out = None if args["json_out"] is None else Path(args["json_out"])
    result = report(lambda: _stress(args), show, json_out=json_out, dump=dump)
    if result.issues:
        print_issues(result.issues)
    exit_for_status(result.status)


def _status_why(result) -> str:
    parts = [f"{name} run {n}: {status}" for name, runs in result.statuses.items()
             for n, status in enumerate(runs, start=1) if status != "complete"]
    shown = ", ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")
    return f"{shown}; the same command again resumes those runs"


def _conditions(values: list[str]) -> dict[str, Path]:
    from assay.routing.stress import PERTURBATIONS

    out: dict[str, Path] = {}
    for value in values:
        name, sep, file = value.partition("=")
        if not sep or name not in ("clean", *PERTURBATIONS):
            raise InputError(Issue(None, None, "--responses", f"expected CONDITION=FILE with "
                                   f"CONDITION clean or one of {', '.join(PERTURBATIONS)}, got "
                                   f"{value!r}"))
        out[name] = Path(file)
    if "clean" not in out or len(out) < 2:
        raise InputError(Issue(None, None, "--responses", "give clean=FILE and at least one "
                               "perturbation's responses"))
    return out


@dataclass
class StressResult:
    """What ``assay stress run`` reports: the figures per perturbation, each condition's item
    scores (mean over the runs) and their standard errors, its calls summed over its runs, the
    issues met, and the status: ``complete`` only when every run of every condition is."""

    figures: dict[str, Any]
    scores: dict[str, dict[str, float | None]]
    calls: dict[str, Any]
    issues: list[Issue]
    errors: dict[str, dict[str, float | None]]
    statuses: dict[str, list[str]]  # condition -> each run's status

    @property
    def status(self) -> str:
        return overall_status([s for runs in self.statuses.values() for s in runs])


def overall_status(statuses: list[str]) -> str:
    """The status of several runs: ``complete`` when every one is, else the first that ended
    by itself (``budget``, ``interrupted``, ``error``), else ``incomplete``.

    >>> overall_status(["complete", "incomplete", "complete"])
    'incomplete'
    >>> overall_status(["incomplete", "budget"]), overall_status(["complete"] * 3)
    ('budget', 'complete')
    """
    from assay.runs.status import ENDED_BY_ITSELF

    if all(s == "complete" for s in statuses):
        return "complete"
    return next((s for s in statuses if s in ENDED_BY_ITSELF), "incomplete")


def summed_calls(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """One condition's calls over all its runs, from each run's summary as
    :func:`assay.routing.run.aroute_and_grade` gives it: the routing once (it is shared by the
    runs: the first run routes, the others read its routings back) and the grading calls and
    their totals summed over the runs; the per-item figure is that of the sums. Each run's own
    summary is kept under ``runs``.

    >>> one = {"items": 2, "routing_calls": 1, "grading_calls_made": 8,
    ...        "grading_totals": {"calls": 8, "cost_usd": 0.5}}
    >>> total = summed_calls([one, one, one])
    >>> total["grading_calls_made"], total["grading_totals"], total["measured_calls_per_item"]
    (24, {'calls': 24, 'cost_usd': 1.5}, 12.5)
    """
    total = {k: v for k, v in summaries[0].items() if k not in ("grading_totals", "runs")}
    total["grading_calls_made"] = sum(s.get("grading_calls_made", 0) for s in summaries)
    grading: dict[str, Any] = {}
    for summary in summaries:
        for key, value in (summary.get("grading_totals") or {}).items():
            grading[key] = grading.get(key, 0) + value
    total["grading_totals"] = grading
    items = total.get("items") or 1
    total["measured_calls_per_item"] = (total.get("routing_calls", 0)
                                        + total["grading_calls_made"]) / items
    total["runs"] = summaries
    return total


def _stress(args: dict[str, Any]) -> StressResult:
    """The stress figures of ``assay stress run`` (see :class:`StressResult`)."""
    from assay.io import load_items, read_taxonomy
    from assay.metrics import stress_test
    from assay.metrics.repeated import mean_over_runs
    from assay.routing.data import resolve_taxonomy
    from assay.routing.run import route_and_grade
    from assay.runs.options import RunOptions
    from assay.runs.sources import read_responses

    conditions = _conditions(args["responses"])
    taxonomy = read_taxonomy(resolve_taxonomy(args["taxonomy"]))
    clean_items = load_items(args["items"])
    root = Path(args["run_dir"])
    scores: dict[str, dict[str, float | None]] = {}
    issues: list[Issue] = []
    calls: dict[str, Any] = {}
    errors: dict[str, dict[str, float | None]] = {}
    statuses: dict[str, list[str]] = {}
    runs = args["runs"]
    if runs < 1:
        raise InputError(Issue(None, None, "--runs", f"expected at least 1, got {runs}"))
    for name, file in conditions.items():
        responses = read_responses(file)
        items = [i.model_copy(update={"response": responses[i.id]})
                 for i in clean_items if i.id in responses]
        per_run, summaries = [], []
        statuses[name] = []
        # Each run its own seed and directory; the routing is shared (it does not depend on
        # the response), so only the judge's verdicts vary between runs.
        for r in range(runs):
            options = RunOptions.build(judges=list(args["judge"]), template=args["template"],
                                       seed=args["seed"] + r, formula="pass-rate",
                                       quiet=args["quiet"], judge_config_file=args["config"])
            run_dir = root / name if runs == 1 else root / name / f"run-{r + 1}"
            resume = run_dir if (run_dir / "run.sqlite").exists() else None
            result = route_and_grade(
                items, taxonomy, options, run_dir, router=args["router"],
                router_judge=args["router_judge"], resume=resume, quiet=args["quiet"],
                routing_dir=root / "routing")
            issues += [*result.issues, *result.routing_issues, *result.report.issues]
            per_run.append({row["item_id"]: row["score"]
                            for row in result.report.scores.table.to_dict()["items"]})
            summaries.append(result.summary)
            statuses[name].append(result.report.status)
        calls[name] = summed_calls(summaries)
        scores[name], errors[name] = mean_over_runs(per_run)
    figures = {kind: stress_test(scores["clean"], scores[kind]) for kind in scores
               if kind != "clean"}
    return StressResult(figures, scores, calls, issues, errors, statuses)
