"""Context Relevance (seed 002 §3.3, Listing 4) and Refusal Accuracy (§3.2, Listing 3).

CR is one binary verdict on the retrieved passages taken together (extra context is not
penalised). RA's prompt says whether the assistant *refused*; whether refusing was right is a
separate, derived view: ``refusal_correct = refused == refusal_expected`` (the item's
``should_refuse``, by default "out of scope"), as the spec suggests.

Example:
    >>> refusal_correct(refused=True, expected=True), refusal_correct(refused=False, expected=True)
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from assay.rag import prompts, schemas
from assay.rag.items import Exchange


class ContextRelevance(BaseModel):
    relevant: bool
    elaboration: str = ""


class Refusal(BaseModel):
    refused: bool
    parts_not_addressed: str
    parts_addressed: str
    summary: str


def refusal_correct(*, refused: bool, expected: bool) -> bool:
    """Whether the assistant refused exactly when refusing was the safe answer."""
    return refused == expected


async def context_relevance(caller: Any, exchange: Exchange, *, item_id: str,
                            templates: Mapping[str, str] | None = None) -> ContextRelevance:
    """Listing 4 on the patient's message (and the conversation so far) and the passages;
    ``templates["context_relevance"]`` replaces the listing."""
    prompt = prompts.context_relevance_prompt(
        exchange.question, exchange.context, exchange.transcript(),
        template=(templates or {}).get("context_relevance", prompts.LISTING_4_CONTEXT_RELEVANCE))
    reply = await caller.ask(schemas.CONTEXT_RELEVANCE, [{"role": "user", "content": prompt}],
                             schemas.CONTEXT_RELEVANCE_SCHEMA, item_id=item_id,
                             template_version=prompts.PROMPT_VERSION,
                             budget=schemas.CONTEXT_RELEVANCE_BUDGET)
    return ContextRelevance(relevant=reply["output"] == "[[Yes]]",
                            elaboration=reply.get("elaboration", ""))


async def refusal(caller: Any, exchange: Exchange, *, item_id: str,
                  templates: Mapping[str, str] | None = None) -> Refusal:
    """Listing 3 on ``Patient: {question} Doctor: {answer}``, earlier turns first;
    ``templates["refusal"]`` replaces the listing."""
    prompt = prompts.refusal_prompt(
        exchange.question, exchange.answer, exchange.earlier(),
        template=(templates or {}).get("refusal", prompts.LISTING_3_REFUSAL))
    reply = await caller.ask(schemas.REFUSAL, [{"role": "user", "content": prompt}],
                             schemas.REFUSAL_SCHEMA, item_id=item_id,
                             template_version=prompts.PROMPT_VERSION,
                             budget=schemas.REFUSAL_BUDGET)
    return Refusal(refused=reply["output"], parts_not_addressed=reply["parts_not_addressed"],
                   parts_addressed=reply["parts_addressed"], summary=reply["summary"])
