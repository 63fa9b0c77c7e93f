"""Rubric-guided refinement (seed 000 §7): critique → edit plan → constrained rewrite.

Per query and guidance condition (a rubric set, the reference rubric as the Oracle, or none for
Self-Critique), the ``refine_critique`` stage reads the question, the frozen base response and
the rubric, and returns an edit plan of ADD / REMOVE / MODIFY steps; :func:`normalise_plan`
keeps only well-formed steps (known action, non-empty instruction, no duplicate), orders them
HIGH → MEDIUM → LOW (stable) and caps their number. The ``refine_rewrite`` stage then applies
only that plan. An empty plan leaves the response unchanged, with no rewrite call: the editor
may do nothing the plan does not ask for.

Example:
    >>> steps, dropped = normalise_plan([
    ...     {"priority": "low", "action": "add", "instruction": "Mention hydration."},
    ...     {"priority": "HIGH", "action": "REMOVE", "instruction": "Drop the ibuprofen advice."},
    ...     {"action": "REWRITE", "instruction": "Make it nicer."},
    ...     {"priority": "HIGH", "action": "ADD", "instruction": " mention  HYDRATION. "}])
    >>> [(s.priority, s.action) for s in steps], dropped
    ([('HIGH', 'REMOVE'), ('LOW', 'ADD')], ["unknown action 'REWRITE'", 'duplicate step 4'])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.errors import AssayError
from assay.jobs import StageCaller, messages_of
from assay.rubric_eval import prompts
from assay.rubric_eval.released import Query, RubricEntry

ACTIONS = ("ADD", "REMOVE", "MODIFY")
PRIORITIES = ("HIGH", "MEDIUM", "LOW")
DEFAULT_PRIORITY = "MEDIUM"


class EditStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    priority: str
    action: str
    instruction: str


def normalise_plan(raw: Sequence[Any], max_steps: int | None = None) -> tuple[list[EditStep], list[str]]:
    """(the steps to apply, why each other step was dropped); see the module docstring.

    A missing or unknown priority counts as MEDIUM. Steps past ``max_steps`` (after ordering)
    are dropped and reported.
    """
    steps: list[EditStep] = []
    dropped: list[str] = []
    seen: set[tuple[str, str]] = set()
    for number, step in enumerate(raw, start=1):
        if not isinstance(step, dict):
            dropped.append(f"step {number} is not an object")
            continue
        action = str(step.get("action", "")).strip().upper()
        instruction = str(step.get("instruction", "")).strip()
        if action not in ACTIONS:
            dropped.append(f"unknown action {action!r}")
            continue
        if not instruction:
            dropped.append(f"step {number} has no instruction")
            continue
        key = (action, re.sub(r"\s+", " ", instruction.lower()))
        if key in seen:
            dropped.append(f"duplicate step {number}")
            continue
        seen.add(key)
        priority = str(step.get("priority", "")).strip().upper()
        steps.append(EditStep(priority=priority if priority in PRIORITIES else DEFAULT_PRIORITY,
                              action=action, instruction=instruction))
    steps.sort(key=lambda s: PRIORITIES.index(s.priority))
    if max_steps is not None and len(steps) > max_steps:
        dropped.extend(f"over the cap of {max_steps} steps: {s.instruction!r}"
                       for s in steps[max_steps:])
        steps = steps[:max_steps]
    return steps, dropped


def normalise_constraints(raw: Any) -> list[str]:
    """The critique's constraints: non-empty strings, in order, without repeats."""
    if not isinstance(raw, list):
        return []
    out: list[str] = []
    for value in raw:
        text = str(value).strip() if isinstance(value, str | int | float) else ""
        if text and text not in out:
            out.append(text)
    return out


class EmptyRewrite(AssayError):
    """The editor returned no text."""


async def refine_one(
    critic: StageCaller, editor: StageCaller, query: Query, base: str,
    rubric: Sequence[RubricEntry] | None, *, condition: str, max_steps: int | None = None,
) -> dict[str, Any]:
    """Critique, plan and rewrite one base response under one condition (JSON-able record)."""
    item = f"{condition}:{query.index}"
    critique = await critic.ask(
        prompts.CRITIQUE,
        messages_of(prompts.CRITIQUE_SYSTEM, prompts.critique_user(query.question, base, rubric)),
        prompts.CRITIQUE_SCHEMA, item_id=item, template_version=prompts.VERSION)
    steps, dropped = normalise_plan(critique.get("edit_plan") or [], max_steps)
    constraints = normalise_constraints(critique.get("constraints"))
    record = {"index": query.index, "condition": condition, "base": base,
              "plan": [s.model_dump() for s in steps], "dropped_steps": dropped,
              "constraints": constraints, "rubric_scores": critique.get("rubric_scores") or [],
              "refined": base, "rewritten": False}
    if not steps:
        return record
    plan = [s.model_dump() for s in steps]
    reply = await editor.ask(
        prompts.REWRITE,
        messages_of(None, prompts.rewrite_prompt(query.question, base, plan, constraints)),
        prompts.REWRITE_SCHEMA, item_id=item, template_version=prompts.VERSION)
    refined = str(reply["revised_response"]).strip()
    if not refined:
        raise EmptyRewrite(f"item {item!r}: the editor returned an empty response")
    return {**record, "refined": refined, "rewritten": True}
