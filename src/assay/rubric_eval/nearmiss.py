"""Building near-miss pairs (seed 000 §5.3): a reference answer and a copy that breaks one
critical clinical fact, everything else unchanged.

Per query: the target is chosen from the gold rubric (:func:`~assay.rubric_eval.perturb.
select_target`); the ``nearmiss_perturb`` stage asks for a single-span edit; a reply that fails
the strict minimal-edit check or whose span is over the bound (:class:`~assay.rubric_eval.
perturb.SpanBound`: 160 characters and a quarter of the reference by default) is asked again
(a fresh call, ``attempts`` in all), and when none passes a rule fallback (a clinical number
bump, a modal or negation flip, in the sentence closest to the target) makes the pair. The
candidate stored is always the reference with the one span replaced, built in code, never the
model's text. The error type, how the pair was made (``llm`` or ``rule``) and the rule that
fired are recorded. A query whose reference has no rule to apply and
no valid LLM edit fails with a clear message. A call that fails (after the judges layer's
retries and re-asks) fails its pair, to be asked again on resume, rather than move on to the
next attempt: a fault never makes a pair that a clean run would not make. Only a refusal moves on.

Pair file (JSONL, one pair per line; what ``assay nearmiss judge`` reads)::

    {"pair_id": "0", "index": "0", "question": "User: ...", "reference": "...",
     "candidate": "...", "target": "...", "target_number": 3, "edit_span_before": "500 mg",
     "edit_span_after": "50 mg", "error_type": "numeric_threshold", "method": "llm",
     "rule": "", "strict_minimal_edit": true, "attempts": 1}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import AssayError, InputError, Issue
from assay.jobs import StageCaller, StageError, messages_of
from assay.rubric_eval import prompts
from assay.rubric_eval.perturb import (
    SpanBound,
    apply_edit,
    is_minimal_edit,
    rule_fallback,
    select_target,
)
from assay.rubric_eval.released import Query


class NearMissPair(BaseModel):
    """One pair: the reference (better by construction) and the perturbed candidate."""

    model_config = ConfigDict(extra="forbid")

    pair_id: str = Field(min_length=1)
    index: str
    question: str
    reference: str = Field(min_length=1)
    candidate: str = Field(min_length=1)
    target: str = ""
    target_number: int | None = None
    edit_span_before: str = ""
    edit_span_after: str = ""
    error_type: str = "other"
    method: str = "llm"
    rule: str = ""  # the rule fallback that made the candidate (number_bump:UNIT, ...)
    strict_minimal_edit: bool = True
    attempts: int = 0


class NoPerturbation(AssayError):
    """Neither the model nor a rule could perturb a reference answer."""


async def build_pair(caller: StageCaller, query: Query, *, attempts: int = 2,
                     bound: SpanBound = SpanBound()) -> NearMissPair:
    """The near-miss pair of one query (see the module docstring)."""
    if not query.reference:
        raise NoPerturbation(f"query {query.index!r}: no reference answer to perturb")
    number, target = select_target(query.gold)
    prompt = prompts.perturb_prompt(target, query.question, query.reference)
    common = {"pair_id": query.index, "index": query.index, "question": query.question,
              "reference": query.reference, "target": target, "target_number": number}
    for attempt in range(1, attempts + 1):
        try:
            reply = await caller.ask(prompts.PERTURB, messages_of(None, prompt),
                                     prompts.PERTURB_SCHEMA, item_id=query.index,
                                     template_version=f"{prompts.VERSION}/attempt{attempt}")
        except StageError as exc:  # a refusal is the model's answer: try the next attempt;
            if not exc.refused:  # a fault fails the pair, and a resumed job asks this call again
                raise
            continue
        before, after = str(reply["edit_span_before"]), str(reply["edit_span_after"])
        perturbed = str(reply["perturbed_response"]).strip()
        if is_minimal_edit(query.reference, perturbed, before, after) \
                and bound.admits(query.reference, before, after):
            error_type = str(reply.get("error_type", "other")).strip()
            return NearMissPair(**common, candidate=apply_edit(query.reference, before, after),
                                edit_span_before=before,
                                edit_span_after=after, attempts=attempt,
                                error_type=error_type if error_type in prompts.ERROR_TYPES
                                else "other")
    edit = rule_fallback(query.reference, target)
    if edit is None:
        raise NoPerturbation(f"query {query.index!r}: no valid minimal edit in {attempts} "
                             "attempts, and the reference has no clinical number, modal verb "
                             "or negation to change")
    return NearMissPair(**common, candidate=edit.perturbed,  # the span replaced where it matched
                        edit_span_before=edit.before, edit_span_after=edit.after,
                        error_type=edit.error_type, method="rule", rule=edit.rule,
                        attempts=attempts)


def read_pairs(path: str | Path) -> list[NearMissPair]:
    """A pair file; every bad line is reported (file, line, field), duplicates too."""
    from assay.io.jsonl import iter_models

    path = Path(path)
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such pair file"))
    issues: list[Issue] = []
    pairs: list[NearMissPair] = []
    first: dict[str, int] = {}
    for line, pair in iter_models(path, NearMissPair, issues):
        if pair.pair_id in first:
            issues.append(Issue(str(path), line, "pair_id", f"pair {pair.pair_id!r} again "
                                f"(first on line {first[pair.pair_id]})"))
            continue
        first[pair.pair_id] = line
        pairs.append(pair)
    if not pairs and not issues:
        issues.append(Issue(str(path), None, None, "no pair in the file"))
    if issues:
        raise InputError(issues)
    return pairs


def pair_record(pair: NearMissPair) -> dict[str, Any]:
    return pair.model_dump(mode="json")
