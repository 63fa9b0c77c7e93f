"""Reading a judge's reply object into verdicts, or into an error that says what was wrong.

A reply that does not fit (no verdict, an option number out of range, ``criteria_met`` that is
not a boolean) is a :class:`ReplyError`, never a verdict: the run store records it as an error
and scoring treats the criterion as unanswered. CANNOT_ASSESS, on the other hand, is a verdict
the judge chose.

Example:
    >>> from assay.rubric import Criterion
    >>> c = Criterion(id="stinger", text="Explains how to remove the stinger.")
    >>> parse_criterion_reply({"verdict": "met", "explanation": "Says scrape."}, c, item_id="q1").decision
    <Decision.MET: 'MET'>
    >>> parse_criterion_reply({"explanation": "?"}, c, item_id="q1")
    ReplyError(criterion_id='stinger', message='no "verdict" or "criteria_met" in the reply')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.grading.shuffle import label_for_displayed
from assay.rubric import Criterion
from assay.verdict import Decision, Verdict

_LABELS = {"MET": Decision.MET, "UNMET": Decision.UNMET,
           "CANNOT_ASSESS": Decision.CANNOT_ASSESS, "NOT_MET": Decision.UNMET,
           "CANNOT ASSESS": Decision.CANNOT_ASSESS}


@dataclass(frozen=True)
class ReplyError:
    """A reply (or part of a per-item reply) that could not be read as a verdict."""

    criterion_id: str
    message: str


def parse_criterion_reply(
    data: Mapping[str, Any] | None,
    criterion: Criterion,
    *,
    item_id: str,
    judge: str = "default",
    perm: Sequence[int] | None = None,
    strict_bool: bool = False,
) -> Verdict | ReplyError:
    """One criterion's verdict from a reply object (see the module docstring).

    ``strict_bool`` reads only ``criteria_met`` and requires a JSON boolean, as simple-evals does
    for HealthBench.
    """
    if not isinstance(data, Mapping):
        return ReplyError(criterion.id, "the reply is not a JSON object")
    explanation = data.get("explanation")
    explanation = explanation if isinstance(explanation, str) else ""

    def verdict(**answer: Any) -> Verdict:
        return Verdict(item_id=item_id, criterion_id=criterion.id, judge=judge,
                       explanation=explanation, **answer)

    if strict_bool:
        met = data.get("criteria_met")
        if met is True or met is False:
            return verdict(verdict=Decision.MET if met else Decision.UNMET)
        return ReplyError(criterion.id, f'"criteria_met" must be true or false, got {met!r}')
    if criterion.is_multi_choice:
        return _multi_choice(data, criterion, perm, verdict)
    return _binary(data, criterion, verdict)


def _binary(data: Mapping[str, Any], criterion: Criterion, verdict) -> Verdict | ReplyError:
    raw = data.get("verdict")
    if isinstance(raw, str):
        label = _LABELS.get(raw.strip().upper().replace("-", "_"))
        if label is None:
            return ReplyError(criterion.id, f'"verdict" must be MET, UNMET or CANNOT_ASSESS, got {raw!r}')
        return verdict(verdict=label)
    met = data.get("criteria_met")
    if met is True or met is False:
        return verdict(verdict=Decision.MET if met else Decision.UNMET)
    return ReplyError(criterion.id, 'no "verdict" or "criteria_met" in the reply')


def _multi_choice(data, criterion: Criterion, perm, verdict) -> Verdict | ReplyError:
    raw = data.get("selected_option")
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    if isinstance(raw, bool) or not isinstance(raw, int):
        if isinstance(data.get("verdict"), str) and data["verdict"].strip().upper() == "CANNOT_ASSESS":
            return verdict(verdict=Decision.CANNOT_ASSESS)
        return ReplyError(criterion.id, f'"selected_option" must be an option number, got {raw!r}')
    if raw == 0:
        return verdict(verdict=Decision.CANNOT_ASSESS)
    perm = tuple(perm) if perm is not None else tuple(range(len(criterion.options)))
    try:
        return verdict(option=label_for_displayed(criterion, perm, raw))
    except ValueError as exc:
        return ReplyError(criterion.id, f'"selected_option": {exc}')


_BRACKET = re.compile(r"\[\s*([01])\s*\]")
# the paper's prompt also says "response with only the number": a reply, or its last line,
# that is nothing but 1 or 0 (bold or a full stop allowed)
_BARE = re.compile(r"(?:^|\n)[ \t*]*([01])[ \t*]*\.?\s*$")


def parse_bracket_reply(
    data: Mapping[str, Any] | str | None, criterion: Criterion, *, item_id: str,
    judge: str = "default",
) -> Verdict | ReplyError:
    """RubricsTree's auditor reply ``Reason: ... [1]``: the last ``[1]``/``[0]`` decides (1 = MET);
    without one, a reply (or last line) that is only ``1`` or ``0``, as the paper's prompt asks.

    >>> c = Criterion(id="ldl", text="Mentions the user's LDL-C.")
    >>> v = parse_bracket_reply({"output": "Reason: It never mentions LDL-C. [0]"}, c, item_id="q")
    >>> v.decision, v.explanation
    (<Decision.UNMET: 'UNMET'>, 'It never mentions LDL-C.')
    >>> parse_bracket_reply({"output": "1"}, c, item_id="q").decision
    <Decision.MET: 'MET'>
    """
    text = data.get("output") if isinstance(data, Mapping) else data
    if not isinstance(text, str):
        return ReplyError(criterion.id, 'no "output" text in the reply')
    found = _BRACKET.findall(text)
    pattern = _BRACKET
    if not found:
        bare = _BARE.search(text)
        if bare is None:
            return ReplyError(criterion.id, f"no [1] or [0] in the reply {text[:80]!r}")
        found, pattern = [bare.group(1)], _BARE
    reason = pattern.sub("", text).strip()
    reason = re.sub(r"^\s*reason\s*:\s*", "", reason, flags=re.IGNORECASE)
    label = Decision.MET if found[-1] == "1" else Decision.UNMET
    return Verdict(item_id=item_id, criterion_id=criterion.id, judge=judge, decision=label,
                   explanation=reason)


def parse_item_reply(
    data: Mapping[str, Any] | None,
    criteria: Sequence[Criterion],
    *,
    item_id: str,
    judge: str = "default",
    perms: Mapping[str, Sequence[int]] | None = None,
) -> list[Verdict | ReplyError]:
    """One result per criterion (in order) from a per-item reply ``{"verdicts": {id: {...}}}``."""
    verdicts = data.get("verdicts") if isinstance(data, Mapping) else None
    if not isinstance(verdicts, Mapping):
        return [ReplyError(c.id, 'no "verdicts" object in the reply') for c in criteria]
    results: list[Verdict | ReplyError] = []
    for c in criteria:
        part = verdicts.get(c.id)
        if part is None:
            results.append(ReplyError(c.id, f"the reply has no verdict for criterion {c.id!r}"))
            continue
        results.append(parse_criterion_reply(part, c, item_id=item_id, judge=judge,
                                             perm=(perms or {}).get(c.id)))
    return results
