"""Asking a judge for one stage of a pipeline, with the call traced in a :class:`CallStore`.

:meth:`StageCaller.ask` is the one way a model pipeline (rubric generation, routing, CIA, RAG
metrics, ...) calls a model. The request goes through the judges layer (cache, limits,
retries, re-asks of a malformed reply, cost, budget); the call is stored with its key, so a
resumed job gets a finished call back from the store without asking again, and a call identical
to one in flight waits for it instead of sending the same request twice (so the store's calls
and cost are every request sent). A call that still fails raises :class:`StageError`, naming
the stage, the item and why, after its trace is stored.

Example:
    >>> import tempfile, pathlib
    >>> from assay.judges import make_judge, run_sync
    >>> from assay.testing import FakeJudgeServer
    >>> schema = {"type": "object", "required": ["queries"],
    ...           "properties": {"queries": {"type": "array", "items": {"type": "string"}}}}
    >>> store = CallStore.open(pathlib.Path(tempfile.mkdtemp()) / "calls.sqlite")
    >>> with FakeJudgeServer.run_in_thread(stages={"route": {"queries": ["aspirin"]}}) as server:
    ...     judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    ...     caller = StageCaller(judge, store)
    ...     data = run_sync(caller.ask("route", [{"role": "user", "content": "q"}], schema,
    ...                                item_id="q1"))
    ...     run_sync(judge.aclose())
    >>> data, [c.stage for c in store.calls("q1")]
    ({'queries': ['aspirin']}, ['route'])
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

import orjson

from assay.errors import AssayError
from assay.jobs.store import CallStore, StageCall
from assay.judges.completion import CompletionBudget
from assay.judges.judge import Judge
from assay.judges.secrets import redact_data
from assay.judges.types import FailureKind, JudgeRequest
from assay.limits import MAX_PROMPT_CHARS, prompt_chars


class StageError(AssayError):
    """A stage call that failed after the judges layer's retries and re-asks; ``kind`` is the
    judge's :class:`~assay.judges.FailureKind` of it.

    A pipeline takes another path on a stage error only when the model :attr:`refused`: every
    other failure (transport, timeout, 429, 5xx, a reply still unparsed, the budget) is the
    endpoint's trouble, not the model's answer, so it fails the item and a resumed job asks the
    call again. A fault never turns into an output that a clean run would not give.
    """

    def __init__(self, stage: str, item_id: str, reason: str, kind: FailureKind | None = None,
                 raw: str = ""):
        self.stage, self.item_id, self.reason, self.kind = stage, item_id, reason, kind
        self.raw = raw  # the last reply's text (redacted), for a stage that can read it anyway
        super().__init__(f"item {item_id!r}: stage {stage!r}: {reason}")

    @property
    def refused(self) -> bool:
        """The model refused to answer: its answer, which asking again would not change."""
        return self.kind is FailureKind.REFUSAL

    @property
    def unreadable(self) -> bool:
        """The model answered, but its reply still did not parse or fit the schema after the
        re-asks: a deterministic answer (at temperature 0 it would not parse on resume either),
        not a transport fault. A stage with a documented fallback for it may take it."""
        return self.kind in (FailureKind.UNPARSEABLE, FailureKind.SCHEMA_MISMATCH)


class StageCaller:
    """Traced, resumable stage calls to one judge. ``model`` names it in provenance records.

    ``via`` sends the calls elsewhere while ``judge`` still keys and names them: e.g. a
    :class:`~assay.distributed.RemoteJudge` of Ray workers (``--executor ray``), so a job's
    traces and resume are the same whichever executor made the calls.
    """

    def __init__(self, judge: Judge, store: CallStore | None, *, via: Any = None):
        # store=None: a store is attached before the first call (routing points the router's
        # caller at the routing job's store once that job is open).
        self.judge = judge
        self.store = store
        self._send = via if via is not None else judge
        if store is not None:  # a resumed job: its attempt timeouts start fitted to its replies
            judge.timeouts.seed(store.reply_latencies(judge.id))
            self._record_preflight()

    @property
    def model(self) -> str:
        return self.judge.model

    def _record_preflight(self) -> None:
        """Count the judge's preflight requests not yet recorded in the job's totals: those
        made before this caller, and those made later (a check deferred to the first call, a
        local server's own question, a store attached after the caller was made)."""
        if self.store is not None and self.judge.preflight_pending:
            self.store.add_preflight(self.judge.take_preflight().as_dict())

    def call_key(self, stage: str, request: JudgeRequest) -> str:
        """The stored key of a call: its stage and the judge's cache key of the request."""
        return hashlib.sha256(f"{stage}\x00{self.judge.cache_key(request)}".encode()).hexdigest()

    async def ask(
        self,
        stage: str,
        messages: Sequence[dict[str, Any]],
        schema: dict[str, Any] | None,
        *,
        item_id: str,
        template_version: str = "",
        budget: CompletionBudget | None = None,
    ) -> dict[str, Any]:
        """The parsed, schema-valid reply of ``stage`` for ``item_id``; raises :class:`StageError`.

        The schema is sent under the name ``stage`` (the fake judge scripts replies by it);
        ``budget``: the completion tokens the stage's reply needs and their cap (default:
        :data:`~assay.judges.completion.DEFAULT_BUDGET`).
        """
        return await self._traced(stage, JudgeRequest(tuple(messages), schema, stage,
                                                      template_version, budget=budget), item_id)

    async def answer(
        self, stage: str, messages: Sequence[dict[str, Any]], *, item_id: str, sample: int = 0,
        budget: CompletionBudget | None = None, stored: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A free-text answer (the model under test): ``{"text", "finish_reason", "reasoning"}``
        (see :mod:`assay.judges.free_text`); sample ``k`` of the same messages is its own call.
        ``budget``: its completion tokens (default: the judge's ``max_tokens``, if any).
        ``stored``: the messages as the trace keeps them, already redacted (the samples of one
        item share them: scrubbed once, not once per sample). Raises :class:`StageError` as
        :meth:`ask` does."""
        request = JudgeRequest(tuple(messages), None, stage, text=True, sample=sample,
                               budget=budget)
        return await self._traced(stage, request, item_id, stored)

    async def _traced(self, stage: str, request: JudgeRequest, item_id: str,
                      stored_messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        key = self.call_key(stage, request)
        if self.store is None:
            raise RuntimeError(f"stage {stage!r}: the caller has no call store attached")
        size = prompt_chars(request.messages)
        if size > MAX_PROMPT_CHARS:  # the cap of judge prompts holds for every stage's prompt
            raise StageError(stage, item_id, f"a prompt of {size:,} characters, over the limit "
                             f"of {MAX_PROMPT_CHARS:,}: not sent")
        stored = self.store.call(key)
        if stored is not None and stored.ok and stored.data is not None:
            return stored.data
        running = self.store.in_flight.get(key)
        if running is not None:  # the same request is being made now: share its outcome
            return dict(await asyncio.shield(running))
        future = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        self.store.in_flight[key] = future
        try:
            data = await self._call(stage, request, item_id, key, stored_messages)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
            raise
        else:
            future.set_result(data)
            return data
        finally:
            del self.store.in_flight[key]

    async def _call(self, stage: str, request: JudgeRequest, item_id: str, key: str,
                    stored_messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        assert self.store is not None
        messages = request.messages
        reply = await self._send.ask(request)
        failure = None if reply.ok else str(reply.failure or "no reply")
        self.store.put_call(StageCall(
            key=key, stage=stage, item_id=item_id, judge=self.judge.id, model=self.judge.model,
            messages=stored_messages if stored_messages is not None
            else redact_data(list(messages)),
            data=reply.data, raw=reply.raw or "",  # the judge has already scrubbed its reply
            prompt_tokens=reply.usage.prompt_tokens,
            completion_tokens=reply.usage.completion_tokens, cost_usd=reply.cost_usd,
            latency_s=reply.latency_s, cached=reply.cached, attempts=reply.attempts,
            failure=failure, estimated_usd=reply.estimated_usd, abandoned=reply.abandoned))
        self._record_preflight()
        if failure is not None:
            raise StageError(stage, item_id, failure,
                             reply.failure.kind if reply.failure is not None else None,
                             reply.raw or "")
        assert reply.data is not None  # no failure: the reply is ok, so it has data
        return reply.data


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a shared call's failure as seen (it is raised to its own caller already)."""
    if not future.cancelled():
        future.exception()


def messages_of(system: str | None, user: str) -> list[dict[str, Any]]:
    """The usual two-message prompt: an optional system message, then the user's."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    out.append({"role": "user", "content": user})
    return out


def stable_json(value: Any) -> str:
    """Sorted-key JSON, for putting structured inputs into prompts byte-identically."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode()
