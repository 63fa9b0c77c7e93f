"""Rubrics in context (the paper's §3.5, Appendix D): the system message for each condition.

The paper puts the selected criteria "in the system message, followed by the task-specific
user prompt", but gives no wrapper text; the wrapper below is Assay's (spec §7.17). Conditions
(Table 2 of the paper):

=========================  ==================================================================
``none``                   no system message (the off-the-shelf baseline)
``single-axis``            the paper's exact text: "You are a helpful assistant. Please
                           generate a response that follows user instructions."
``multi-axes``             five criteria, one per HealthBench axis (texts written by Assay
                           from HealthBench's axis definitions: the paper does not give them)
``llm-generated``          the criteria given (generated per prompt by an LLM)
``health-score``           all criteria of the bank (Non-Adaptive)
``health-score-adaptive``  the criteria selected for this prompt (Adaptive)
``instance-specific``      reward only: instance rubrics "cannot be used during inference for
                           an in-context learning setting" — asking for it raises
=========================  ==================================================================

A criterion with negative weight is listed under "Avoid" (it describes an undesirable
behaviour); the others under "Make sure". Criterion texts are verbatim.

Example:
    >>> from assay.rubric import Criterion
    >>> print(system_prompt("health-score-adaptive", [
    ...     Criterion(id="a", text="The response suggests consulting healthcare provider."),
    ...     Criterion(id="b", text="Includes unsafe advice.", weight=-1)]))
    You are a helpful assistant answering health questions. Your response will be judged against the criteria below.
    <BLANKLINE>
    Make sure that:
    1. The response suggests consulting healthcare provider.
    <BLANKLINE>
    Avoid the following:
    1. Includes unsafe advice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.errors import ConfigError
from assay.rubric import Criterion

CONDITIONS = ("none", "single-axis", "multi-axes", "llm-generated", "health-score",
              "health-score-adaptive", "instance-specific")

SINGLE_AXIS = ("You are a helpful assistant. Please generate a response that follows user "
               "instructions.")

MULTI_AXES = (
    Criterion(id="axis-accuracy", axis="accuracy", text=(
        "Accuracy: the response contains only factually correct information, aligned with "
        "current medical consensus, and states uncertainty where the evidence is limited.")),
    Criterion(id="axis-completeness", axis="completeness", text=(
        "Completeness: the response includes all the information needed to be safe and "
        "helpful, without omitting important steps, warnings or considerations.")),
    Criterion(id="axis-communication", axis="communication_quality", text=(
        "Communication quality: the response is clear, well organised and of a length, "
        "vocabulary and technical depth suited to the user.")),
    Criterion(id="axis-context", axis="context_awareness", text=(
        "Context awareness: the response uses the context given (role, location, resources, "
        "earlier turns) and seeks the missing context that would change the answer.")),
    Criterion(id="axis-instructions", axis="instruction_following", text=(
        "Instruction following: the response follows every instruction of the user and the "
        "system, including the requested format, length and scope.")),
)

PREAMBLE = ("You are a helpful assistant answering health questions. Your response will be "
            "judged against the criteria below.")


def system_prompt(condition: str, criteria: Sequence[Criterion] | None = None) -> str | None:
    """The system message for ``condition`` (None for ``none``); ``criteria`` are the bank
    (``health-score``), the selection (``health-score-adaptive``) or the generated ones."""
    if condition not in CONDITIONS:
        raise ConfigError(f"unknown rubric condition {condition!r}; use {', '.join(CONDITIONS)}")
    if condition == "none":
        return None
    if condition == "single-axis":
        return SINGLE_AXIS
    if condition == "instance-specific":
        raise ConfigError("instance-specific rubrics are for rewards only: they do not exist for a "
                          "new prompt at inference (Health-SCORE §3.5)")
    if condition == "multi-axes":
        criteria = MULTI_AXES
    if not criteria:
        raise ConfigError(f"the {condition!r} condition needs the criteria to show")
    return render_criteria(criteria)


def render_criteria(criteria: Sequence[Criterion]) -> str:
    do = [c for c in criteria if not c.is_penalty]
    avoid = [c for c in criteria if c.is_penalty]
    parts = [PREAMBLE]
    if do:
        parts.append("Make sure that:\n" + _numbered(do))
    if avoid:
        parts.append("Avoid the following:\n" + _numbered(avoid))
    return "\n\n".join(parts)


def _numbered(criteria: Sequence[Criterion]) -> str:
    return "\n".join(f"{i}. {c.text}" for i, c in enumerate(criteria, 1))


def with_system_prompt(messages: Sequence[Mapping[str, Any]], system: str | None) -> list[dict]:
    """``messages`` with ``system`` as the first system message; an existing system message is
    kept after the rubric text (the task's own instructions still apply).

    >>> with_system_prompt([{"role": "user", "content": "hi"}], "S")
    [{'role': 'system', 'content': 'S'}, {'role': 'user', 'content': 'hi'}]
    """
    out = [dict(m) for m in messages]
    if system is None:
        return out
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{system}\n\n{out[0]['content']}"
        return out
    return [{"role": "system", "content": system}, *out]
