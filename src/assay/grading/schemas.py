"""JSON Schemas of the reply objects a judge must return, one per call shape.

Binary criteria answer ``verdict`` (MET / UNMET / CANNOT_ASSESS); multi-choice criteria answer
``selected_option``, the displayed 1-based option number, 0 meaning CANNOT_ASSESS; HealthBench's
protocol answers ``criteria_met`` (a boolean). Per-item calls wrap one such object per criterion
id under ``verdicts``. Every shape requires an ``explanation``. Each shape has its completion
budget (:func:`reply_budget`): a per-item reply gets one verdict's budget per criterion.

Example:
    >>> binary_schema()["properties"]["verdict"]["enum"]
    ['MET', 'UNMET', 'CANNOT_ASSESS']
    >>> multi_choice_schema(3)["properties"]["selected_option"]["maximum"]
    3
    >>> reply_budget(criteria=4).tokens, reply_budget(bracket=True).tokens
    (2048, 256)
"""

from __future__ import annotations

from typing import Any

from assay.judges.completion import CompletionBudget
from assay.rubric import Criterion

_EXPLANATION = {"type": "string"}


def binary_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "explanation": _EXPLANATION,
            "verdict": {"type": "string", "enum": ["MET", "UNMET", "CANNOT_ASSESS"]},
        },
        "required": ["explanation", "verdict"],
        "additionalProperties": False,
    }


def multi_choice_schema(n_options: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "explanation": _EXPLANATION,
            "selected_option": {"type": "integer", "minimum": 0, "maximum": n_options},
        },
        "required": ["explanation", "selected_option"],
        "additionalProperties": False,
    }


def healthbench_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"explanation": _EXPLANATION, "criteria_met": {"type": "boolean"}},
        "required": ["explanation", "criteria_met"],
        "additionalProperties": False,
    }


BRACKET_SCHEMA_NAME = "auditor"


def bracket_schema() -> dict[str, Any]:
    """A free-text reply ending in ``[1]`` or ``[0]`` (RubricsTree's auditor), in ``output``."""
    return {
        "type": "object",
        "properties": {"output": {"type": "string"}},
        "required": ["output"],
        "additionalProperties": False,
    }


def criterion_schema(criterion: Criterion) -> dict[str, Any]:
    if criterion.is_multi_choice:
        return multi_choice_schema(len(criterion.options))
    return binary_schema()


def per_item_schema(criteria: list[Criterion]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "object",
                "properties": {c.id: criterion_schema(c) for c in criteria},
                "required": [c.id for c in criteria],
                "additionalProperties": False,
            }
        },
        "required": ["verdicts"],
        "additionalProperties": False,
    }


VERDICT_BUDGET = CompletionBudget(512, cap=2048)  # an explanation of a few sentences, a verdict
BRACKET_BUDGET = CompletionBudget(256, cap=1024)  # "one short, concise sentence", then [1]/[0]


def reply_budget(*, criteria: int = 1, bracket: bool = False) -> CompletionBudget:
    """The completion budget of a reply judging ``criteria`` criteria (per item: several)."""
    return BRACKET_BUDGET if bracket else VERDICT_BUDGET.times(criteria)
