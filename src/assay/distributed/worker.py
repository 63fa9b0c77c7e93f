"""The Ray actor that makes judge calls: its own judges (connection pools, limits, retries) and
its own handle on the shared response cache. It never sees the run store.

Requests and replies cross process boundaries as plain tuples (cheap to pickle, no class
identity to agree on between driver and worker):

* a request is ``(messages, schema, schema_name, template_version, sample, budget,
  bool_field)``;
* a reply is :func:`reply_to_wire` of a :class:`~assay.judges.types.JudgeReply`.

Example (without Ray: the class is plain Python until the pool wraps it with ``ray.remote``):
    >>> from assay.judges.types import JudgeReply, Usage
    >>> reply = JudgeReply("j", {"verdict": "MET"}, '{"verdict": "MET"}', Usage(3, 1), 0.5)
    >>> reply_from_wire(reply_to_wire(reply)) == reply
    True
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from assay.judges.completion import CompletionBudget
from assay.judges.types import Failure, FailureKind, JudgeReply, JudgeRequest, Usage

WireRequest = tuple[tuple[dict[str, Any], ...], dict[str, Any] | None, str, str, int,
                    CompletionBudget | None, str | None, bool, int]
WireReply = tuple


def request_to_wire(request: JudgeRequest) -> WireRequest:
    """A request as sent to a worker: every field that shapes the request or its reply (a
    free-text answer of a model under test stays one: ``text``)."""
    return (request.messages, request.schema, request.schema_name, request.template_version,
            request.sample, request.budget, request.bool_field, request.text,
            request.cache_prefix)


def reply_to_wire(reply: JudgeReply) -> WireReply:
    u, f = reply.usage, reply.failure
    failure = None if f is None else (f.kind.value, f.message, f.status)
    return (reply.judge, reply.data, reply.raw,
            (u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.reasoning_tokens),
            reply.cost_usd, reply.latency_s, reply.cached, reply.attempts, failure,
            reply.estimated_usd, reply.abandoned)


def reply_from_wire(wire: WireReply) -> JudgeReply:
    judge, data, raw, usage, cost, latency, cached, attempts, failure, estimated, abandoned = wire
    return JudgeReply(judge, data, raw, Usage(*usage), cost, latency, cached, attempts,
                      None if failure is None else Failure(FailureKind(failure[0]), *failure[1:]),
                      estimated, abandoned)


class JudgeWorker:
    """One worker: ``ask_batch(judge_id, requests)`` runs a shard of calls concurrently within
    this worker's limits and returns their replies in order."""

    def __init__(self, configs: list[Any], cache_path: str | None):
        from assay.judges import make_judge

        cache = None
        if cache_path:
            from assay.judges.cache import ResponseCache

            cache = ResponseCache(cache_path)
        self._cache = cache
        self._judges = {c.judge_id: make_judge(c, cache=cache) for c in configs}

    async def ask_batch(self, judge_id: str, requests: list[WireRequest]) -> list[WireReply]:
        judge = self._judges[judge_id]
        replies = await asyncio.gather(*(judge.ask(JudgeRequest(
            *r[:4], sample=r[4], budget=r[5], bool_field=r[6], text=r[7], cache_prefix=r[8]))
            for r in requests))
        if self._cache is not None:
            self._cache.flush()  # a worker killed later keeps what it has answered
        return [reply_to_wire(r) for r in replies]

    def pid(self) -> int:
        return os.getpid()

    async def close(self) -> None:
        for judge in self._judges.values():
            await judge.aclose()
        if self._cache is not None:
            self._cache.close()
