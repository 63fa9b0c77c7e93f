"""Scripted fake-judge replies for RAG items: what a judge "decides" for each stage of each item,
written as a stage script for :class:`assay.testing.FakeJudgeServer` (``assay fake-judge
--stages FILE``). Used by the tests, the shipped sample and the synthetic-set generator.

Each item's :class:`JudgeDecisions` say how each answer sentence is categorised (``A`` / ``Q`` /
``I``), which informative sentences are grounded, whether the context is relevant, whether the
answer refuses, and what the RAGAS stages return. The script answers each stage ``by_prompt``,
keyed on the filled-in part of that item's prompt (the text after the template's fixed prefix),
so one file serves every item.

Example:
    >>> from assay.rag.items import RagItem
    >>> item = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "Drive?",
    ...     "answer": "Sure. Wait a week. Anything else?", "context": ["Wait a week to drive."]})
    >>> script = stage_script([item], {"a": JudgeDecisions(cr=True, refused=False)})
    >>> sorted(script)[:2], script["rag_categorise"]["by_prompt"][0][1]["QUESTIONS"]
    (['rag_categorise', 'rag_context_relevance'], ['Anything else?'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from assay.rag import prompts, schemas
from assay.rag.items import RagItem, TurnSelection
from assay.rag.sentences import split_sentences

Code = Literal["A", "Q", "I"]
_NAMES = {"A": "ACKNOWLEDGEMENTS", "Q": "QUESTIONS", "I": "CONTAINING_INFORMATION"}


def _curly(text: str) -> str:
    text = re.sub(r'"([^"]*)"', "\u201c\\1\u201d", text)
    return text.replace("'", "\u2019")


ECHO_CHANGES: dict[str, Callable[[str], str]] = {
    "no_full_stop": lambda s: s.removesuffix("."),
    "curly_quotes": _curly,
    "whitespace": lambda s: "  " + s.replace(" ", "  ") + " \n",
    "dashes": lambda s: s.replace(" - ", " \u2014 ").replace("-", "\u2013"),
}
"""The small changes real models make when they echo a sentence back, by name: the final full
stop dropped, straight quotes and apostrophes made curly, spacing doubled and padded, hyphens
made into dashes."""

Echo = Literal["exact", "no_full_stop", "curly_quotes", "whitespace", "dashes", "all"]


def echoed(sentence: str, echo: Echo) -> str:
    """``sentence`` as a judge echoing it with ``echo``'s change(s) writes it.

    >>> echoed("Sure, it's a follow-up call - ok.", "all")
    '  Sure,  it’s  a  follow–up  call  —  ok \\n'
    """
    changes = list(ECHO_CHANGES.values()) if echo == "all" else (
        [] if echo == "exact" else [ECHO_CHANGES[echo]])
    for change in changes:
        sentence = change(sentence)
    return sentence


class JudgeDecisions(BaseModel):
    """What the scripted judge says about one graded turn (defaults in brackets).

    ``categories``: one code per answer sentence [``Q`` if it ends in "?", else ``I``];
    ``grounded``: one bool per informative sentence [all true]; ``ragas_statements`` [the
    informative sentences] and ``ragas_supported`` [their grounding, or all true for given
    statements]; ``ragas_relevant``: the context
    sentences extracted [all if ``cr`` else none].
    """

    model_config = ConfigDict(extra="forbid")

    categories: list[Code] | None = None
    grounded: list[bool] | None = None
    cr: bool = True
    refused: bool = False
    ragas_statements: list[str] | None = None
    ragas_supported: list[bool] | None = None
    ragas_relevant: list[str] | None = None
    echo: Echo = "exact"


def _tail(template: str, prompt: str) -> str:
    """The prompt after the template's fixed prefix (what the item filled in)."""
    names = [part.split("}")[0] for part in template.replace("{{", "").split("{")[1:]]
    prefix = template.format(**{n: "\x00" for n in names}).split("\x00")[0]
    return prompt[len(prefix):]


def _explain(ok: bool) -> str:
    return "Supported by the context." if ok else "The context does not say this."


def turn_replies(item: RagItem, turn: int, d: JudgeDecisions) -> dict[str, tuple[str, Any]]:
    """``{stage: (prompt key, reply)}`` for one graded turn."""
    ex = item.exchange(turn)
    sentences = split_sentences(ex.answer)
    codes = d.categories or ["Q" if s.rstrip().endswith("?") else "I" for s in sentences]
    if len(codes) != len(sentences):
        raise ValueError(f"item {item.id!r}: {len(codes)} categories for {len(sentences)} "
                         f"sentences {sentences}")
    informative = [s for s, c in zip(sentences, codes) if c == "I"]
    grounded = d.grounded if d.grounded is not None else [True] * len(informative)
    if len(grounded) != len(informative):
        raise ValueError(f"item {item.id!r}: {len(grounded)} grounding verdicts for "
                         f"{len(informative)} informative sentences")
    out: dict[str, tuple[str, Any]] = {}
    categorise = prompts.categorisation_prompt(sentences)
    out[schemas.CATEGORISE] = (_tail(prompts.LISTING_2_CATEGORISATION, categorise), {
        name: [echoed(s, d.echo) for s, c in zip(sentences, codes) if c == code]
        for code, name in _NAMES.items()})
    if informative:
        context = prompts.grounding_context(ex.context, ex.transcript())
        grounding = prompts.grounding_prompt(ex.question, context, informative)
        out[schemas.GROUNDING] = (_tail(prompts.LISTING_1_GROUNDING, grounding), {"answer": [
            {"statement": echoed(s, d.echo), "explanation": _explain(g),
             "verdict": "Yes" if g else "No"} for s, g in zip(informative, grounded)]})
    relevance = prompts.context_relevance_prompt(ex.question, ex.context, ex.transcript())
    out[schemas.CONTEXT_RELEVANCE] = (_tail(prompts.LISTING_4_CONTEXT_RELEVANCE, relevance), {
        "output": "[[Yes]]" if d.cr else "[[No]]",
        "elaboration": "The information bears on the question." if d.cr
        else "The information does not address the question."})
    refusal = prompts.refusal_prompt(ex.question, ex.answer, ex.earlier())
    out[schemas.REFUSAL] = (_tail(prompts.LISTING_3_REFUSAL, refusal), {
        "parts_not_addressed": "The concern as a whole." if d.refused else "None.",
        "parts_addressed": "None." if d.refused else "The patient's question.",
        "summary": "The doctor declined." if d.refused else "The doctor answered.",
        "output": d.refused})
    if d.ragas_statements is None:
        statements, default_support = informative, grounded
    else:
        statements, default_support = d.ragas_statements, [True] * len(d.ragas_statements)
    supported = d.ragas_supported if d.ragas_supported is not None else default_support
    out[schemas.RAGAS_STATEMENTS] = (
        _tail(prompts.RAGAS_STATEMENTS, prompts.ragas_statements_prompt(ex.question, ex.answer)),
        {"statements": statements})
    if statements:
        verify = prompts.ragas_verification_prompt(ex.context, statements)
        out[schemas.RAGAS_VERDICTS] = (_tail(prompts.RAGAS_VERIFICATION, verify), {"verdicts": [
            {"statement": s, "explanation": _explain(ok), "verdict": "Yes" if ok else "No"}
            for s, ok in zip(statements, supported)]})
    if ex.passages:
        context_sentences = [s for p in ex.passages for s in split_sentences(p)]
        relevant = d.ragas_relevant if d.ragas_relevant is not None else (
            context_sentences if d.cr else [])
        out[schemas.RAGAS_CONTEXT] = (
            _tail(prompts.RAGAS_CONTEXT_SENTENCES, prompts.ragas_context_prompt(ex.question,
                                                                                ex.context)),
            {"sentences": relevant or ["Insufficient Information"]})
    return out


def stage_script(items: Sequence[RagItem], decisions: Mapping[str, JudgeDecisions | Sequence[
        JudgeDecisions]], *, turns: TurnSelection = "last") -> dict[str, Any]:
    """The fake judge's stage script for ``items`` (``decisions`` by item id: one per graded
    turn, or one for a single graded turn)."""
    script: dict[str, Any] = {stage: {"by_prompt": [], "default": "no scripted reply"}
                              for stage in schemas.STAGES}
    for item in items:
        given = decisions[item.id]
        per_turn = [given] if isinstance(given, JudgeDecisions) else list(given)
        graded = item.graded_turns(turns)
        if len(per_turn) != len(graded):
            raise ValueError(f"item {item.id!r}: {len(per_turn)} decisions for {len(graded)} turns")
        for turn, d in zip(graded, per_turn):
            for stage, (key, reply) in turn_replies(item, turn, d).items():
                script[stage]["by_prompt"].append([key, reply])
    return {stage: s for stage, s in script.items() if s["by_prompt"]}


def write_stage_script(script: Mapping[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(script, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
