"""The JSON schema and completion budget of every generation stage's reply; each is sent
under its stage's name.

The shapes are the paper's (seed 000, Tables 9–15, and the released code's evidence block);
rubric items add an ``evidence`` list of fact labels so that every criterion can be traced to
the chunks its facts came from. Points, axes and relevance are loose here (``number`` or ``string``,
any ``string``): the paper's code coerces them afterwards, and so does
:mod:`assay.generate.rules`, field by field.

Every array is bounded (``maxItems``), so a model that keeps listing stops at a bound the
schema states (a local server's grammar enforces it) rather than at the end of its context:
the bounds are well above what the prompts ask for. The rerank and rubric schemas are made per
call (:func:`rerank_schema`, :func:`rubric_schema`), bounded by the candidates shown and the
criteria allowed.

Example:
    >>> rerank_schema(n_candidates=8, top_k=3)["properties"]["indices"]["maxItems"]
    3
    >>> BUDGETS["route"].tokens, rubric_budget(20).tokens
    (256, 3000)
"""

from __future__ import annotations

from typing import Any

from assay.judges.completion import CompletionBudget

MAX_LIST = 40  # the bound of a list of facts, flags or questions (the prompts ask for fewer)
MAX_QUERIES = 10
MAX_EVIDENCE_LABELS = 10
_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR, "maxItems": MAX_LIST}
_NULLABLE_STR = {"type": ["string", "null"]}


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


ROUTE = _object({"intent": _STR, "queries": {"type": "array", "items": _STR, "minItems": 1,
                                             "maxItems": MAX_QUERIES}})
EVIDENCE_BLOCK = _object(
    {"evidence_sources": {"type": "array", "maxItems": MAX_LIST, "items": _object(
        {"source_name": _STR, "url": _STR, "key_excerpt": _STR},
        {"relevance": _STR,
         "conflict_note": _NULLABLE_STR})},
     "synthesis": _object({"consensus": _STR, "red_flags": _STRS},
                          {"contention": _NULLABLE_STR, "regional_context": _NULLABLE_STR})},
    {"intent_category": _STR,
     "search_queries_used": {"type": "array", "items": _STR, "maxItems": MAX_QUERIES}})
RAW_FACTS = _object({"positive_atomic_facts": _STRS, "negative_constraints": _STRS,
                     "safety_red_flags": _STRS})
FILTERED_FACTS = _object({"relevant_positive_facts": _STRS, "relevant_negative_constraints": _STRS,
                          "relevant_red_flags": _STRS})
INTENT = _object({"user_persona": _STR, "missing_context_questions": _STRS, "tone": _STR})
# Points may come as "+5" or "8" (or a bare Infinity, which the parser quotes): accepted here
# and coerced field by field by rules.coerce_items, so one bad field never fails the stage.
_ITEM = _object({"criterion": _STR, "axis": _STR, "points": {"type": ["number", "string"]}},
                {"evidence": {"type": "array", "items": _STR, "maxItems": MAX_EVIDENCE_LABELS}})


def rubric_schema(max_items: int) -> dict[str, Any]:
    """A rubric reply of at most ``max_items`` criteria."""
    return _object({"rubrics": {"type": "array", "items": _ITEM, "minItems": 1,
                                "maxItems": max_items}})


def rerank_schema(n_candidates: int, top_k: int) -> dict[str, Any]:
    """The rerank reply: at most ``top_k`` indices of the ``n_candidates`` shown (0-based)."""
    return _object({"indices": {"type": "array", "maxItems": top_k, "items": {
        "type": "integer", "minimum": 0, "maximum": n_candidates - 1}}})


RUBRIC = rubric_schema(2 * MAX_LIST)  # the shape; each call sends rubric_schema(its bound)
RERANK = rerank_schema(MAX_LIST, MAX_LIST)  # the shape; each call sends rerank_schema(its own)

SCHEMAS: dict[str, dict[str, Any]] = {
    "route": ROUTE,
    "rerank": RERANK,
    "synthesize_evidence": EVIDENCE_BLOCK,
    "extract_facts": RAW_FACTS,
    "filter_facts": FILTERED_FACTS,
    "interaction_intent": INTENT,
    "draft_rubric": RUBRIC,
    "audit_rubric": RUBRIC,
    "one_step_rubric": RUBRIC,
}

# The completion tokens each stage's reply needs (sized for the bounds above, with room for a
# verbose model) and the cap of the one retry of a reply cut at them.
BUDGETS: dict[str, CompletionBudget] = {
    "route": CompletionBudget(256, cap=1024),
    "rerank": CompletionBudget(128, cap=512),
    "synthesize_evidence": CompletionBudget(2048, cap=6144),
    "extract_facts": CompletionBudget(1536, cap=4096),
    "filter_facts": CompletionBudget(1536, cap=4096),
    "interaction_intent": CompletionBudget(512, cap=2048),
}
_PER_CRITERION = CompletionBudget(150, cap=400)  # a criterion, its axis, points and labels


def rubric_budget(max_items: int) -> CompletionBudget:
    """The budget of a rubric reply of up to ``max_items`` criteria."""
    return _PER_CRITERION.times(max_items)
