"""Jobs: model pipelines that are not grading (rubric generation, routing, CIA, near-miss
pairs, RAG metrics) run on one engine.

* :class:`StageCaller` asks a judge for one stage and traces the call in a :class:`CallStore`
  (request, reply, tokens, cost); a finished call is never made twice.
* :func:`run_batch` runs a per-item worker over many items concurrently and resumably.
* :class:`JobDir` is the directory of a job: manifest, store, config check, one writer.

Example::

    job = JobDir.open("runs/gen", kind="generate", config={"model": spec, "seed": 0})
    caller = StageCaller(judge, job.store)

    async def worker(query):
        plan = await caller.ask("route", messages, ROUTE_SCHEMA, item_id=query.id)
        ...
        return rubric.model_dump()

    result = await run_batch(queries, worker, store=job.store, item_id=lambda q: q.id)
    job.finish(status="complete" if result.complete else "incomplete")
"""

from assay.jobs.batch import BatchResult, PartialResult, run_batch
from assay.jobs.caller import StageCaller, StageError, messages_of, stable_json
from assay.jobs.jobdir import JobDir
from assay.jobs.store import CallStore, CallTotals, StageCall

__all__ = [
    "BatchResult",
    "CallStore",
    "CallTotals",
    "JobDir",
    "PartialResult",
    "StageCall",
    "StageCaller",
    "StageError",
    "messages_of",
    "run_batch",
    "stable_json",
]
