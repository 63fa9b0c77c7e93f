"""Stage names and the JSON schemas every RAG-metric reply must satisfy.

One stage name per model call (it is also the schema name the fake judge scripts replies by).
The fields mirror what each listing asks the model to write: Listing 1's per-statement
``Explanation`` and ``Verdict: Yes./No.``, Listing 2's three category lists, Listing 3's
``Parts not addressed / Parts addressed / Summary / Output``, Listing 4's ``[[Yes]]``/``[[No]]``
with an optional elaboration. Where the number of verdicts must equal the number of statements
the schema says so (``minItems`` = ``maxItems``), so a short reply is re-asked by the judges layer.
Every other list is bounded too (a category list by the sentences shown, extracted statements
and sentences by :data:`MAX_LIST`), and each stage declares its completion budget (``*_BUDGET``,
or a function of the statements a reply must cover).

Example:
    >>> from assay.judges.structured import validate
    >>> validate({"output": "[[Maybe]]"}, CONTEXT_RELEVANCE_SCHEMA)
    "$.output: '[[Maybe]]' is not one of ['[[Yes]]', '[[No]]']"
    >>> validate({"answer": []}, grounding_schema(2))
    '$.answer: fewer than 2 items'
    >>> categorise_schema(3)["properties"]["QUESTIONS"]["maxItems"], verdicts_budget(10).tokens
    (3, 1328)
"""

from __future__ import annotations

from typing import Any

from assay.judges.completion import CompletionBudget

CATEGORISE = "rag_categorise"
GROUNDING = "rag_grounding"
REFUSAL = "rag_refusal"
CONTEXT_RELEVANCE = "rag_context_relevance"
RAGAS_STATEMENTS = "ragas_statements"
RAGAS_VERDICTS = "ragas_verdicts"
RAGAS_CONTEXT = "ragas_context_sentences"

STAGES = (CATEGORISE, GROUNDING, REFUSAL, CONTEXT_RELEVANCE, RAGAS_STATEMENTS, RAGAS_VERDICTS,
          RAGAS_CONTEXT)

CATEGORIES = ("ACKNOWLEDGEMENTS", "QUESTIONS", "CONTAINING_INFORMATION")
"""Listing 2's category names; the paper's text calls them acknowledgements, questions and
informative sentences."""

MAX_LIST = 60  # statements or sentences one reply may extract
_STRINGS = {"type": "array", "items": {"type": "string"}, "maxItems": MAX_LIST}


def categorise_schema(n_sentences: int) -> dict[str, Any]:
    """Listing 2's answer: the sentences shown, sorted into the three categories."""
    listed = {"type": "array", "items": {"type": "string"}, "maxItems": n_sentences}
    return {"type": "object", "required": list(CATEGORIES),
            "properties": {name: listed for name in CATEGORIES}}


REFUSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["parts_not_addressed", "parts_addressed", "summary", "output"],
    "properties": {
        "parts_not_addressed": {"type": "string"},
        "parts_addressed": {"type": "string"},
        "summary": {"type": "string"},
        "output": {"type": "boolean", "description": "True: the doctor refused."},
    },
}

CONTEXT_RELEVANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["output"],
    "properties": {
        "output": {"enum": ["[[Yes]]", "[[No]]"]},
        "elaboration": {"type": "string"},
    },
}

RAGAS_STATEMENTS_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["statements"], "properties": {"statements": _STRINGS},
}

RAGAS_CONTEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["sentences"],
    "properties": {"sentences": {**_STRINGS, "description":
                                 'the extracted sentences, or ["Insufficient Information"]'}},
}

_VERDICT = {
    "type": "object",
    "required": ["statement", "explanation", "verdict"],
    "properties": {
        "statement": {"type": "string"},
        "explanation": {"type": "string"},
        "verdict": {"enum": ["Yes", "No"]},
    },
}


def grounding_schema(n_statements: int) -> dict[str, Any]:
    """Listing 1's answer: one ``{statement, explanation, verdict}`` per numbered statement."""
    return {"type": "object", "required": ["answer"], "properties": {"answer": {
        "type": "array", "items": _VERDICT, "minItems": n_statements, "maxItems": n_statements}}}


def ragas_verdicts_schema(n_statements: int) -> dict[str, Any]:
    """The RAGAS verification reply: one verdict per statement, in order."""
    return {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
        "type": "array", "items": _VERDICT, "minItems": n_statements, "maxItems": n_statements}}}


REFUSAL_BUDGET = CompletionBudget(768, cap=3072)
CONTEXT_RELEVANCE_BUDGET = CompletionBudget(256, cap=1024)
RAGAS_STATEMENTS_BUDGET = CompletionBudget(1024, cap=4096)
RAGAS_CONTEXT_BUDGET = CompletionBudget(1536, cap=6144)


def sentences_budget(n_sentences: int) -> CompletionBudget:
    """A categorisation of ``n_sentences`` sentences (each echoed in its category)."""
    return CompletionBudget.listing(n_sentences, each=60)


def verdicts_budget(n_statements: int) -> CompletionBudget:
    """One ``{statement, explanation, verdict}`` per statement."""
    return CompletionBudget.listing(n_statements, each=120)
