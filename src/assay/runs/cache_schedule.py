"""Prompt caching as the providers bill it: per item, one call of a cacheable head first, the
others once its reply has come.

A provider's cache entry is readable only once the response of the request that wrote it has
begun (Anthropic: "If you need cache hits for parallel requests, wait for the first response
before sending subsequent requests"; OpenAI caches a prefix after processing it), so calls
sent together all miss, and Anthropic bills each of them the cache write. For each group of
calls sharing a head (the same item, judge and template: ``PlannedCall.cache_prefix``) and a
reply schema (both providers cache the tools or the response format as the start of the
prompt: a multi-choice criterion's schema lists its own options, so its head is its own) the
judge says whether caching it pays (:meth:`assay.judges.Judge.cache_plan`: the head at or over
the model's minimum, enough calls to repay the write, caching on); if it does, the group's first
call goes out alone and the others wait for its reply, their heads marked; if not, every call
of the group goes out at once, unmarked.

A waiting call keeps its place in the engine's window (the memory stays bounded); with the
engine's window at four times the requests in flight, the calls sent while others wait still
fill every slot.

Example:
    >>> from assay.grading.grader import Grader, GradingConfig
    >>> from assay.item import Item
    >>> from assay.rubric import Rubric
    >>> from assay.runs.engine import judge_request
    >>> class Judge:   # caches any head of 10+ characters shared by 2+ calls
    ...     def cache_plan(self, head_chars, sharing):
    ...         from assay.judges.prompt_caching import CachePlan
    ...         return CachePlan() if head_chars >= 10 and sharing >= 2 else None
    >>> rubric = Rubric(criteria=[{"id": "a", "text": "Says A."}, {"id": "b", "text": "Says B."}])
    >>> calls = Grader(GradingConfig()).plan(Item(id="q", prompt="Hi?", response="Hi."), rubric, "j")
    >>> first, second = schedule(calls, [judge_request(c) for c in calls], {"j": Judge()})
    >>> first.leads is second.after is not None, first.after, second.leads
    (True, None, None)
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from assay.grading.grader import PlannedCall


@dataclass
class Scheduled:
    """A call with the request it sends: ``after`` is set once the reply it waits for has come
    (None: send at once); ``leads`` is set by this call once its own reply has come."""

    call: PlannedCall
    request: Any  # assay.judges.JudgeRequest
    after: asyncio.Event | None = None
    leads: asyncio.Event | None = None


def schedule(calls: Sequence[PlannedCall], requests: Sequence[Any],
             judges: Mapping[str, Any]) -> list[Scheduled]:
    """``calls`` (with their ``requests``, in order) as sent: heads marked where caching them
    pays, and the calls of such a head after the first (see the module doc)."""
    out = [Scheduled(call, request) for call, request in zip(calls, requests)]
    groups: dict[tuple[str, str, str, int, bytes], list[Scheduled]] = {}
    for one in out:
        call = one.call
        if call.cache_prefix > 0:
            schema = orjson.dumps(call.schema, option=orjson.OPT_SORT_KEYS)
            key = (call.judge, call.item_id, call.template_version, call.cache_prefix, schema)
            groups.setdefault(key, []).append(one)
    for (judge_id, _, _, head, _), members in groups.items():
        plan_for = getattr(judges[judge_id], "cache_plan", None)
        plan = plan_for(head, len(members)) if plan_for is not None else None
        if plan is None:
            for one in members:
                one.request = one.request.with_cache(0)
            continue
        replied = asyncio.Event()
        for n, one in enumerate(members):
            one.request = one.request.with_cache(head, plan.ttl)
            if n == 0:
                one.leads = replied
            else:
                one.after = replied
    return out
