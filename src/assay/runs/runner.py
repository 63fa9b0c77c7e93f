"""One grading run from start to finish: config, store, judges, engine, manifest, scores.

A run ends with one status: ``complete`` (every item of the input has all its verdicts),
``incomplete`` (some calls failed, also after the final passes of :mod:`assay.runs.engine`, or
some items were skipped: resume to retry the calls),
``budget`` (stopped at ``--budget``), ``error`` (the store could not be written, e.g. the disk
is full: every call saved before is kept and the run resumes) or ``interrupted``.

:func:`arun` is what ``assay grade`` and :func:`assay.grade` call. A new run gets a directory
(``run.sqlite`` + ``manifest.json``); ``resume=RUN`` reopens one, rebuilds everything from its
stored config (or checks that the config given now is the same, refusing with the list of
changed settings), and grades only what is not finished yet.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError, ConfigError, InputError, Issue
from assay.grading.fewshot import Example
from assay.grading.grader import Grader, GradingConfig
from assay.judges.budget import sum_preflight
from assay.progress import RunProgress, run_progress
from assay.runs.engine import (
    STORE_WRITE_ERRORS,
    Engine,
    EngineOutcome,
    JudgeSlot,
    served_from_cache,
)
from assay.runs.labels import store_labels
from assay.runs.lock import RunLock
from assay.runs.manifest import config_changes, write_manifest
from assay.runs.options import RunOptions
from assay.runs.plan import plan_run, sources_of, with_later_defaults
from assay.runs.results import RunScores, Scoring
from assay.runs.session_scores import SessionScores
from assay.runs.sources import ItemSource
from assay.runs.status import coverage, settle, skipped_records
from assay.runs.store import RunStore, Totals
from assay.runs.store_errors import unwritable

if TYPE_CHECKING:
    from assay.judges.budget import Budget

SKIPPED_SHOWN = 20  # skipped input records named in a session's record (manifest.json)


@dataclass
class RunReport:
    run_dir: Path
    status: str
    scores: RunScores
    totals: Totals
    manifest: dict[str, Any]
    outcome: EngineOutcome
    issues: list = field(default_factory=list)
    skipped_without_response: int = 0
    items_in_input: int | None = None  # the input's items (the store holds the ones reached)
    # (items lacking verdicts, failed calls, the commonest error): see assay.runs.status
    missing: tuple[int, int, str | None] = (0, 0, None)
    extra_json: dict[str, Any] = field(default_factory=dict)  # more for --json (e.g. routing)
    resume_command: str | None = None  # how to resume it, when not `assay grade --resume RUN`


def restore(run: str | Path, operational: RunOptions | None = None) -> tuple[ItemSource, RunOptions]:
    """The item source and options of a stored run (for ``--resume RUN`` alone), with the
    operational settings of ``operational`` (budget, cache, executor ...) for this session."""
    from assay.runs.sources import read_responses

    store = RunStore.open(run)
    try:
        sources = json.loads(store.meta("sources") or "null")
        routed = store.meta("routing_totals") is not None
    finally:
        store.close()
    if routed and not (sources or {}).get("items"):
        raise ConfigError(f"{run}: a taxonomy run (its items were routed): resume it with the "
                          "command that made it (the items, --taxonomy, --router and the judges) "
                          f"and --resume {run}")
    if not sources or not sources.get("items"):
        raise ConfigError(f"{run}: this run was graded from Python objects; resume it with the "
                          "same items through the Python API (assay.grade(..., resume=RUN))")
    responses = read_responses(sources["responses_path"]) if sources.get("responses_path") else None
    source = ItemSource(path=Path(sources["items"]), responses=responses, ideal=sources["ideal"],
                        responses_path=sources.get("responses_path"))
    now = (operational or RunOptions()).operational()
    stored = {name: sources[name] for name in RunOptions.config_fields()
              if sources.get(name) is not None}
    stored["judges"] = [_restored_judge(settings, now["judge_config_file"], run)
                        for settings in sources["judges"]]
    return source, RunOptions(**stored, **now)


def _restored_judge(settings: dict[str, Any], config_file: str | None, run: str | Path) -> Any:
    """A stored judge's config. Secrets are not stored: a judge that had one (a key in its
    headers, a password in its URL) is read again from its [judges.NAME] table."""
    from assay.judges.config import JudgeConfig
    from assay.judges.specs import config_from

    if "[REDACTED]" not in json.dumps(settings):
        return JudgeConfig(**settings)
    name = settings.get("id") or ""
    try:
        config = config_from(name, config_file)
    except AssayError:
        config = None
    endpoint = ("spec", "model", "base_url", "wire", "headers", "auth")
    if config is None or any(config.public_settings().get(k) != settings.get(k) for k in endpoint):
        raise ConfigError(
            f"{run}: judge {name!r} had secrets (a key in its headers or a password in its URL) "
            "that are never stored with a run; resume with the original command and --resume "
            f"{run}, or from an assay.toml whose [judges.{name}] table has the same settings")
    return config


def refuse_changed_config(run: str | Path, stored: dict[str, Any], config: dict[str, Any]) -> None:
    """A :class:`ConfigError` listing the settings of ``config`` that differ from those the
    run ``run`` was made with (``stored``): a run is resumed with its own config only. A
    setting added since the run was made counts at its default."""
    changes = config_changes(with_later_defaults(stored), config)
    if changes:
        raise ConfigError(
            f"{run}: refusing to resume with a different config; changed:\n  "
            + "\n  ".join(changes)
            + "\n(resume with the original settings, or start a new run; to rescore stored "
              "votes differently use `assay score RUN --aggregate ... --abstain ...`)")


def new_run_dir(options: RunOptions) -> Path:
    """The run directory a new run of ``options`` uses (``runs/STAMP-ID`` by default)."""
    if options.run_dir:
        return Path(options.run_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{stamp}-{uuid.uuid4().hex[:6]}"


async def arun(source: ItemSource, options: RunOptions, *, resume: str | Path | None = None,
               progress: RunProgress | None = None, budget: Budget | None = None) -> RunReport:
    """Grade ``source`` with ``options`` (or continue the run ``resume``); see the module doc.

    ``progress`` watches the run; by default the display installed in :mod:`assay.progress`
    (silent with ``options.quiet`` or none installed).

    Everything that can be checked is checked before the run directory is made: settings,
    output paths, rubrics, the judges' endpoints (one real request each). Then the run
    directory is locked (one writer per run) for as long as the run goes on. ``budget``: an
    :class:`~assay.judges.Budget` shared with work done before (e.g. routing), instead of a
    new one of ``options.budget_usd``.
    """
    from assay.judges import check_judges, make_judge
    from assay.judges.budget import Budget
    from assay.runs.checks import check_options, check_rubrics

    check_options(options)  # fail before any work on a bad setting
    plan = plan_run(source, options)
    judge_configs, grading, pools, config = plan.judge_configs, plan.grading, plan.pools, plan.config
    seen_latencies: dict[str, list[float]] = {}  # a resumed run's, by judge
    if resume is not None:  # a store that cannot be written is refused here, before any call
        store = RunStore.open(resume, write=True)
        stored = store.config()
        seen_latencies = {c.judge_id: store.reply_latencies(c.judge_id) for c in judge_configs}
        store.close()
        refuse_changed_config(resume, stored, config)
    else:
        check_rubrics(source, options.rubric)
    if budget is None and options.budget_usd is not None:
        budget = Budget(options.budget_usd)
    cache = None
    if options.cache_path:
        from assay.judges.cache import ResponseCache

        cache = ResponseCache(options.cache_path)
    weights = plan.weights
    judges = [make_judge(c, cache=cache, budget=budget) for c in judge_configs]
    for judge in judges:  # resumed: the attempt timeouts start fitted, not at the 60 s ceiling
        judge.timeouts.seed(seen_latencies.get(judge.id, ()))
    if options.concurrency:  # requests in flight to each judge (operational: not in the config)
        for judge in judges:
            judge.limiter.set_max_in_flight(options.concurrency)
    lock = pool = None
    items = iter(source)
    try:  # an unreachable endpoint, a wrong path or a refused key fails here, before any work
        first = next(items, None)
        if first is None and not source.may_be_empty:  # an error, never an empty "complete" run
            raise no_items(source)
        items = itertools.chain([first] if first is not None else [], items)
        slots = [JudgeSlot(c.judge_id, j) for c, j in zip(judge_configs, judges)]
        if first is None or options.executor != "ray" and served_from_cache(
                first, options.rubric, Grader(grading, example_pools=pools), slots, cache):
            for judge in judges:  # nothing to grade yet, or a warm cache: check before the first request
                judge.defer_check()
        elif options.protocol != "simple-evals":  # simple-evals sends its grader requests only
            await check_judges(judges)
        if options.executor == "ray":  # Ray workers that cannot start fail here too
            from assay.distributed import start_pool

            pool = start_pool(judge_configs, options)
        run_dir = Path(resume).parent if resume is not None and Path(resume).is_file() else (
            Path(resume) if resume is not None else new_run_dir(options))
        lock = RunLock(run_dir).acquire()
        if resume is not None:
            store = RunStore.open(run_dir, write=True)
        else:
            store = RunStore.create(run_dir / "run.sqlite", config,
                                    {"sources": sources_of(source, options, judge_configs)})
    except BaseException:
        if pool is not None:
            await pool.aclose()
        for judge in judges:
            await judge.aclose()
        if cache is not None:
            cache.close()
        if lock is not None:
            lock.release()
        raise
    try:
        return await _grade(store, source, items, options, config, judge_configs, judges,
                            weights, pools, grading, progress, cache, pool)
    finally:
        if cache is not None:  # written out when the calls ended; closed after the summary
            cache.close()
        lock.release()


async def _grade(store: RunStore, source: ItemSource, items: Iterator[Any], options: RunOptions,
                 config: dict[str, Any],
                 judge_configs: list[Any], judges: list[Any], weights: list[float],
                 pools: dict[str, list[Example]], grading: GradingConfig,
                 progress: RunProgress | None, cache: Any, pool: Any = None) -> RunReport:
    run_dir = Path(store.path).parent
    store_labels(run_dir, source.human_labels())
    sessions = _sessions(store)
    slots = [JudgeSlot(c.judge_id, j, w) for c, j, w in zip(judge_configs, judges, weights)]
    if pool is not None:  # the calls go to Ray workers; the store stays here
        from assay.distributed import remote_slots

        slots = remote_slots(slots, judge_configs, pool)
    window = options.concurrency if pool is not None else None
    if options.executor == "batch":  # the calls go out as batches, recorded in the store
        slots = _batch_slots(slots, store, options)
        window = options.concurrency or _batch_window()
    grader = Grader(grading, example_pools=pools)
    items_in_input = source.total()  # counted once (a file is read through to count its lines)
    if progress is None:  # a caller (e.g. a benchmark) may watch the run with its own
        progress = run_progress(items_in_input, quiet=options.quiet)
    # Locally --concurrency sets each judge's requests in flight (see arun); on Ray the workers
    # keep their own limits and it bounds the calls the engine keeps outstanding, as before.
    # The summary is scored from the items as they finish; earlier sessions' come from the store.
    session_scores = SessionScores(Scoring.from_config(config), after=store.last_position())
    # A batch judge asks its failed requests again itself (new batches, or live: --batch-retry)
    final_passes = 0 if options.executor == "batch" else options.final_passes
    engine = Engine(store, grader, slots, rubric=options.rubric,
                    concurrency=window, final_passes=final_passes,
                    progress=progress, on_item_done=session_scores.add)
    started = time.perf_counter()
    status = "interrupted"
    outcome = EngineOutcome()
    missing: tuple[int, int, str | None] = (0, 0, None)
    manifest: dict[str, Any] = {}
    skipped: list[Issue] = []
    try:
        with progress:
            outcome = await engine.run(items)
        status = outcome.status
        skipped = [*source.issues, *outcome.issues]  # input records not graded
        if status != "error":  # complete only if the store holds every verdict of the input
            cover = coverage(store)
            missing = (cover.items_lacking, cover.failed_calls, cover.commonest_error)
            status, _ = settle(status, cover, skipped=skipped_records(skipped),
                               items_in_input=items_in_input)
    finally:
        if pool is not None:
            await pool.aclose()
        if options.executor == "batch":  # stop polling (the batches stay in the store)
            for slot in slots:
                await slot.judge.aclose()
        for judge in judges:
            await judge.aclose()
        if cache is not None:  # its WAL is copied and emptied while the summary is scored
            cache.checkpoint_soon()
        sessions.append({"started_at": time.time() - (time.perf_counter() - started),
                         "wall_s": time.perf_counter() - started, "ended_at": time.time(),
                         "calls_made": outcome.calls_made, "status": status,
                         "final_pass": {"asked_again": outcome.asked_again,
                                        "recovered": outcome.recovered},
                         "in_flight": {judge.id: judge.in_flight for judge in judges},
                         "preflight": sum_preflight([j.take_preflight().as_dict()
                                                     for j in judges]),
                         "items_in_input": items_in_input,
                         "skipped_input": skipped_records(skipped),
                         "skipped_examples": [str(i) for i in skipped[:SKIPPED_SHOWN]]})
        try:
            store.set_meta("sessions", sessions)
            manifest = write_manifest(store, status=status, sessions=sessions)
        except STORE_WRITE_ERRORS as exc:  # the disk is still full: the store error says it
            if outcome.store_error is None:
                outcome.store_error = exc
    if outcome.store_error is not None:
        store.close()
        raise unwritable(store.path, outcome.store_error, outcome.unsaved_calls)
    try:
        store.checkpoint_soon()  # while the summary is scored
        scores = session_scores.scores(store)
        totals = Totals(**manifest["totals"]) if manifest else store.totals()  # nothing since
    finally:
        store.close()
    where = str(source.path) if source.path is not None else None
    item_issues = [replace(i, source=i.source or where) for i in outcome.issues]
    return RunReport(run_dir, status, scores, totals, manifest, outcome,
                     [*source.issues, *item_issues], source.skipped_without_response,
                     items_in_input, missing)


def record_skipped_input(report: RunReport, skipped: list[Issue]) -> RunReport:
    """Add input records skipped before the grading run (e.g. items a taxonomy run could not
    route) to its last session: the run is then incomplete, in its store, ``manifest.json``
    and the returned report alike."""
    if not skipped:
        return report
    store = RunStore.open(report.run_dir)
    try:
        sessions = _sessions(store)
        last = sessions[-1]
        last["skipped_input"] = last.get("skipped_input", 0) + skipped_records(skipped)
        last["skipped_examples"] = [*last.get("skipped_examples", []),
                                    *map(str, skipped)][:SKIPPED_SHOWN]
        status, _ = settle(last["status"], coverage(store), skipped=last["skipped_input"],
                           items_in_input=last.get("items_in_input"))
        last["status"] = status
        store.set_meta("sessions", sessions)
        manifest = write_manifest(store, status=status, sessions=sessions)
    finally:
        store.close()
    return replace(report, status=status, manifest=manifest)


def no_items(source: ItemSource) -> InputError:
    """The error of an input with no item to grade: empty, or every record skipped (each is
    named)."""
    where = str(source.path) if source.path is not None else "items"
    what = ("no item to grade: every record was skipped" if source.issues
            else "no item to grade: the input is empty")
    return InputError([*source.issues, Issue(where, None, None, what)])


def _batch_slots(slots: list[JudgeSlot], store: RunStore, options: RunOptions) -> list[JudgeSlot]:
    """Each judge asking through its provider's batch API, its batches kept in ``store``."""
    from assay.judges.batch_judge import BatchJudge
    from assay.runs.batch_ledger import RunBatchLedger

    ledger = RunBatchLedger(store)
    return [replace(slot, judge=BatchJudge(slot.judge, ledger, retry=options.batch_retry,
                                           poll_s=options.batch_poll_s)) for slot in slots]


def _batch_window() -> int:
    """Calls the engine keeps outstanding with --executor batch: a whole batch's worth."""
    from assay.judges.batch_judge import MAX_REQUESTS

    return MAX_REQUESTS


def _sessions(store: RunStore) -> list[dict[str, Any]]:

    return json.loads(store.meta("sessions") or "[]")
