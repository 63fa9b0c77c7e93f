"""``assay.generate``: rubrics for a file of queries, as a resumable job.

The job directory (``--job-dir``, by default ``OUT.job`` beside the output) holds the manifest,
every stage call's trace (:mod:`assay.jobs`, ``calls.sqlite``) and ``records.jsonl``, one line
per query with its search queries, evidence chunks, Reference Board and audit report. Run the
same command again after a crash, a ``kill -9`` or a spent ``--budget`` and it goes on where it
stopped, without repeating a finished call. A changed setting (model, knowledge base, templates, limits) is refused, naming
what changed.

Example (the shipped sample, against the fake judge server)::

    import assay
    from assay.evidence import build_kb
    from assay.testing import FakeJudgeServer

    build_kb(["examples/generate/docs"], "kb", max_chars=400)
    with FakeJudgeServer.run_in_thread(stages="examples/generate/stages.yaml") as server:
        result = assay.generate("examples/generate/queries.txt", kb="kb",
                                model=f"openai-compatible:fake@{server.base_url}",
                                out="rubrics.jsonl")
    result.rubrics["q-..."].criteria[0].provenance     # stage, evidence chunk ids, model
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from assay.errors import ConfigError
from assay.generate.pipeline import GenerateConfig, Generator
from assay.generate.queries import Query, as_queries, write_rubrics
from assay.generate.templates import load_templates
from assay.rubric import Rubric

AGENT_TEMPERATURE = 0.1  # [R]: the released code's temperature for every generation agent


@dataclass
class GenerateResult:
    """What a generation job produced: rubrics by query id, failures, call totals."""

    job_dir: Path | None
    status: str
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    records: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    resumed: int = 0
    totals: Any = None
    written: int = 0
    wall_s: float = 0.0


def _judge(spec: str, *, config_file: Any, cache: Any, budget: Any, concurrency: int | None):
    from assay.judges import JudgeConfig, Limits, make_judge
    from assay.judges.specs import config_from

    config = config_from(spec, config_file)
    updates: dict[str, Any] = {}
    if config.temperature is None:
        updates["temperature"] = AGENT_TEMPERATURE
    if concurrency is not None:
        updates["limits"] = Limits(**{**config.limits.model_dump(), "max_in_flight": concurrency})
    if updates:
        config = JudgeConfig.model_validate({**config.model_dump(), **updates})
    return make_judge(config, cache=cache, budget=budget)


def job_config(settings: GenerateConfig, *, model: str | None, fast_model: str | None,
               kb: Any, search: str | None, templates: dict[str, Any]) -> dict[str, Any]:
    return {**settings.as_dict(), "model": model, "fast_model": fast_model,
            "kb": kb.fingerprint if kb is not None else None, "search": search,
            "templates": {stage: t.version for stage, t in sorted(templates.items())}}


async def agenerate(
    queries: Any,
    *,
    kb: Any = None,
    model: str | None = None,
    fast_model: str | None = None,
    search: Any = None,
    method: str = "pipeline",
    out: str | Path | None = None,
    job_dir: str | Path | None = None,
    templates: str | Path | None = None,
    budget: float | None = None,
    concurrency: int | None = None,
    cache: str | Path | None = None,
    config_file: str | Path | None = None,
    progress: bool = False,
    executor: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    batch_retry: str = "batch",
    batch_poll_s: float = 30.0,
    **settings: Any,
) -> GenerateResult:
    """Generate a rubric per query; see the module docstring.

    ``queries``: a file (text, item JSONL, HealthBench JSONL), a string, or a list. ``kb``: a
    knowledge-base folder or :class:`~assay.evidence.KnowledgeBase`. ``model``: a judge spec
    (``openai:gpt-4.1``, ``openai-compatible:M@URL``, a named judge of ``assay.toml``).
    ``search``: ``"tavily"`` (key from ``TAVILY_API_KEY``) or a :class:`WebSearch`.
    ``method``: ``pipeline`` (seed 000), ``one-step`` (one call, query only) or ``generic``
    (Table 8, no call). ``settings``: any :class:`GenerateConfig` field (``top_k``,
    ``max_criteria``, ``refine_rounds``, ``rerank``, ...). ``executor="ray"`` sends the stage
    calls to ``workers`` Ray actors (on ``ray_address`` or a local instance) while this
    process keeps the job store, as ``assay grade --executor ray`` does. ``executor="batch"``
    asks every stage through the models' batch APIs at half price: the queries go through the
    pipeline together, one batch per stage (each may take up to 24 h), the batches kept in the
    job so that the same command again waits for them (``batch_retry``, ``batch_poll_s``: see
    :class:`~assay.judges.batch_judge.BatchJudge`).
    """
    import time

    from assay.evidence.kb import KnowledgeBase
    from assay.evidence.websearch import make_web_search
    from assay.jobs import JobDir, StageCaller, run_batch
    from assay.judges import Budget, check_judges

    started = time.perf_counter()
    config = GenerateConfig(method=method, **settings)
    items = as_queries(queries)
    stage_templates = load_templates(templates)
    base = KnowledgeBase.load(kb) if isinstance(kb, (str, Path)) else kb
    web = make_web_search(search) if isinstance(search, str) or search is None else search
    if method == "pipeline" and web is not None and config.pages:
        from assay.evidence.pages import require_page_text

        require_page_text()  # before the job opens or any call is made
    if method == "generic":
        generator = Generator(None, config=config)
        result = GenerateResult(None, "complete")
        for q in items:
            record = await generator(q)
            result.records[q.id] = record
            result.rubrics[q.id] = Rubric.model_validate(record["rubric"])
        if out is not None:
            result.written = write_rubrics(items, result.rubrics, out)
        result.wall_s = time.perf_counter() - started
        return result
    if not model:
        raise ConfigError("give the model that writes the rubric: --model SPEC")
    if executor not in ("local", "ray", "batch"):
        raise ConfigError(f"--executor {executor!r}: unknown (local, ray or batch)")
    if executor == "batch" and (budget is not None or batch_retry not in ("batch", "live")):
        raise ConfigError("--executor batch: --budget is not supported, and --batch-retry is "
                          f"batch or live (got {batch_retry!r})")
    search_name = getattr(web, "name", None) if web is not None else None
    job = JobDir.open(_job_dir(job_dir, out), kind="generate", config=job_config(
        config, model=model, fast_model=fast_model, kb=base, search=search_name,
        templates=stage_templates))
    response_cache = None
    if cache is not None:
        from assay.judges.cache import ResponseCache

        response_cache = ResponseCache(cache)
    spend = Budget(budget) if budget is not None else None
    judges = [_judge(model, config_file=config_file, cache=response_cache, budget=spend,
                     concurrency=concurrency)]
    if fast_model:
        judges.append(_judge(fast_model, config_file=config_file, cache=response_cache,
                             budget=spend, concurrency=concurrency))
    pool = None
    try:
        await check_judges(judges)
        if executor == "ray":  # workers that cannot start fail here, before any stage call
            from assay.distributed import WorkerPool

            pool = WorkerPool.start([j.config for j in judges], workers=workers or 2,
                                    address=ray_address,
                                    cache_path=str(cache) if cache is not None else None)
    except BaseException:
        job.close()
        for judge in judges:
            await judge.aclose()
        raise
    vias: list[Any] = [pool.judge(j.config, spend) if pool else None for j in judges]
    if executor == "batch":  # stage calls go out as batches, kept in the job's store
        from assay.jobs.batch_ledger import JobBatchLedger
        from assay.judges.batch_judge import BatchJudge, BatchRetry

        ledger = JobBatchLedger(job.store)
        vias = [BatchJudge(j, ledger, retry=cast(BatchRetry, batch_retry), poll_s=batch_poll_s)
                for j in judges]
    try:
        callers = [StageCaller(j, job.store, via=via) for j, via in zip(judges, vias)]
        generator = Generator(callers[0], kb=base, web=web, config=config,
                              templates=stage_templates, fast=callers[-1], store=job.store)
        batch = await run_batch(items, generator, store=job.store, item_id=lambda q: q.id,
                                label=f"generate ({method})", quiet=not progress,
                                max_items=len(items) if executor == "batch" else 64)
    finally:
        if executor == "batch":
            for via in vias:
                await via.aclose()  # stops polling (the batches stay in the job)
        if pool is not None:
            await pool.aclose()
        for judge in judges:
            await judge.aclose()
        if response_cache is not None:
            response_cache.close()
    status = "complete" if batch.complete else ("budget" if spend is not None and spend.exhausted
                                                 else "incomplete")
    result = GenerateResult(job.path, status, failed=dict(batch.failed), resumed=batch.resumed,
                            totals=batch.totals)
    for key, record in batch.results.items():
        result.records[key] = record
        result.rubrics[key] = Rubric.model_validate(record["rubric"])
    if out is not None:
        result.written = write_rubrics(items, result.rubrics, out)
    _write_records(job.path / "records.jsonl", result.records)
    job.finish(status=status, extra={"failed": result.failed, "out": str(out) if out else None,
                                     "in_flight": {j.id: j.in_flight for j in judges}})
    result.wall_s = time.perf_counter() - started
    return result


def generate(queries: Any, **kwargs: Any) -> GenerateResult:
    """Blocking :func:`agenerate` (works in scripts and inside notebooks' running loops)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(agenerate(queries, **kwargs))
    from assay.judges.sync import run_sync

    return run_sync(agenerate(queries, **kwargs))


def _write_records(path: Path, records: dict[str, Any]) -> None:
    """Each query's trace in one readable line: search queries, evidence chunks, Reference
    Board, audit report, notes (the stage calls themselves are in calls.sqlite)."""
    import json

    with path.open("w", encoding="utf-8") as handle:
        for record in records.values():
            handle.write(json.dumps({k: v for k, v in record.items() if k != "rubric"},
                                    ensure_ascii=False) + "\n")


def _job_dir(job_dir: str | Path | None, out: str | Path | None) -> Path:
    if job_dir is not None:
        return Path(job_dir)
    if out is not None:
        return Path(f"{Path(out)}.job")
    raise ConfigError("give --job-dir (or --out, whose OUT.job folder then holds the job)")


__all__ = ["GenerateResult", "Query", "agenerate", "generate"]
