"""The async engine: grades items concurrently within the judges' limits, writing each call.

Items are pulled from an iterator one at a time, so a file of any size is graded in bounded
memory: at most ``concurrency`` calls are outstanding and only the items they belong to are held.
Each judge enforces its own limits (requests in flight, RPM, TPM); the engine's window is
independent of them and wide enough to saturate them (at least :data:`MIN_WINDOW` calls, and
four times the judges' in-flight limits). A call already finished in the store (on resume) is
skipped; an item whose calls all finished is skipped without planning. The calls a judge's cache
answers are looked up per item in one query and recorded at once; only the others become tasks.
The calls of an item that share a head worth caching on the provider's side go out one first,
the others once its reply has come (:mod:`assay.runs.cache_schedule`).
When the shared budget runs out the
engine stops scheduling, lets in-flight calls end, and reports ``budget``; resuming with a larger
budget continues where it stopped. ``on_item_done`` is handed each item this session registered
once its calls have all ended, with its votes (the run's summary is scored from them, see
:mod:`assay.runs.session_scores`).

**Final passes.** A call that failed in a way that asking again may fix (its retries ran out on
429s, 5xx or timeouts, or its reply did not parse after the re-asks:
:func:`~assay.judges.retry.worth_asking_again`) is not recorded as failed at once: it is held
until every call of the input has been sent, then asked again, exactly as ``--resume`` would
ask it, up to ``final_passes`` times (once by default; a call that fails once every call has
been sent is asked again at once). Only its last outcome is recorded, with the attempts,
tokens, cost and time of every pass; a failure stays a failure, and the run's status is
decided after the passes. At most ``concurrency`` calls are held at a time (a call beyond that
is recorded as failed): the memory stays bounded, and an endpoint that fails every call is not
asked again for all of them. A run that stops early (budget, a store error, an interruption)
records the held calls as the failures they are.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from assay.errors import AssayError, Issue
from assay.grading.grader import Grader, PlannedCall
from assay.grading.parse import ReplyError
from assay.item import Item
from assay.judges.retry import worth_asking_again
from assay.logs import get_logger
from assay.progress import QuietProgress, RunProgress
from assay.rubric import Rubric
from assay.runs.cache_schedule import schedule
from assay.runs.item_checks import item_issue, prompt_issue
from assay.runs.store import COMMIT_AFTER_S, CallRecord, RunStore
from assay.verdict import Verdict

log = get_logger("assay.runs")  # scrubs secrets from every record
# What a full disk (or a file-size limit, or a lost mount) raises at the store's write boundary.
STORE_WRITE_ERRORS = (sqlite3.OperationalError, sqlite3.DatabaseError, OSError)
MIN_WINDOW = 256  # calls the engine keeps outstanding, whatever the judges' in-flight limits
# Told of each item registered in this session when its calls have all ended: its position among
# this session's registrations (0, 1, ...), the item, its rubric and the votes of its calls.
ItemDone = Callable[[int, Item, Rubric, list[Verdict]], None]


@dataclass(frozen=True)
class JudgeSlot:
    """A judge of the run: its id in the store, the client, and its ensemble weight."""

    id: str
    judge: Any  # assay.judges.Judge (anything with ``async ask(JudgeRequest)``)
    weight: float = 1.0


@dataclass
class EngineOutcome:
    status: str = "complete"  # complete | budget | interrupted | error (the store failed)
    calls_made: int = 0
    items_seen: int = 0
    items_skipped: int = 0
    issues: list[Issue] = field(default_factory=list)
    store_error: BaseException | None = None  # the first failed write (e.g. disk full)
    unsaved_calls: int = 0  # calls that ended after it and could not be saved
    asked_again: int = 0  # failed calls asked again in a final pass
    recovered: int = 0  # of them, those that ended with their verdicts


@dataclass(frozen=True)
class _Held:
    """A call held for a final pass: its request, its failed reply and the passes it had."""

    call: PlannedCall
    request: Any
    reply: Any
    passes: int


class Engine:
    def __init__(
        self,
        store: RunStore,
        grader: Grader,
        judges: Sequence[JudgeSlot],
        *,
        rubric: Rubric | None = None,
        concurrency: int | None = None,
        progress: RunProgress | None = None,
        on_item_done: ItemDone | None = None,
        final_passes: int = 1,
    ):
        self.store = store
        self.grader = grader
        self.judges = {slot.id: slot for slot in judges}
        self._clients = {slot.id: slot.judge for slot in judges}
        self.rubric = rubric
        limit = sum(_max_in_flight(slot.judge) for slot in judges)
        # Calls waiting out a retry delay (a 429's Retry-After, a backoff) hold a place in the
        # window but no request slot: four times the judges' in-flight limits keeps them busy.
        self.concurrency = concurrency or max(MIN_WINDOW, 4 * limit)
        self.progress = progress or QuietProgress()
        self._pending: dict[str, int] = {}
        self._stop: str | None = None
        self._store_error: BaseException | None = None
        self._unsaved = 0
        self._commit_timer: asyncio.TimerHandle | None = None
        self.on_item_done = on_item_done
        self._registered = 0  # items registered in this session
        # Items registered in this session and not finished yet, with the votes so far.
        self._fresh: dict[str, tuple[int, Item, Rubric, list[Verdict]]] = {}
        self.final_passes = final_passes
        self._held: deque[_Held] = deque()  # failed calls waiting for their final pass
        self._sent_all = False  # every call of the input has been sent once

    async def run(self, items: Iterable[Item]) -> EngineOutcome:
        from assay.judges.types import FailureKind  # noqa: F401  (import early: fail fast)

        outcome = EngineOutcome()
        window = asyncio.Semaphore(self.concurrency)
        tasks: set[asyncio.Task] = set()
        try:
            for item in items:
                if self._stop:
                    break
                outcome.items_seen += 1
                try:
                    todo = self._plan(item, outcome)
                except STORE_WRITE_ERRORS as exc:
                    self._store_failed(exc)
                    break
                requests = [judge_request(call) for call in todo]
                if todo:
                    todo, requests = self._serve_cached(todo, requests, outcome)
                self._commit_soon()
                for one in schedule(todo, requests, self._clients):
                    await window.acquire()
                    if self._stop:
                        window.release()
                        break
                    task = asyncio.create_task(self._call(one.call, one.request, window, outcome,
                                                          after=one.after, leads=one.leads))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                if not tasks:  # only cached calls so far: let the commit timer and others run
                    await asyncio.sleep(0)
            self._sent_all = True  # from now on a failed call is asked again at once
            while self._held and not self._stop:
                await window.acquire()
                if self._stop:
                    window.release()
                    break
                held = self._held.popleft()
                task = asyncio.create_task(self._call(held.call, held.request, window, outcome,
                                                      held))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        except (asyncio.CancelledError, KeyboardInterrupt):
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            outcome.status = "interrupted"
            raise
        finally:
            for held in self._held:  # the run stopped before their final pass
                self._replied(held.call, held.reply, outcome)
            self._held.clear()
            self._commit_now()  # whatever ended the run, the finished calls are kept
        if self._stop:
            outcome.status = self._stop
        outcome.store_error, outcome.unsaved_calls = self._store_error, self._unsaved
        return outcome

    def _commit_soon(self) -> None:
        """Commit what is written within COMMIT_AFTER_S (the store commits full batches itself)."""
        if self._commit_timer is None and self.store.dirty and self._store_error is None:
            loop = asyncio.get_running_loop()
            self._commit_timer = loop.call_later(COMMIT_AFTER_S, self._commit_now)

    def _commit_now(self) -> None:
        if self._commit_timer is not None:
            self._commit_timer.cancel()
            self._commit_timer = None
        try:
            self.store.commit()
        except STORE_WRITE_ERRORS as exc:
            self._store_failed(exc)
            self._unsaved += self.store.rolled_back

    def _store_failed(self, error: BaseException) -> None:
        """The first failed write stops the run (one error, not one per call in flight)."""
        if self._store_error is None:
            self._store_error = error
            log.debug("run store write failed: %s", error)
        self._stop = "error"

    def _plan(self, item: Item, outcome: EngineOutcome) -> list[PlannedCall]:
        rubric = item.rubric or self.rubric
        # A bad item is reported and skipped; the rest of the run goes on.
        issue = item_issue(item, rubric)
        if issue is not None:
            outcome.issues.append(issue)
            return []
        assert rubric is not None  # item_issue says so otherwise
        state = self.store.item_state(item.id)
        if state is not None and state[0]:
            outcome.items_skipped += 1
            self.progress.item_skipped()
            return []
        calls = [c for slot in self.judges for c in self.grader.plan(item, rubric, slot)]
        issue = prompt_issue(item, calls)
        if issue is not None:
            outcome.issues.append(issue)
            return []
        finished = state[1] if state is not None else set()
        if state is None:
            self.store.register_item(item, rubric, len(calls))
            if self.on_item_done is not None:
                self._fresh[item.id] = (self._registered, item, rubric, [])
            self._registered += 1
        else:  # the same id again while its calls are out: its votes are only in the store
            self._fresh.pop(item.id, None)
        todo = [c for c in calls if c.key not in finished]
        self.progress.item_started(len(todo))
        if not todo:
            self.store.mark_item_done(item.id)
            self.progress.item_done()
            self._hand_on(item.id)
            return []
        self._pending[item.id] = len(todo)
        return todo

    def _serve_cached(self, todo: list[PlannedCall], requests: list[Any],
                      outcome: EngineOutcome) -> tuple[list[PlannedCall], list[Any]]:
        """Record now the calls the judges' caches answer (one lookup per judge for the item,
        no task, no slot in the window); return the calls still to make, with their requests."""
        replies: dict[int, Any] = {}
        for judge_id in {call.judge for call in todo}:
            lookup = getattr(self.judges[judge_id].judge, "cached", None)
            if lookup is None or self._stop:
                continue
            mine = [i for i, call in enumerate(todo) if call.judge == judge_id]
            for i, reply in zip(mine, lookup([requests[i] for i in mine])):
                if reply is not None:
                    replies[i] = reply
        if not replies:
            return todo, requests
        rest_calls, rest_requests = [], []
        for i, (call, request) in enumerate(zip(todo, requests)):
            reply = replies.get(i)
            if reply is None:
                rest_calls.append(call)
                rest_requests.append(request)
            else:
                self._replied(call, reply, outcome)
        return rest_calls, rest_requests

    async def _call(self, call: PlannedCall, request: Any, window: asyncio.Semaphore,
                    outcome: EngineOutcome, held: _Held | None = None, *,
                    after: asyncio.Event | None = None,
                    leads: asyncio.Event | None = None) -> None:
        """Ask ``call`` (again, in a final pass, when ``held``) and record how it ended; first
        wait for ``after`` (the reply whose cache entry it reads), and set ``leads`` once the
        reply has come (:mod:`assay.runs.cache_schedule`)."""
        passes, earlier = (held.passes, held.reply) if held is not None else (0, None)
        try:
            if after is not None:
                await after.wait()
            while True:
                try:
                    reply = await self.judges[call.judge].judge.ask(request)
                    if leads is not None:
                        leads.set()
                except Exception as exc:  # a bug below us must not lose the run
                    log.exception("judge %s raised on call %s", call.judge, call.key)
                    self._record(call, None,
                                 errors=[(None, "internal", f"{type(exc).__name__}: {exc}")])
                    return
                if earlier is not None:
                    if _refused(reply):  # the budget is spent: the failure it had stands
                        self._stop = "budget"
                        reply = earlier
                        break
                    outcome.asked_again += 1
                    reply = _with_earlier_passes(reply, earlier)
                if not self._asks_again(reply, passes):
                    break
                passes, earlier = passes + 1, reply
                if not self._sent_all:  # held until every call has been sent once
                    self._held.append(_Held(call, request, reply, passes))
                    return
            if self._replied(call, reply, outcome) and passes:
                outcome.recovered += 1
        finally:
            if leads is not None:  # a call that raised or was cancelled lets the others go
                leads.set()
            window.release()

    def _asks_again(self, reply: Any, passes: int) -> bool:
        """Whether a call that ended with ``reply`` after ``passes`` final passes gets one more."""
        return (reply.failure is not None and passes < self.final_passes and not self._stop
                and worth_asking_again(reply.failure)
                and (self._sent_all or len(self._held) < self.concurrency))

    def _replied(self, call: PlannedCall, reply: Any, outcome: EngineOutcome) -> bool:
        """Record the call's reply; True if it gave verdicts."""
        failure = reply.failure
        if _refused(reply):
            self._stop = "budget"
            return False
        outcome.calls_made += 1
        if failure is not None:
            self._record(call, reply, errors=[(None, failure.kind.value, failure.message)])
            return False
        results = self.grader.interpret(call, reply.data, reply.raw)
        verdicts = [r for r in results if isinstance(r, Verdict)]
        errors = [(r.criterion_id, "unreadable_reply", r.message)
                  for r in results if isinstance(r, ReplyError)]
        self._record(call, reply, verdicts=verdicts, errors=errors)
        return bool(verdicts)

    def _record(self, call: PlannedCall, reply: Any, *, verdicts: Sequence[Verdict] = (),
                errors: Sequence[tuple[str | None, str, str]] = ()) -> None:
        left = self._pending[call.item_id] - 1
        self._pending[call.item_id] = left
        record = CallRecord(
            key=call.key, item_id=call.item_id, judge=call.judge, criterion_ids=call.criterion_ids,
            prompt_hash=call.prompt_hash, permutations=call.perms, ok=bool(verdicts),
            raw=reply.raw if reply is not None else "",
            usage=reply.usage.as_dict() if reply is not None else {},
            cost_usd=reply.cost_usd if reply is not None else 0.0,
            latency_s=reply.latency_s if reply is not None else 0.0,
            cached=bool(reply.cached) if reply is not None else False,
            attempts=reply.attempts if reply is not None else 0,
            verdicts=verdicts, errors=errors,
            estimated_usd=reply.estimated_usd if reply is not None else 0.0,
            abandoned=reply.abandoned if reply is not None else 0)
        if self._store_error is not None:
            self._unsaved += 1
            return
        try:
            self.store.record_call(record, item_done=left == 0)
        except STORE_WRITE_ERRORS as exc:
            self._store_failed(exc)
            self._unsaved += 1 + self.store.rolled_back
            return
        self._commit_soon()
        self.progress.call_done(cached=record.cached, errors=len(errors),
                                cost_usd=record.cost_usd)
        fresh = self._fresh.get(call.item_id)
        if fresh is not None and verdicts:
            fresh[3].extend(verdicts)
        if left == 0:
            del self._pending[call.item_id]
            self.progress.item_done()
            self._hand_on(call.item_id)

    def _hand_on(self, item_id: str) -> None:
        fresh = self._fresh.pop(item_id, None)
        if fresh is not None and self.on_item_done is not None:
            self.on_item_done(*fresh)


def _refused(reply: Any) -> bool:
    """Whether the budget refused the call (it was not made)."""
    return reply.failure is not None and reply.failure.kind == "budget"  # FailureKind.BUDGET


def _with_earlier_passes(reply: Any, earlier: Any) -> Any:
    """``reply`` carrying the attempts, tokens, cost and time of the call's earlier passes."""
    return replace(reply, usage=earlier.usage + reply.usage,
                   cost_usd=earlier.cost_usd + reply.cost_usd,
                   estimated_usd=earlier.estimated_usd + reply.estimated_usd,
                   abandoned=earlier.abandoned + reply.abandoned,
                   latency_s=earlier.latency_s + reply.latency_s,
                   attempts=earlier.attempts + reply.attempts)


def judge_request(call: PlannedCall) -> Any:
    """The :class:`~assay.judges.JudgeRequest` a planned call sends."""
    from assay.judges.types import JudgeRequest

    return JudgeRequest(messages=call.messages, schema=call.schema,
                        schema_name=call.schema_name or ("verdicts" if call.per_item else "verdict"),
                        template_version=call.template_version, sample=call.sample,
                        cache_prefix=call.cache_prefix, budget=call.budget,
                        bool_field=call.bool_field)


def served_from_cache(item: Item, rubric: Rubric | None, grader: Grader,
                      judges: Sequence[JudgeSlot], cache: Any) -> bool:
    """True if every call of ``item`` has a reply in ``cache`` (then a run starting with it
    may defer its judges' preflight to the first call that leaves the cache)."""
    rubric = item.rubric or rubric
    if cache is None or not cache.reads or not cache.writes or rubric is None or not item.response:
        return False
    try:
        calls = [(slot.judge, c) for slot in judges for c in grader.plan(item, rubric, slot.id)]
    except AssayError:  # the engine reports a bad item; here it only means "not cached"
        return False
    return bool(calls) and all(cache.has(judge.cache_key(judge_request(call)))
                               for judge, call in calls)


def _max_in_flight(judge: Any) -> int:
    limiter = getattr(judge, "limiter", None)
    if limiter is not None:
        return int(limiter.max_in_flight)
    limits = getattr(getattr(judge, "config", None), "limits", None)
    return int(getattr(limits, "max_in_flight", 64))
