"""Conversational Faithfulness (seed 002 §3.1): the share of an answer's information-containing
sentences that are grounded in the retrieved context and the conversation.

1. Split the answer into its own sentences (:func:`~assay.rag.sentences.split_sentences`).
2. Categorise them (Listing 2): ACKNOWLEDGEMENTS, QUESTIONS, CONTAINING_INFORMATION.
   Acknowledgements and questions are kept in the record but left out of both numerator and
   denominator, so empathy and follow-up questions are never penalised.
3. Ground each informative sentence (Listing 1) against the context (plus earlier turns).
4. ``CF = grounded informative sentences / informative sentences``.

Both replies name sentences by their text; they are matched to the answer's sentences with
:mod:`assay.rag.matching` (a dropped full stop, curly quotes, changed spacing or dashes do not
matter), and grounding verdicts go to the sentence they repeat, whatever their order. A
sentence that the categorisation does not name is asked about once more, alone with the
others it missed (the same Listing 2, quoting only them; both calls are traced in the job's
store and ``reasked`` lists the sentences of the second). A sentence that is still unnamed, or
an informative one no grounding verdict names, is never guessed into a category or a verdict:
CF is undefined (None) for that answer, ``reason`` lists the sentences and
``unmatched_sentences`` keeps them (and the Figure 11 diagnosis is "undetermined").

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

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.rag import prompts, schemas
from assay.rag.items import Exchange
from assay.rag.matching import match, match_in_order
from assay.rag.sentences import split_sentences

Category = Literal["acknowledgement", "question", "information"]
EmptyPolicy = Literal["zero", "one", "undefined"]

_CATEGORY_OF: dict[str, Category] = {
    "ACKNOWLEDGEMENTS": "acknowledgement", "QUESTIONS": "question",
    "CONTAINING_INFORMATION": "information"}


class SentenceJudgement(BaseModel):
    """One sentence of the answer: its category, and for an informative one its verdict.
    ``category`` is None when the judge's categorisation names no such sentence."""

    text: str
    category: Category | None
    note: str | None = None
    grounded: bool | None = None
    explanation: str | None = None


class FaithfulnessResult(BaseModel):
    """CF of one answer with every sentence's judgement.

    ``unmatched_sentences``: answer sentences the judge's replies do not name (no category, or
    an informative one with no verdict); any makes ``value`` None, with ``reason`` listing them.
    ``unmatched_echoes``: strings the judge wrote that name no sentence (kept for the record).
    """

    value: float | None
    informative: int
    grounded: int
    reason: str | None = None
    sentences: list[SentenceJudgement]
    unmatched_sentences: list[str] = Field(default_factory=list)
    unmatched_echoes: list[str] = Field(default_factory=list)
    reasked: list[str] = Field(default_factory=list)
    """Sentences the first categorisation did not name, sent in a second one (quoting them
    alone); those it named have a note saying so."""


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


def categorise(sentences: Sequence[str], reply: dict[str, Any]
               ) -> list[tuple[Category | None, str | None]]:
    """Each sentence's category from a Listing 2 reply, with a note when the reply was unclear.

    The reply lists sentence strings; they are matched to the input sentences by
    :func:`~assay.rag.matching.match` (case, spacing, punctuation, quote style and dashes do
    not matter). A sentence the judge put under several categories counts as
    information-containing (the conservative choice: it gets checked against the context). A
    sentence no listed string names gets no category (None): CF cannot be computed from the
    reply, and the caller says so rather than guess.
    """
    echoes = [(name, text) for name in schemas.CATEGORIES for text in reply.get(name, [])]
    placed: list[set[Category]] = [set() for _ in sentences]
    for (name, _), named in zip(echoes, match(sentences, [t for _, t in echoes])):
        for index in named:
            placed[index].add(_CATEGORY_OF[name])
    out: list[tuple[Category | None, str | None]] = []
    for found in placed:
        if len(found) == 1:
            out.append((next(iter(found)), None))
        elif not found:
            out.append((None, "no string in the judge's categorisation names this sentence"))
        else:
            out.append(("information", (f"put under {len(found)} categories: treated as "
                                        "informative")))
    return out


def unmatched_echoes(sentences: Sequence[str], reply: dict[str, Any]) -> list[str]:
    """The strings of a Listing 2 reply that name none of ``sentences`` (e.g. rewritten ones)."""
    echoes = [text for name in schemas.CATEGORIES for text in reply.get(name, [])]
    return [e for e, found in zip(echoes, match(sentences, echoes)) if not found]


def _unmatched_reason(sentences: Sequence[str], what: str) -> str:
    listed = "; ".join(repr(s) for s in sentences)
    return (f"CF undefined: {len(sentences)} answer sentence(s) not matched to the judge's "
            f"{what}: {listed}")


async def conversational_faithfulness(
    caller: Any, exchange: Exchange, *, item_id: str, empty: EmptyPolicy = "zero",
    templates: Mapping[str, str] | None = None,
) -> FaithfulnessResult:
    """CF of one exchange: categorisation, then grounding of the informative sentences
    (``templates["categorisation"]`` / ``["grounding"]`` replace Listings 2 / 1)."""
    templates = templates or {}
    sentences = split_sentences(exchange.answer)
    if not sentences:
        value, reason = cf_ratio(0, 0, empty)
        return FaithfulnessResult(value=value, informative=0, grounded=0, reason=reason,
                                  sentences=[])
    template = templates.get("categorisation", prompts.LISTING_2_CATEGORISATION)
    reply = await _categorisation(caller, sentences, template, item_id)
    judged = [SentenceJudgement(text=s, category=c, note=n)
              for s, (c, n) in zip(sentences, categorise(sentences, reply))]
    echoes = unmatched_echoes(sentences, reply)
    missed = [j for j in judged if j.category is None]
    if missed:  # ask once more, for the sentences it did not categorise only
        again = await _categorisation(caller, [j.text for j in missed], template, item_id)
        for j, (category, note) in zip(missed, categorise([j.text for j in missed], again)):
            if category is not None:
                j.category = category
                j.note = "categorised when asked again" + (f"; {note}" if note else "")
        echoes = list(dict.fromkeys(echoes + unmatched_echoes(sentences, again)))
    reasked = [j.text for j in missed]
    uncategorised = [j.text for j in judged if j.category is None]
    informative = [j for j in judged if j.category == "information"]
    if uncategorised:  # no grounding call: CF cannot be computed from this categorisation
        return FaithfulnessResult(
            value=None, informative=len(informative), grounded=0, sentences=judged,
            reason=_unmatched_reason(uncategorised, "categorisation, asked twice"),
            unmatched_sentences=uncategorised, unmatched_echoes=echoes, reasked=reasked)
    if informative:
        context = prompts.grounding_context(exchange.context, exchange.transcript())
        texts = [j.text for j in informative]
        prompt = prompts.grounding_prompt(
            exchange.question, context, texts,
            template=templates.get("grounding", prompts.LISTING_1_GROUNDING))
        verdicts = await caller.ask(schemas.GROUNDING, [{"role": "user", "content": prompt}],
                                    schemas.grounding_schema(len(informative)), item_id=item_id,
                                    template_version=prompts.PROMPT_VERSION,
                                    budget=schemas.verdicts_budget(len(informative)))
        # by the statement each verdict repeats, not by its position in the list
        statements = [v["statement"] for v in verdicts["answer"]]
        for verdict, index in zip(verdicts["answer"], match_in_order(texts, statements)):
            if index is None:
                echoes.append(verdict["statement"])
                continue
            informative[index].grounded = verdict["verdict"] == "Yes"
            informative[index].explanation = verdict["explanation"]
    grounded = sum(bool(j.grounded) for j in informative)
    unverified = [j.text for j in informative if j.grounded is None]
    if unverified:
        return FaithfulnessResult(
            value=None, informative=len(informative), grounded=grounded, sentences=judged,
            reason=_unmatched_reason(unverified, "grounding verdicts"),
            unmatched_sentences=unverified, unmatched_echoes=echoes, reasked=reasked)
    value, reason = cf_ratio(grounded, len(informative), empty)
    return FaithfulnessResult(value=value, informative=len(informative), grounded=grounded,
                              reason=reason, sentences=judged, unmatched_echoes=echoes,
                              reasked=reasked)


async def _categorisation(caller: Any, sentences: Sequence[str], template: str,
                          item_id: str) -> dict[str, Any]:
    """One Listing 2 call over ``sentences`` (all the answer's, or those a first call missed)."""
    return await caller.ask(schemas.CATEGORISE,
                            [{"role": "user", "content": prompts.categorisation_prompt(
                                sentences, template=template)}],
                            schemas.categorise_schema(len(sentences)), item_id=item_id,
                            template_version=prompts.PROMPT_VERSION,
                            budget=schemas.sentences_budget(len(sentences)))
