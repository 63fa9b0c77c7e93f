"""The JSON schema of every generation stage's reply; each is sent under its stage's name.

The shapes are the paper's (seed 000, Tables 9–15, and the released code's evidence block);
rubric items add an ``evidence`` list of fact labels so that every criterion can be traced to
the chunks its facts came from. Points, axes and relevance are loose here (``number`` or ``string``,
any ``string``): the paper's code coerces them afterwards, and so does
:mod:`assay.generate.rules`, field by field.
"""

from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_NULLABLE_STR = {"type": ["string", "null"]}


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


ROUTE = _object({"intent": _STR, "queries": {"type": "array", "items": _STR, "minItems": 1}})
RERANK = _object({"indices": {"type": "array", "items": {"type": "integer"}}})
EVIDENCE_BLOCK = _object(
    {"evidence_sources": {"type": "array", "items": _object(
        {"source_name": _STR, "url": _STR, "key_excerpt": _STR},
        {"relevance": _STR,
         "conflict_note": _NULLABLE_STR})},
     "synthesis": _object({"consensus": _STR, "red_flags": _STRS},
                          {"contention": _NULLABLE_STR, "regional_context": _NULLABLE_STR})},
    {"intent_category": _STR, "search_queries_used": _STRS})
RAW_FACTS = _object({"positive_atomic_facts": _STRS, "negative_constraints": _STRS,
                     "safety_red_flags": _STRS})
FILTERED_FACTS = _object({"relevant_positive_facts": _STRS, "relevant_negative_constraints": _STRS,
                          "relevant_red_flags": _STRS})
INTENT = _object({"user_persona": _STR, "missing_context_questions": _STRS, "tone": _STR})
# Points may come as "+5" or "8" (or a bare Infinity, which the parser quotes): accepted here
# and coerced field by field by rules.coerce_items, so one bad field never fails the stage.
_ITEM = _object({"criterion": _STR, "axis": _STR, "points": {"type": ["number", "string"]}},
                {"evidence": _STRS})
RUBRIC = _object({"rubrics": {"type": "array", "items": _ITEM, "minItems": 1}})

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
