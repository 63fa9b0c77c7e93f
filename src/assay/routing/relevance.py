"""Router (d): one relevance rating (1-5) per criterion, kept at or above a threshold.

Health-SCORE's adaptive selection (seed 004 §2.4): its relevance prompt, one call per
(conversation, criterion), the criteria rated ``>= threshold`` selected (default 4: the paper
gives no value; 4 = "Relevant" on its scale). Calls for one query run concurrently within the
judge's limits. The conversation shown is the query, then the health memory when there is one.

Example::

    router = RelevanceRouter(Catalogue.from_criteria(bank), caller, threshold=4)
    routing = await router.route(item)      # len(bank) calls of stage "route_relevance"
    [(s.id, s.score) for s in routing.active]
"""

from __future__ import annotations

import asyncio
from typing import Any

from assay.jobs import StageCaller, messages_of
from assay.routing.base import Catalogue, Entry, Router, Selection, Trace, memory_text
from assay.routing.prompts import (
    RELEVANCE_BUDGET,
    RELEVANCE_PROMPT,
    RELEVANCE_SCHEMA,
    prompt_version,
    relevance_prompt,
)

STAGE = "route_relevance"


class RelevanceRouter(Router):
    kind = "relevance"

    def __init__(self, catalogue: Catalogue, caller: StageCaller, *, threshold: int = 4):
        super().__init__(catalogue)
        if not 1 <= threshold <= 5:
            raise ValueError(f"the relevance threshold is on the 1-5 scale, got {threshold}")
        self.caller = caller
        self.threshold = threshold

    def config(self) -> dict[str, Any]:
        return {**super().config(), "model": self.caller.judge.id, "threshold": self.threshold,
                "prompt": prompt_version(RELEVANCE_PROMPT)}

    async def select(self, query, eligible: list[Entry], trace: Trace) -> list[Selection]:
        conversation = "\n\n".join(f"{m.role}: {m.content}" for m in query.messages)
        memory = memory_text(query)
        if memory:
            conversation += f"\n\nuser health memory:\n{memory}"

        async def rate(entry: Entry) -> tuple[Entry, int, str]:
            data = await self.caller.ask(
                STAGE, messages_of(None, relevance_prompt(conversation, entry.text)),
                RELEVANCE_SCHEMA, item_id=query.id, budget=RELEVANCE_BUDGET)
            return entry, int(data["score"]), str(data.get("justification_short", ""))

        # Every rating finishes (and is stored) before a failure is raised, so that a retry of
        # this prompt asks again only for the ratings that failed.
        outcomes = await asyncio.gather(*(rate(e) for e in eligible), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        rated = [o for o in outcomes if not isinstance(o, BaseException)]
        trace.calls += len(rated)
        trace.details["scores"] = {e.id: score for e, score, _ in rated}
        return [Selection(id=e.id, reason=why, score=float(score))
                for e, score, why in rated if score >= self.threshold]
