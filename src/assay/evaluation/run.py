"""One eval: sample the model under test, grade its answers, score and report, resumably.

An eval run is one directory (``--run-dir``)::

    RUN/eval.json            the eval's record: items, settings, executor, last status
    RUN/items.jsonl          the items evaluated (the input's lines, or the --examples subset)
    RUN/sample/              the sampling job (assay sample): every model call, resumable
    RUN/responses.jsonl      the model's answers (HealthBench {prompt_id, response} lines)
    RUN/sampled_items.jsonl  --protocol simple-evals: the items as the sampler sent them (its
                             system message first): what simple-evals' grader sees
    RUN/grade/               the grading run (assay grade): every judge call, resumable
    RUN/metrics.json         simple-evals' metrics, and the worst-at-k curve with n > 1
    RUN/report.html          the eval's report (assay.evaluation.report)

Every stage resumes where it stopped, even after ``kill -9``: the sampling job and the grading
run keep each finished call in their stores, and a stage already complete is read back, not
run again (no request at all: not even the endpoint check). ``assay eval --resume RUN`` and the
original command both continue. A stage that ends incomplete stops the eval there (fail closed:
no metrics over the answers that happened to arrive).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InputError, Issue
from assay.evaluation.options import EvalOptions
from assay.evaluation.rundir import read_record, start, write_record


@dataclass
class EvalResult:
    """An eval run's outcome: its status, the stage it reached, metrics and the curve."""

    run_dir: Path
    status: str  # complete | incomplete | budget | interrupted | error
    stage: str  # sample | grade | done
    metrics: dict[str, Any] = field(default_factory=dict)
    worst_at_k: dict[int, float] | None = None
    sampled: Any = None  # the SampleResult of this session's sampling
    graded: Any = None  # the GradeResult of this session's grading (None if read back)
    scores: Any = None  # the RunScores of the grading run
    report_path: Path | None = None
    wall_s: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)
    executor: str = "local"
    cost: dict[str, dict[str, Any]] = field(default_factory=dict)  # per stage: calls, USD
    conditions: dict[str, EvalResult] = field(default_factory=dict)
    comparison: Any = None  # a ScoreComparison of the two conditions (first minus second)

    @property
    def prompts(self) -> int:
        """Prompts evaluated (each sampled ``n`` times)."""
        if self.scores is not None:
            from assay.runs.sources import split_sample_id

            return len({split_sample_id(k)[0] for k in self.scores.scores})
        return len(self.sampled.samples) if self.sampled is not None else 0


async def aevaluate_one(items: str | Path | None, options: EvalOptions,
                        resume: str | Path | None = None) -> EvalResult:
    """One eval (see the module docstring); ``resume=RUN`` continues the one at ``RUN``."""
    started = time.perf_counter()
    if resume is not None:
        root = Path(resume)
        record = read_record(root)
        if options.executor is not None:  # this session's choice; else the one it began with
            record["executor"] = options.executor
    else:
        if items is None or options.model is None or not options.judges:
            raise ConfigError("give the items, --model (the model under test) and --judge")
        if options.run_dir is None:
            raise ConfigError("give --run-dir DIR (the eval's directory)")
        root = Path(options.run_dir)
        record = start(root, Path(items), options)
    current = options.replace(**record["settings"])
    result = EvalResult(root, "incomplete", "sample", settings=record["settings"],
                        executor=record.get("executor") or "local")
    try:
        sampled = await _sample(root, current, result.executor)
        result.sampled, result.status = sampled, sampled.status
        result.cost["sample"] = _cost(sampled.totals)
        if sampled.status != "complete":
            return result
        result.stage = "grade"
        await _grade(root, current, result)
        if result.status != "complete":
            return result
        _score(root, current, result)
        result.stage = "done"
        return result
    finally:
        result.wall_s = time.perf_counter() - started
        record["last"] = {"status": result.status, "stage": result.stage}
        write_record(root, record)


async def _sample(root: Path, options: EvalOptions, executor: str) -> Any:
    """The sampling stage (its job resumes by itself; a complete job makes no request)."""
    from assay.sampling import asample

    return await asample(
        root / "items.jsonl", model=options.model or "", out=root / "responses.jsonl",
        job_dir=root / "sample", n=options.n, temperature=options.temperature,
        max_tokens=options.max_tokens, seed=options.sampling_seed,
        reasoning_effort=options.reasoning_effort, system=options.system,
        condition=options.condition if isinstance(options.condition, str) else None,
        bank=options.bank, selection=options.selection, taxonomy=options.taxonomy,
        output_format="healthbench" if options.healthbench else "items",
        budget=options.budget, concurrency=options.concurrency, cache=options.cache,
        config_file=options.config_file, progress=options.progress, executor=executor,
        workers=options.workers, ray_address=options.ray_address,
        batch_retry=options.batch_retry, batch_poll_s=options.batch_poll_s,
        protocol=options.protocol, sampled_items=root / "sampled_items.jsonl")


async def _grade(root: Path, options: EvalOptions, result: EvalResult) -> None:
    """The grading stage: a new run, the stored run resumed, or a complete one read back."""
    from assay.api import agrade
    from assay.runs.results import rescore_run
    from assay.runs.status import run_status

    grade_dir = root / "grade"
    operational: dict[str, Any] = {
        "budget_usd": options.budget, "concurrency": options.concurrency,
        "cache_path": options.cache, "progress": options.progress,
        "executor": result.executor, "workers": options.workers,
        "ray_address": options.ray_address, "batch_retry": options.batch_retry,
        "batch_poll_s": options.batch_poll_s, "judge_config_file": options.config_file}
    if (grade_dir / "run.sqlite").exists():  # made whole or not at all: this run resumes
        if run_status(grade_dir).complete:
            result.scores, result.status = rescore_run(grade_dir), "complete"
            result.cost["grade"] = _run_cost(grade_dir)
            return
        graded = await agrade(resume=grade_dir, **operational)
    elif options.healthbench:
        sampled_items = root / "sampled_items.jsonl"
        graded = await agrade(sampled_items if sampled_items.is_file() else root / "items.jsonl",
                              judges=options.judges, healthbench=True,
                              responses=root / "responses.jsonl", run_dir=grade_dir,
                              protocol=options.protocol, **operational)
    else:
        graded = await agrade(root / "responses.jsonl", judges=options.judges,
                              rubric=options.rubric, run_dir=grade_dir, **operational)
    result.graded, result.scores, result.status = graded, graded.report.scores, graded.status
    result.cost["grade"] = _cost(graded.totals)


def _score(root: Path, options: EvalOptions, result: EvalResult) -> None:
    """Metrics, the worst-at-k curve and the report, from the stored verdicts (no call)."""
    result.metrics = _metrics(result.scores)
    if options.n > 1:
        result.worst_at_k = _worst_at_k(result.scores, root / "grade")
        result.metrics["worst_at_k"] = {str(k): v for k, v in result.worst_at_k.items()}
    text = json.dumps(result.metrics, indent=2, sort_keys=True) + "\n"
    tmp = root / "metrics.json.tmp"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(root / "metrics.json")
    if options.report:
        from assay.evaluation.report import write_eval_report

        result.report_path = write_eval_report(root, result, root / "report.html")


def _metrics(scores: Any) -> dict[str, Any]:
    """simple-evals' flat metrics for a HealthBench run; else the overall score and its CI."""
    if scores.healthbench is not None:
        return dict(scores.healthbench.metrics)
    out: dict[str, Any] = {"overall_score": scores.overall, "n_items": len(scores.scores)}
    if scores.ci is not None:
        out["ci_low"], out["ci_high"] = scores.ci
    return out


def _worst_at_k(scores: Any, grade_dir: Path) -> dict[int, float]:
    """The worst-at-k curve over the graded samples, grouped by prompt, clipped to [0, 1] as
    HealthBench's overall score is."""
    from assay.evaluation.worst_at_k import worst_at_k
    from assay.runs.sources import split_sample_id

    by_prompt: dict[str, list[float]] = {}
    for item_id, score in scores.scores.items():
        prompt_id, _ = split_sample_id(item_id)
        if score is None:
            raise InputError(Issue(str(grade_dir), None, item_id, "no score for this sample"))
        by_prompt.setdefault(prompt_id, []).append(score)
    return {k: min(1.0, max(0.0, v)) for k, v in worst_at_k(by_prompt).items()}


def _cost(totals: Any) -> dict[str, Any]:
    if totals is None:
        return {"calls": 0, "cost_usd": 0.0}
    return {"calls": totals.calls, "cost_usd": totals.cost_usd,
            "prompt_tokens": totals.prompt_tokens, "completion_tokens": totals.completion_tokens}


def _run_cost(grade_dir: Path) -> dict[str, Any]:
    from assay.runs.store import RunStore

    store = RunStore.open(grade_dir)
    try:
        return _cost(store.totals())
    finally:
        store.close()
