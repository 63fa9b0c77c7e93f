"""Rendering the fake judge's answers into the reply object a request's schema asks for.

From the schema's properties: ``verdict`` → the label, ``criteria_met`` → ``answer == "MET"``,
``selected_option`` → the displayed 1-based number of the chosen option (0 = CANNOT_ASSESS),
``explanation`` → a sentence; other required properties get a neutral value of their type.
Per-item schemas (a top-level ``verdicts`` object keyed by criterion id) get one such object per
criterion. Without a schema every key that applies is included.

Example:
    >>> from assay.testing.prompts import CriterionView
    >>> view = CriterionView("pain", "Pain level", "ok", options=("none", "mild", "severe"))
    >>> render_one({"properties": {"selected_option": {"type": "integer"}}}, "mild", view)
    {'selected_option': 2}
    >>> render_one(None, "MET", CriterionView("c", "t", "r"))["criteria_met"]
    True
"""

from __future__ import annotations

from typing import Any

from assay.testing.policies import LABELS
from assay.testing.prompts import CriterionView

_NEUTRAL = {"string": "", "boolean": False, "integer": 0, "number": 0, "object": {}, "array": [],
            "null": None}


def explanation(answer: str, view: CriterionView) -> str:
    """What the fake judge says it did: the answer it gives, and the rule behind it when a
    binary answer became an option (see :mod:`assay.testing.options`)."""
    about = view.criterion_id or (view.criterion_text or "the criterion")[:60]
    reason = getattr(answer, "reason", None)
    if reason:
        return f"Fake judge (a rule, not a model): {reason} for {about}."
    if view.options and answer not in LABELS:
        return f"Fake judge: option {answer!r} for {about}."
    return f"Fake judge: {answer} for {about}."


def option_number(answer: str, options: tuple[str, ...]) -> int:
    lowered = [o.strip().lower() for o in options]
    try:
        return lowered.index(answer.strip().lower()) + 1
    except ValueError:
        return 0


def render_one(schema: dict[str, Any] | None, answer: str, view: CriterionView) -> dict[str, Any]:
    if schema is None or not schema.get("properties"):
        out: dict[str, Any] = {"explanation": explanation(answer, view)}
        if view.options:
            out["selected_option"] = option_number(answer, view.options)
            if answer == "CANNOT_ASSESS":
                out["verdict"] = answer
        else:
            out["verdict"] = answer if answer in LABELS else "CANNOT_ASSESS"
            out["criteria_met"] = answer == "MET"
        return out
    out = {}
    required = set(schema.get("required", ()))
    for name, sub in schema["properties"].items():
        if name == "verdict":
            out[name] = answer if answer in LABELS else "CANNOT_ASSESS"
        elif name == "criteria_met":
            out[name] = answer == "MET"
        elif name == "selected_option":
            out[name] = option_number(answer, view.options)
        elif name == "explanation":
            out[name] = explanation(answer, view)
        elif name in required:
            out[name] = _neutral(sub)
    return out


def render(schema: dict[str, Any] | None, answers: list[str], views: list[CriterionView]) -> dict:
    """The reply object for a whole request (one criterion, or per-item ``verdicts``)."""
    verdicts_schema = (schema or {}).get("properties", {}).get("verdicts")
    if verdicts_schema is not None or (schema is None and len(views) > 1):
        by_id = {v.criterion_id: (a, v) for a, v in zip(answers, views)}
        wanted = (verdicts_schema or {}).get("properties") or {v.criterion_id: None for v in views}
        verdicts = {}
        for cid, sub in wanted.items():
            answer, view = by_id.get(cid, (answers[0] if answers else "CANNOT_ASSESS",
                                           CriterionView(cid, None, None)))
            verdicts[cid] = render_one(sub, answer, view)
        out: dict[str, Any] = {"verdicts": verdicts}
        if schema is not None:
            for name, sub in schema.get("properties", {}).items():
                if name != "verdicts" and name in set(schema.get("required", ())):
                    out[name] = "Fake judge: per-item verdicts." if name == "explanation" else _neutral(sub)
        return out
    return render_one(schema, answers[0], views[0])


def _neutral(sub: dict[str, Any]) -> Any:
    if sub.get("enum"):
        return sub["enum"][0]
    kind = sub.get("type", "string")
    return _NEUTRAL.get(kind[0] if isinstance(kind, list) else kind, "")
