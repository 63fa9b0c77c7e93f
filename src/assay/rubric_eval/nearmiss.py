"""Building near-miss pairs (seed 000 §5.3): a reference answer and a copy that breaks one
critical clinical fact, everything else unchanged.

Per query: the target is chosen from the gold rubric (:func:`~assay.rubric_eval.perturb.
select_target`); the ``nearmiss_perturb`` stage asks for a single-span edit. A reply is kept
only when it passes three checks, else it is asked again (a fresh call, ``attempts`` in all):

* minimal: the model's text is the reference with the span replaced at one of its
  occurrences (:func:`~assay.rubric_eval.perturb.locate_edit`, which gives the offset);
* bounded: the removed span and the inserted text each within the bound
  (:class:`~assay.rubric_eval.perturb.SpanBound`: 160 characters and a quarter of the
  reference by default);
* clinical: the edit changes a clinical fact, a number or unit, dose, frequency, duration,
  drug, negation, modality, contraindication or urgency
  (:func:`~assay.rubric_eval.clinical_edit.clinical_change`); punctuation, filler words and
  synonyms ("examination." → "examination!", "the" → "this", "500 mg" → "0.5 g") are not.

When no reply passes, a rule fallback (a clinical number bump, a modal or negation flip, in the
sentence closest to the target) makes the pair. The candidate stored is always the reference
with the one span replaced at ``edit_offset``, built in code, never the model's text, so every
pair can be rebuilt from its record. The error type, the kind of clinical fact changed, how the
pair was made (``llm`` or ``rule``), the rule that fired and why each rejected reply was
rejected are recorded. A query whose reference has no rule to apply and no valid LLM edit
fails with a clear message. A call that fails (after the judges layer's retries and re-asks)
fails its pair, to be asked again on resume, rather than move on to the next attempt: a fault
never makes a pair that a clean run would not make. Only a refusal moves on.

Pair file (JSONL, one pair per line; what ``assay nearmiss judge`` reads)::

    {"pair_id": "0", "index": "0", "question": "User: ...", "reference": "...",
     "candidate": "...", "target": "...", "target_number": 3, "edit_span_before": "500 mg",
     "edit_span_after": "50 mg", "edit_offset": 112, "error_type": "numeric_threshold",
     "clinical_change": "dose", "method": "llm", "rule": "", "strict_minimal_edit": true,
     "attempts": 1, "rejected": []}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.errors import AssayError, InputError, Issue
from assay.jobs import StageCaller, StageError, messages_of
from assay.rubric_eval import prompts
from assay.rubric_eval.clinical_edit import clinical_change
from assay.rubric_eval.perturb import (
    SpanBound,
    apply_edit,
    locate_edit,
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
    # where edit_span_before starts in the reference (None only in files from before it was
    # recorded): the candidate is the reference with the span replaced there
    edit_offset: int | None = Field(default=None, ge=0)
    error_type: str = "other"
    clinical_change: str = ""  # the kind of clinical fact the edit changes (dose, drug, ...)
    method: str = "llm"
    rule: str = ""  # the rule fallback that made the candidate (number_bump:UNIT, ...)
    strict_minimal_edit: bool = True
    attempts: int = 0
    rejected: list[str] = Field(default_factory=list)  # why each model reply was not kept

    @model_validator(mode="after")
    def _rebuilds_from_its_record(self) -> NearMissPair:
        if self.edit_offset is not None and apply_edit_or_none(
                self.reference, self.edit_span_before, self.edit_span_after,
                self.edit_offset) != self.candidate:
            raise ValueError("the candidate is not the reference with edit_span_before at "
                             "edit_offset replaced by edit_span_after")
        return self


def apply_edit_or_none(reference: str, before: str, after: str, offset: int) -> str | None:
    try:
        return apply_edit(reference, before, after, offset)
    except ValueError:
        return None


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
    rejected: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            reply = await caller.ask(prompts.PERTURB, messages_of(None, prompt),
                                     prompts.PERTURB_SCHEMA, item_id=query.index,
                                     template_version=f"{prompts.VERSION}/attempt{attempt}")
        except StageError as exc:  # a refusal is the model's answer: try the next attempt;
            if not exc.refused:  # a fault fails the pair, and a resumed job asks this call again
                raise
            rejected.append(f"attempt {attempt}: refused")
            continue
        before, after = str(reply["edit_span_before"]), str(reply["edit_span_after"])
        why, offset, kind = _check_reply(query.reference, reply, bound)
        if offset is None or kind is None:
            rejected.append(f"attempt {attempt}: {why}")
            continue
        error_type = str(reply.get("error_type", "other")).strip()
        return NearMissPair(**common, candidate=apply_edit(query.reference, before, after, offset),
                            edit_span_before=before, edit_span_after=after, edit_offset=offset,
                            attempts=attempt, clinical_change=kind, rejected=rejected,
                            error_type=error_type if error_type in prompts.ERROR_TYPES
                            else "other")
    edit = rule_fallback(query.reference, target)
    if edit is None:
        raise NoPerturbation(f"query {query.index!r}: no valid minimal edit in {attempts} "
                             "attempts (" + "; ".join(rejected) + "), and the reference has no "
                             "clinical number, modal verb or negation to change")
    kind = clinical_change(query.reference, edit.offset, edit.before, edit.after).kind
    return NearMissPair(**common, candidate=edit.perturbed,
                        edit_span_before=edit.before, edit_span_after=edit.after,
                        edit_offset=edit.offset, error_type=edit.error_type,
                        clinical_change=kind or "", method="rule", rule=edit.rule,
                        attempts=attempts, rejected=rejected)


def _check_reply(reference: str, reply: dict[str, Any], bound: SpanBound
                 ) -> tuple[str, int | None, str | None]:
    """(why the reply is rejected, or the kind of fact; the edit's offset; that kind)."""
    before, after = str(reply["edit_span_before"]), str(reply["edit_span_after"])
    offset = locate_edit(reference, str(reply["perturbed_response"]).strip(), before, after)
    if offset is None:
        return "not the reference with the one stated span replaced", None, None
    if not bound.admits(reference, before, after):
        return (f"the edit is over the bound ({len(before)} characters removed, {len(after)} "
                f"inserted; at most {bound.max_chars} and {bound.max_share:.0%} of "
                f"{len(reference)})"), offset, None
    check = clinical_change(reference, offset, before, after)
    return check.reason, offset, check.kind


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
