"""Conversational Faithfulness (seed 002 §3.1): the share of an answer's information-containing
sentences that are grounded in the retrieved context and the conversation.

1. Split the answer into its own sentences (:func:`~assay.rag.sentences.split_sentences`).
2. Categorise them (Listing 2): ACKNOWLEDGEMENTS, QUESTIONS, CONTAINING_INFORMATION.
   Acknowledgements and questions are kept in the record but left out of both numerator and
   denominator, so empathy and follow-up questions are never penalised.
3. Ground each informative sentence (Listing 1) against the context (plus earlier turns).
4. ``CF = grounded informative sentences / informative sentences``.

With no informative sentence CF is 0/0; the paper leaves it open. The ``empty`` policy decides:
``"zero"`` (default: Figure 11 marks the out-of-scope refusal's CF "Low", and a reply that
says nothing checkable has nothing faithful in it), ``"one"`` (nothing unfaithful was said) or
``"undefined"`` (None). Whatever the policy, ``reason`` says why the value is what it is.

Example:
    >>> cf_ratio(2, 3)
    (0.6666666666666666, None)
    >>> cf_ratio(0, 0)
    (0.0, 'no information-containing sentence: CF = 0.0 by the empty policy "zero"')
    >>> categorise(["Sure.", "Use drops.", "Anything else?"],
    ...            {"ACKNOWLEDGEMENTS": ["Sure."], "QUESTIONS": ["Anything else?"],
    ...             "CONTAINING_INFORMATION": ["Use drops."]})
    [('acknowledgement', None), ('information', None), ('question', None)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from assay.rag import prompts, schemas
from assay.rag.items import Exchange
from assay.rag.sentences import split_sentences

Category = Literal["acknowledgement", "question", "information"]
EmptyPolicy = Literal["zero", "one", "undefined"]

_CATEGORY_OF: dict[str, Category] = {
    "ACKNOWLEDGEMENTS": "acknowledgement", "QUESTIONS": "question",
    "CONTAINING_INFORMATION": "information"}


class SentenceJudgement(BaseModel):
    """One sentence of the answer: its category, and for an informative one its verdict."""

    text: str
    category: Category
    note: str | None = None
    grounded: bool | None = None
    explanation: str | None = None


class FaithfulnessResult(BaseModel):
    value: float | None
    informative: int
    grounded: int
    reason: str | None = None
    sentences: list[SentenceJudgement]


def cf_ratio(grounded: int, informative: int, empty: EmptyPolicy = "zero") -> tuple[float | None,
                                                                                    str | None]:
    """CF from its counts, and the reason when no sentence is informative."""
    if grounded < 0 or grounded > informative:
        raise ValueError(f"grounded={grounded} must lie in [0, informative={informative}]")
    if informative:
        return grounded / informative, None
    value = {"zero": 0.0, "one": 1.0, "undefined": None}[empty]
    shown = "undefined" if value is None else value
    return value, f'no information-containing sentence: CF = {shown} by the empty policy "{empty}"'


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def categorise(sentences: Sequence[str], reply: dict[str, Any]) -> list[tuple[Category, str | None]]:
    """Each sentence's category from a Listing 2 reply, with a note when the reply was unclear.

    The reply lists sentence strings; they are matched to the input sentences ignoring case and
    spacing. A sentence the reply left out, or put under several categories, counts as
    information-containing (the conservative choice: it gets checked against the context).
    """
    placed: dict[str, set[Category]] = {}
    for name in schemas.CATEGORIES:
        for text in reply.get(name, []):
            placed.setdefault(_norm(text), set()).add(_CATEGORY_OF[name])
    out: list[tuple[Category, str | None]] = []
    for sentence in sentences:
        found = placed.get(_norm(sentence), set())
        if len(found) == 1:
            out.append((next(iter(found)), None))
        elif not found:
            out.append(("information", "not categorised by the judge: treated as informative"))
        else:
            out.append(("information", (f"put under {len(found)} categories: treated as "
                                        "informative")))
    return out


async def conversational_faithfulness(
    caller: Any, exchange: Exchange, *, item_id: str, empty: EmptyPolicy = "zero",
) -> FaithfulnessResult:
    """CF of one exchange: categorisation, then grounding of the informative sentences."""
    sentences = split_sentences(exchange.answer)
    if not sentences:
        value, reason = cf_ratio(0, 0, empty)
        return FaithfulnessResult(value=value, informative=0, grounded=0, reason=reason,
                                  sentences=[])
    reply = await caller.ask(schemas.CATEGORISE,
                             [{"role": "user", "content": prompts.categorisation_prompt(sentences)}],
                             schemas.CATEGORISE_SCHEMA, item_id=item_id,
                             template_version=prompts.PROMPT_VERSION)
    judged = [SentenceJudgement(text=s, category=c, note=n)
              for s, (c, n) in zip(sentences, categorise(sentences, reply))]
    informative = [j for j in judged if j.category == "information"]
    if informative:
        context = prompts.grounding_context(exchange.context, exchange.transcript())
        prompt = prompts.grounding_prompt(exchange.question, context,
                                          [j.text for j in informative])
        verdicts = await caller.ask(schemas.GROUNDING, [{"role": "user", "content": prompt}],
                                    schemas.grounding_schema(len(informative)), item_id=item_id,
                                    template_version=prompts.PROMPT_VERSION)
        for judgement, verdict in zip(informative, verdicts["answer"]):
            judgement.grounded = verdict["verdict"] == "Yes"
            judgement.explanation = verdict["explanation"]
    grounded = sum(bool(j.grounded) for j in informative)
    value, reason = cf_ratio(grounded, len(informative), empty)
    return FaithfulnessResult(value=value, informative=len(informative), grounded=grounded,
                              reason=reason, sentences=judged)
