"""A judge that asks through its provider's batch API (half price, results within 24 h).

:class:`BatchJudge` wraps a :class:`~assay.judges.Judge` and answers the same ``ask(request)``:
requests asked within ``gather_s`` of each other (up to ``max_requests`` and about
``max_bytes``) go out as one batch
(:mod:`assay.judges.batch_wire`), each under its request's cache key as ``custom_id``; each
``ask`` returns when its batch has ended, with the reply read and parsed exactly as the live
judge reads and parses it, costed at batch prices (:data:`~assay.judges.pricing.BATCH_PRICE_FACTOR`).

Every submitted batch is written to a :class:`BatchLedger` (the run store) as soon as the
provider has given its id, before anything waits on it; asked again for a ``custom_id`` the
ledger holds (a resumed run, after ``kill -9``), the judge waits for that batch instead of
submitting the request again. A request that failed, expired or came back unreadable is
retried as the user chose: in a new batch (``retry="batch"``, at most ``max_rounds`` batches
in all) or live (``retry="live"``, at live prices, with the live judge's retries and re-asks).
A failure is never a verdict: what still fails is returned as the failure it is.

Example (against the fake judge server)::

    async with FakeJudgeServer(policy="MET") as server:
        judge = BatchJudge(make_judge(f"openai-compatible:fake@{server.base_url}"),
                           MemoryLedger(), poll_s=0.05)
        reply = await judge.ask(JudgeRequest(messages=(...), schema=VERDICT_SCHEMA))
        reply.data["verdict"], server.batches.created    # "MET", 1
"""

from __future__ import annotations

import asyncio
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import orjson

from assay.errors import ConfigError
from assay.judges.batch_wire import BatchError, BatchOutcome, batches_for
from assay.judges.free_text import text_answer
from assay.judges.judge import CUT, Judge
from assay.judges.openai_compat import WireReply
from assay.judges.pricing import BATCH_PRICE_FACTOR
from assay.judges.prompt_caching import CachePlan, CacheTTL
from assay.judges.retry import worth_asking_again
from assay.judges.secrets import redact
from assay.judges.simple_evals import MODE as SIMPLE_EVALS
from assay.judges.simple_evals import simple_evals_reply
from assay.judges.structured import parse_reply
from assay.judges.types import Failure, FailureKind, JudgeReply, JudgeRequest, Usage
from assay.logs import get_logger

log = get_logger("assay.judges")
BatchRetry = Literal["batch", "live"]
MAX_REQUESTS = 50_000  # the most requests OpenAI takes in one batch (Anthropic: 100,000)
# and the most bytes: OpenAI takes a 200 MB input file, Anthropic a 256 MB batch; a request's
# size is counted as its messages' JSON bytes plus REQUEST_OVERHEAD for the rest of its body
MAX_BYTES = 150 * 2**20
REQUEST_OVERHEAD = 2048
POLL_FAILURES = 5  # polls in a row that fail before the batch's requests fail (resume retries)


class BatchLedger(Protocol):
    """Where submitted batches are kept, so that a resumed run finds them. Every write must be
    durable when it returns (it must survive a ``kill -9`` right after)."""

    def batches_of(self, judge_id: str) -> dict[str, str]:
        """``custom_id → batch id`` of every batch submitted for ``judge_id`` (the latest)."""

    def intended(self, judge_id: str, submission: str, custom_ids: list[str]) -> None:
        """Record that a batch is about to be created under ``submission``."""

    def submitted(self, judge_id: str, batch_id: str, custom_ids: list[str],
                  submission: str | None = None) -> None:
        """Record a created batch (the one intended under ``submission``)."""

    def unresolved(self, judge_id: str) -> dict[str, str]:
        """``custom_id → submission`` of intended batches whose id was never recorded."""


class RecordLedger(ABC):
    """A ledger kept as a list of records ``{judge, batch_id, custom_ids, submitted_at}``;
    subclasses say where the list is read from and written to (durably)."""

    @abstractmethod
    def records(self) -> list[dict[str, Any]]:
        """Every record kept, oldest first."""

    @abstractmethod
    def save(self, records: list[dict[str, Any]]) -> None:
        """Replace the records kept with ``records``, durably before returning."""

    def batches_of(self, judge_id: str) -> dict[str, str]:
        return {custom_id: record["batch_id"] for record in self.records()
                if record["judge"] == judge_id and record.get("batch_id")
                for custom_id in record["custom_ids"]}

    def intended(self, judge_id: str, submission: str, custom_ids: list[str]) -> None:
        self.save([*self.records(), {"judge": judge_id, "batch_id": None,
                                     "submission": submission, "custom_ids": list(custom_ids),
                                     "submitted_at": time.time()}])

    def submitted(self, judge_id: str, batch_id: str, custom_ids: list[str],
                  submission: str | None = None) -> None:
        records = self.records()
        for record in records:
            if submission is not None and record.get("submission") == submission:
                record["batch_id"] = batch_id
                break
        else:
            records.append({"judge": judge_id, "batch_id": batch_id, "submission": submission,
                            "custom_ids": list(custom_ids), "submitted_at": time.time()})
        self.save(records)

    def unresolved(self, judge_id: str) -> dict[str, str]:
        return {custom_id: record["submission"] for record in self.records()
                if record["judge"] == judge_id and not record.get("batch_id")
                for custom_id in record["custom_ids"]}


@dataclass
class MemoryLedger(RecordLedger):
    """A ledger held in memory (for scripts and tests; a run or a job uses its store)."""

    kept: list[dict[str, Any]] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        return list(self.kept)

    def save(self, records: list[dict[str, Any]]) -> None:
        self.kept = list(records)


class BatchJudge:
    """A judge asking through the batch API of its wire (see the module doc)."""

    def __init__(self, judge: Judge, ledger: BatchLedger, *, retry: BatchRetry = "batch",
                 poll_s: float = 30.0, gather_s: float = 0.25, max_requests: int = MAX_REQUESTS,
                 max_bytes: int = MAX_BYTES, max_rounds: int = 3, timeout_s: float = 300.0):
        if judge.budget is not None:  # a batch is paid when it ends: nothing to reserve before
            raise ConfigError("--budget is not supported with --executor batch")
        self.judge = judge
        self.id, self.config, self.limiter, self.timeouts = (judge.id, judge.config,
                                                            judge.limiter, judge.timeouts)
        self.ledger = ledger
        self.retry, self.poll_s, self.gather_s = retry, poll_s, gather_s
        self.max_requests, self.max_rounds, self.timeout_s = max_requests, max_rounds, timeout_s
        self.max_bytes = max_bytes
        self._queued_bytes = 0
        self._api = batches_for(judge.config.wire)
        self._recorded = ledger.batches_of(judge.id)  # custom_id -> batch id (earlier sessions)
        # custom_id -> submission of a batch an earlier session was creating when it stopped
        self._unresolved = ledger.unresolved(judge.id)
        self._resolving: dict[str, asyncio.Task[None]] = {}
        self._queue: dict[str, JudgeRequest] = {}
        self._waiting: dict[str, asyncio.Future[BatchOutcome]] = {}
        self._flush_timer: asyncio.TimerHandle | None = None
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._results: dict[str, dict[str, BatchOutcome]] = {}  # by batch id, once ended
        self._tasks: set[asyncio.Task[Any]] = set()
        self.submitted: list[str] = []  # batch ids submitted by this judge in this session

    def __repr__(self) -> str:
        return f"BatchJudge({self.judge!r})"

    def cached(self, requests: Any) -> list[JudgeReply | None]:
        return self.judge.cached(requests)

    def cache_key(self, request: JudgeRequest) -> str:
        return self.judge.cache_key(request)

    def cache_plan(self, head_chars: int, sharing: int, ttl: CacheTTL = "1h") -> CachePlan | None:
        """How calls sharing a head are cached through batches: the first of each group in one
        batch, the others in the next one, sent when it has ended, reading the head its first
        call wrote. Requests of one batch are processed concurrently ("cache hits are provided
        on a best-effort basis"), and the next batch may start long after the first wrote its
        entries, so the heads are marked for Anthropic's 1-hour cache (written at 2x the
        input price: it pays from 3 calls of a head). OpenAI offers no longer cache for
        batches: none there. Caching so takes two batches' time instead of one; ``prompt_caching
        = false`` in the judge's table sends everything in one batch, unmarked."""
        if self.config.wire != "anthropic":
            return None
        return self.judge.cache_plan(head_chars, sharing, ttl)

    def defer_check(self) -> None:
        self.judge.defer_check()

    async def check(self, timeout_s: float = 5.0) -> None:
        await self.judge.check(timeout_s)

    async def aclose(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        tasks = [*self._pollers.values(), *self._resolving.values(), *self._tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.judge.aclose()

    async def ask(self, request: JudgeRequest) -> JudgeReply:
        """The reply to ``request``, asked in a batch; never raises for model, transport or
        batch failures (they come back as the reply's failure)."""
        started = time.perf_counter()
        key = self.judge.cache_key(request)
        cache = self.judge.cache
        cache_key = key if cache is not None and cache.writes else None
        usage, rounds, raw = Usage(), 0, ""
        while True:
            outcome = await self._outcome(key, request, fresh=rounds > 0)
            rounds += 1
            failure = outcome.failure
            if outcome.payload is not None:
                data, raw, used, failure = self._read(request, outcome.payload)
                usage = usage + used
                if failure is None:
                    return self.judge._finish(request, data, raw, usage, rounds, started, None,
                                              cache_key, BATCH_PRICE_FACTOR)
            assert failure is not None  # a result without a payload says why
            if not worth_asking_again(failure):
                break
            if self.retry == "live":
                live = await self.judge.ask(request)
                return replace(live, usage=usage + live.usage,
                               cost_usd=live.cost_usd + self._cost(usage),
                               latency_s=time.perf_counter() - started,
                               attempts=live.attempts + rounds)
            if rounds >= self.max_rounds:
                break
            log.debug("judge %s: %s; asking again in a new batch", self.id, failure)
        return self.judge._finish(request, None, raw, usage, rounds, started, failure, None,
                                  BATCH_PRICE_FACTOR)

    # --- one request's outcome ------------------------------------------------------------------

    async def _outcome(self, key: str, request: JudgeRequest, *, fresh: bool) -> BatchOutcome:
        submission = None if fresh or key in self._recorded else self._unresolved.get(key)
        if submission is not None:  # created, perhaps, when the last session stopped
            if submission not in self._resolving:
                self._resolving[submission] = asyncio.ensure_future(self._resolve(submission))
            await asyncio.shield(self._resolving[submission])
        batch_id = None if fresh else self._recorded.get(key)
        if batch_id is not None:  # submitted before (this session or an earlier one)
            results = self._results.get(batch_id)
            if results is not None:
                return results.get(key) or _missing(key, batch_id)
        future = self._waiting.get(key)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._waiting[key] = future
            if batch_id is not None:
                self._poll(batch_id)
            else:
                self._enqueue(key, request)
        return await asyncio.shield(future)

    def _enqueue(self, key: str, request: JudgeRequest) -> None:
        size = sum(len(orjson.dumps(m.get("content"))) for m in request.messages) + REQUEST_OVERHEAD
        if self._queue and self._queued_bytes + size > self.max_bytes:
            self._flush()  # this request would make the batch too large: it starts the next
        self._queue[key] = request
        self._queued_bytes += size
        if len(self._queue) >= self.max_requests:
            self._flush()
            return
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        self._flush_timer = asyncio.get_running_loop().call_later(self.gather_s, self._flush)

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if not self._queue:
            return
        queued, self._queue, self._queued_bytes = self._queue, {}, 0
        task = asyncio.ensure_future(self._submit(queued))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, submission: str) -> None:
        """Find the batch an earlier session created under ``submission`` but did not record
        (it stopped in between): record it, or forget the intent if the provider has none."""
        keys = [k for k, sub in self._unresolved.items() if sub == submission]
        try:
            batch_id = await self._api.find(self.judge._transport, submission, self.timeout_s)
        except BatchError as exc:
            log.warning("judge %s: cannot look for batch %s: %s", self.id, submission, exc)
            batch_id = None
        for key in keys:
            self._unresolved.pop(key, None)
        if batch_id is not None:
            self.ledger.submitted(self.id, batch_id, keys, submission)
            self._recorded.update(dict.fromkeys(keys, batch_id))

    async def _submit(self, queued: dict[str, JudgeRequest]) -> None:
        keys = list(queued)
        submission = uuid.uuid4().hex
        try:
            problem = await self.judge._checked()  # a deferred preflight (warm cache) first
            if problem is not None:
                raise BatchError(problem.message)
            bodies = [(key, self._body(request)) for key, request in queued.items()]
            self.ledger.intended(self.id, submission, keys)  # a kill from here on: see _resolve
            batch_id = await self._api.submit(self.judge._transport, bodies, self.timeout_s,
                                              submission)
        except BatchError as exc:
            self._fail(keys, Failure(FailureKind.TRANSPORT, str(exc)))
            return
        self.ledger.submitted(self.id, batch_id, keys, submission)  # before anything waits on it
        self.submitted.append(batch_id)
        self._recorded.update(dict.fromkeys(keys, batch_id))
        log.info("judge %s: submitted batch %s (%d requests)", self.id, batch_id, len(keys))
        self._poll(batch_id)

    def _poll(self, batch_id: str) -> None:
        if batch_id not in self._pollers:
            self._pollers[batch_id] = asyncio.ensure_future(self._wait_for(batch_id))

    async def _wait_for(self, batch_id: str) -> None:
        transport, failures = self.judge._transport, 0
        while True:
            try:
                state = await self._api.state(transport, batch_id, self.timeout_s)
                if state.ended:
                    outcomes = await self._api.results(transport, state, self.timeout_s)
                    break
                failures = 0
            except BatchError as exc:
                failures += 1
                if failures >= POLL_FAILURES:  # the batch stays in the ledger: resume polls again
                    keys = [k for k, b in self._recorded.items() if b == batch_id]
                    self._fail(keys, Failure(FailureKind.TRANSPORT, str(exc)))
                    del self._pollers[batch_id]
                    return
            await asyncio.sleep(self.poll_s)
        results = {o.custom_id: o for o in outcomes}
        self._results[batch_id] = results
        for key, b in list(self._recorded.items()):
            if b == batch_id:
                future = self._waiting.get(key)
                if future is not None and not future.done():
                    future.set_result(results.get(key) or _missing(key, batch_id, state.status))

    def _fail(self, keys: list[str], failure: Failure) -> None:
        for key in keys:
            future = self._waiting.get(key)
            if future is not None and not future.done():
                future.set_result(BatchOutcome(key, None, failure))

    # --- reading ----------------------------------------------------------------------------------

    def _body(self, request: JudgeRequest) -> dict[str, Any]:
        return self.judge.request_body(request)

    def _read(self, request: JudgeRequest, payload: dict[str, Any]
              ) -> tuple[dict[str, Any] | None, str, Usage, Failure | None]:
        """A reply body read and parsed as the live judge reads and parses it (without
        re-asks: a reply that does not parse is asked again in a new batch, or live)."""
        try:
            wire: WireReply = self.judge._wire.read(payload)
        except (AttributeError, TypeError, IndexError, KeyError) as exc:
            return None, "", Usage(), Failure(FailureKind.SERVER_ERROR,
                                              f"a batch result is not a reply ({exc})")
        if wire.refusal:
            return (None, wire.text or wire.refusal, wire.usage,
                    Failure(FailureKind.REFUSAL, redact(wire.refusal)))
        if request.text:
            data, failure = text_answer(wire)
            return data, wire.text, wire.usage, failure
        if wire.finish_reason in CUT:  # asked again in a batch, it would be cut again
            limit = self.judge.completion_limit(request)
            return None, wire.text, wire.usage, self.judge._truncated(request, limit, limit)
        exact = self.judge.structured_mode == SIMPLE_EVALS
        parsed = (simple_evals_reply(wire.text) if exact
                  else parse_reply(wire.text, request.schema, request.bool_field))
        if parsed.ok:
            return parsed.data, wire.text, wire.usage, None
        return None, wire.text, wire.usage, Failure(parsed.kind or FailureKind.UNPARSEABLE,
                                                    parsed.error or "unreadable reply")

    def _cost(self, usage: Usage) -> float:
        judge = self.judge
        price = judge._price
        return judge.pricing.cost(judge.model, usage, price) * BATCH_PRICE_FACTOR if price else 0.0


def _missing(key: str, batch_id: str, status: str = "ended") -> BatchOutcome:
    return BatchOutcome(key, None, Failure(
        FailureKind.SERVER_ERROR, f"batch {batch_id} ({status}) returned no result for this request"))
