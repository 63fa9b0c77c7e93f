"""RAGAS-style baselines as seed 002 Appendix A.1 defines them, on the judges layer.

* Faithfulness ``F = |V| / |S|``: an LLM rewrites question + answer into statements ``S``, then
  judges which are supported by the context (``V``). No statement: undefined, with a reason.
* Context relevance ``= relevant context sentences / total context sentences``: an LLM extracts
  the context sentences that help answer the question ("Insufficient Information" = none); the
  context is split with the same sentence splitter as CF. Unlike ASTRID's CR it penalises
  extra context, which is the point of comparing them.

The ``ragas`` package is not used: these are the published definitions and prompts, run through
the same judges layer (cache, limits, cost, traces) as the ASTRID metrics.

Example:
    >>> ragas_faithfulness_ratio(2, 3)
    (0.6666666666666666, None)
    >>> ragas_context_relevance_ratio(1, 4)
    (0.25, None)
    >>> ragas_faithfulness_ratio(0, 0)[1]
    'the judge extracted no statement from the answer'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from assay.rag import prompts, schemas
from assay.rag.items import Exchange
from assay.rag.sentences import split_sentences

INSUFFICIENT = "insufficient information"


class RagasFaithfulness(BaseModel):
    value: float | None
    reason: str | None = None
    statements: list[str]
    supported: list[bool]


class RagasContextRelevance(BaseModel):
    value: float | None
    reason: str | None = None
    context_sentences: int
    extracted: list[str]


def ragas_faithfulness_ratio(supported: int, statements: int) -> tuple[float | None, str | None]:
    """``|V| / |S|``; undefined (None, reason) when there is no statement."""
    if not statements:
        return None, "the judge extracted no statement from the answer"
    return supported / statements, None


def ragas_context_relevance_ratio(relevant: int, total: int) -> tuple[float | None, str | None]:
    """Relevant context sentences over all context sentences (at most 1)."""
    if not total:
        return None, "no context was retrieved"
    return min(relevant, total) / total, None


def count_extracted(extracted: list[str]) -> int:
    """How many context sentences the judge extracted: "Insufficient Information" counts 0, and
    a string holding several sentences counts each."""
    kept = [e for e in extracted if e.strip() and INSUFFICIENT not in e.strip().casefold()]
    return sum(len(split_sentences(e)) for e in kept)


async def ragas_faithfulness(caller: Any, exchange: Exchange, *, item_id: str) -> RagasFaithfulness:
    """Statement extraction from question + answer, then one verdict per statement."""
    reply = await caller.ask(
        schemas.RAGAS_STATEMENTS,
        [{"role": "user", "content": prompts.ragas_statements_prompt(exchange.question,
                                                                      exchange.answer)}],
        schemas.RAGAS_STATEMENTS_SCHEMA, item_id=item_id, template_version=prompts.PROMPT_VERSION,
        budget=schemas.RAGAS_STATEMENTS_BUDGET)
    statements = [s.strip() for s in reply["statements"] if s.strip()]
    supported: list[bool] = []
    if statements:
        verdicts = await caller.ask(
            schemas.RAGAS_VERDICTS,
            [{"role": "user", "content": prompts.ragas_verification_prompt(exchange.context,
                                                                            statements)}],
            schemas.ragas_verdicts_schema(len(statements)), item_id=item_id,
            template_version=prompts.PROMPT_VERSION, budget=schemas.verdicts_budget(len(statements)))
        supported = [v["verdict"] == "Yes" for v in verdicts["verdicts"]]
    value, reason = ragas_faithfulness_ratio(sum(supported), len(statements))
    return RagasFaithfulness(value=value, reason=reason, statements=statements,
                             supported=supported)


async def ragas_context_relevance(caller: Any, exchange: Exchange, *,
                                  item_id: str) -> RagasContextRelevance:
    """Sentence extraction from the context, then the fraction of context sentences kept."""
    total = sum(len(split_sentences(p)) for p in exchange.passages)
    if not total:
        value, reason = ragas_context_relevance_ratio(0, 0)
        return RagasContextRelevance(value=value, reason=reason, context_sentences=0, extracted=[])
    reply = await caller.ask(
        schemas.RAGAS_CONTEXT,
        [{"role": "user", "content": prompts.ragas_context_prompt(exchange.question,
                                                                   exchange.context)}],
        schemas.RAGAS_CONTEXT_SCHEMA, item_id=item_id, template_version=prompts.PROMPT_VERSION,
        budget=schemas.RAGAS_CONTEXT_BUDGET)
    value, reason = ragas_context_relevance_ratio(count_extracted(reply["sentences"]), total)
    return RagasContextRelevance(value=value, reason=reason, context_sentences=total,
                                 extracted=reply["sentences"])
