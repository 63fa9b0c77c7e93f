"""A pool of Ray judge workers, and the judge stand-ins the run engine talks to.

The driver keeps everything that decides a run: the engine plans every call (same seed, same
shuffles, same prompts as the local executor), checks the store for finished calls, and is the
only writer of the run store. What leaves the driver is the judge call itself: calls are
gathered into shards (the calls queued in one turn of the event loop, which are the calls of
consecutive items, spread over the workers, at most ``shard_size`` each) and each shard goes
to the least busy worker. Its
replies come back as the shard finishes and are recorded at once.

A worker that dies (its process killed, its node lost) takes its shard with it: Ray restarts
the actor (``max_restarts``) and the driver sends the shard again, to another live worker if
there is one. A shard that fails on every attempt becomes failed calls (recorded as errors, no
verdict), which ``--resume`` retries like any other failed call.

Example (needs Ray and a running event loop; ``assay grade --executor ray`` does this)::

    pool = WorkerPool.start(configs, workers=2)
    judge = pool.judge(configs[0])
    reply = await judge.ask(request)
    await pool.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from assay.distributed.ray_env import ensure_ray
from assay.distributed.worker import JudgeWorker, reply_from_wire, request_to_wire
from assay.errors import ConfigError
from assay.judges.secrets import redact
from assay.judges.types import Failure, FailureKind, JudgeReply, JudgeRequest
from assay.logs import get_logger

log = get_logger("assay.distributed")
SHARD_SIZE = 32  # calls per message to a worker: enough to amortise Ray's per-task cost
SHARD_ATTEMPTS = 4  # sends of one shard before its calls are recorded as failed
ACTOR_RESTARTS = 3
READY_TIMEOUT_S = 180.0


@dataclass
class _Worker:
    handle: Any
    index: int
    in_flight: int = 0
    failures: int = 0


@dataclass
class _Shard:
    judge_id: str
    requests: list[Any] = field(default_factory=list)
    futures: list[asyncio.Future] = field(default_factory=list)


class WorkerPool:
    """``workers`` Ray actors, each with every judge of the run (its own limits)."""

    def __init__(self, ray: Any, workers: list[_Worker], shard_size: int = SHARD_SIZE):
        self._ray = ray
        self.workers = workers
        self.shard_size = shard_size
        self._queues: dict[str, _Shard] = {}
        self._flush_scheduled = False
        self._sends: set[asyncio.Task] = set()
        self.shards_sent = 0
        self.shards_retried = 0
        self.started_s = 0.0  # how long the workers took to start

    @classmethod
    def start(cls, configs: list[Any], *, workers: int = 2, address: str | None = None,
              cache_path: str | None = None, shard_size: int = SHARD_SIZE) -> WorkerPool:
        """Start (or join) Ray and one actor per worker. The driver resolves API keys once
        and hands them to the workers (in memory, never in a store or a log)."""
        ray = ensure_ray(address, num_cpus=None if address else max(2, workers))
        actor = ray.remote(num_cpus=0, max_restarts=ACTOR_RESTARTS, max_task_retries=0,
                           max_concurrency=1000)(JudgeWorker)
        with_keys = [_with_resolved_key(c) for c in configs]
        handles = [actor.remote(with_keys, cache_path) for _ in range(workers)]
        pool = cls(ray, [_Worker(h, i) for i, h in enumerate(handles)], shard_size)
        pool.started_s = pool._wait_ready()
        return pool

    def _wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> float:
        """Block until every worker has built its judges; fail with a clear error if one
        cannot (assay or a dependency missing on a node, no room in the cluster)."""
        started = time.perf_counter()
        try:
            self._ray.get([w.handle.pid.remote() for w in self.workers], timeout=timeout_s)
        except self._ray.exceptions.GetTimeoutError:
            raise ConfigError(f"{len(self.workers)} Ray judge workers did not start within "
                              f"{timeout_s:g} s (does the cluster have room for them?)") from None
        except self._ray.exceptions.RayError as exc:
            raise ConfigError("a Ray judge worker failed to start (is assay installed on every "
                              f"node, at the driver's version?): {redact(str(exc))[:2000]}") from None
        return time.perf_counter() - started

    def judge(self, config: Any, budget: Any = None) -> RemoteJudge:
        return RemoteJudge(config, self, budget)

    async def ask(self, judge_id: str, request: JudgeRequest) -> JudgeReply:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        shard = self._queues.setdefault(judge_id, _Shard(judge_id))
        shard.requests.append(request_to_wire(request))
        shard.futures.append(future)
        if len(shard.requests) >= self.shard_size:
            self._send(self._queues.pop(judge_id))
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        """Send what this turn of the loop queued, spread over the workers (a small window of
        calls in flight still keeps every worker busy)."""
        self._flush_scheduled = False
        queued, self._queues = self._queues, {}
        for shard in queued.values():
            n = len(shard.requests)
            size = min(self.shard_size, -(-n // min(n, len(self.workers))))
            for start in range(0, n, size):
                self._send(_Shard(shard.judge_id, shard.requests[start:start + size],
                                  shard.futures[start:start + size]))

    def _send(self, shard: _Shard) -> None:
        task = asyncio.ensure_future(self._run_shard(shard))
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)

    async def _run_shard(self, shard: _Shard) -> None:
        error: BaseException | None = None
        tried: set[int] = set()
        for attempt in range(SHARD_ATTEMPTS):
            worker = self._pick(tried)
            worker.in_flight += len(shard.requests)
            try:
                self.shards_sent += 1
                wires = await worker.handle.ask_batch.remote(shard.judge_id, shard.requests)
            except asyncio.CancelledError:
                for future in shard.futures:
                    future.cancel()
                raise
            except self._ray.exceptions.RayError as exc:  # the worker died or its node went away
                error = exc
                worker.failures += 1
                tried.add(worker.index)
                self.shards_retried += 1
                log.warning("judge worker %d lost a shard of %d calls (%s); sending it again",
                            worker.index, len(shard.requests), type(exc).__name__)
                await asyncio.sleep(0.2 * attempt)
                continue
            except Exception as exc:  # a bug must fail its calls, not hang the run
                log.exception("judge workers could not take a shard of %d calls", len(shard.requests))
                error = exc
                break
            finally:
                worker.in_flight -= len(shard.requests)
            for future, wire in zip(shard.futures, wires):
                if not future.done():
                    future.set_result(reply_from_wire(wire))
            return
        failure = Failure(FailureKind.TRANSPORT,
                          f"the judge workers could not make these calls ({type(error).__name__})")
        for future in shard.futures:
            if not future.done():
                future.set_result(JudgeReply(shard.judge_id, None, "", failure=failure))

    def _pick(self, tried: set[int]) -> _Worker:
        """The least busy worker, preferring those that have not failed this shard."""
        fresh = [w for w in self.workers if w.index not in tried] or self.workers
        return min(fresh, key=lambda w: (w.in_flight, w.failures))

    def pids(self) -> list[int]:
        return self._ray.get([w.handle.pid.remote() for w in self.workers])

    async def aclose(self) -> None:
        if self._sends:
            await asyncio.gather(*self._sends, return_exceptions=True)
        for worker in self.workers:
            with contextlib.suppress(self._ray.exceptions.RayError):  # already gone: nothing to close
                await worker.handle.close.remote()
            self._ray.kill(worker.handle)


class RemoteJudge:
    """What the engine sees in place of a :class:`~assay.judges.Judge`: ``ask`` sends the call
    to the pool; ``config.limits.max_in_flight`` is the pool's (workers x one judge's), so the
    engine keeps every worker busy. The run's budget is checked and charged here, on the
    driver, once for all workers."""

    def __init__(self, config: Any, pool: WorkerPool, budget: Any = None):
        limits = config.limits.model_copy(
            update={"max_in_flight": config.limits.max_in_flight * len(pool.workers)})
        self.config = config.model_copy(update={"limits": limits})
        self.id = config.judge_id
        self.pool = pool
        self.budget = budget
        self.estimator = _estimator(config)

    async def ask(self, request: JudgeRequest) -> JudgeReply:
        budget = self.budget
        if budget is None:
            return await self.pool.ask(self.id, request)
        # one reservation for the whole call (its attempts are made on a worker): the estimate
        # learns from the dearest call so far, re-asks included
        held = self.estimator.estimate(request.messages, request.schema)
        if not await budget.reserve(held):
            budget.refuse()
            return JudgeReply(self.id, None, "", failure=Failure(
                FailureKind.BUDGET, budget.failure_message()))
        cost = 0.0
        try:
            reply = await self.pool.ask(self.id, request)
            cost = reply.cost_usd
        finally:
            self.estimator.observe(cost)
            budget.settle(held, cost)
        return reply

    async def aclose(self) -> None:  # the pool owns the workers
        return None


def _estimator(config: Any) -> Any:
    from assay.judges.anthropic import max_tokens_of
    from assay.judges.budget import CallEstimator
    from assay.judges.pricing import Pricing

    price = config.price or Pricing.default().price_for(config.model)
    return CallEstimator(price, max_tokens_of(config) if config.wire == "anthropic"
                         else config.max_tokens)


def _with_resolved_key(config: Any) -> Any:
    """The config with its key in ``api_key`` (a SecretStr), so a worker on another node does
    not need the driver's environment variables."""
    from assay.judges.specs import resolve_api_key

    if config.api_key is not None:
        return config
    key = resolve_api_key(config)
    if key is None:
        return config
    return config.model_copy(update={"api_key": SecretStr(key.reveal())})
