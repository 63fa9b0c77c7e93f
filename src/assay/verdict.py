"""Verdicts: what was decided about one criterion of one item.

The nouns, used the same way across the code and the docs: a judge's answer on one criterion is
its *vote* (a :class:`Verdict` carrying that judge's name); the judges' votes aggregated into
one answer are the *verdict* (a :class:`Verdict` too, see :mod:`assay.grading.aggregate`); what
a human expert said is a *label* (:mod:`assay.metrics.labels`, :mod:`assay.review`).

A binary criterion gets a ``decision``, MET, UNMET or CANNOT_ASSESS. A multi-choice criterion
gets ``option``, the label of the chosen option in the criterion's own (unshuffled) order; a
judge may also abstain on it with the decision CANNOT_ASSESS. For a penalty criterion (negative
weight) MET means the undesirable behaviour is present.

Failures (transport errors, unparseable replies) are never verdicts: they are recorded as errors
by the run store, and the scoring core treats a criterion without a verdict as an abstention.

This is also the line format of verdict JSONL files (``assay score VERDICTS.jsonl``; read and
written by :mod:`assay.io.verdicts`), where the decision's key is ``verdict``::

    {"item_id": "q1", "criterion_id": "remove", "verdict": "MET", "judge": "gpt-4.1"}
    {"item_id": "q1", "criterion_id": "pain", "option": "well"}

Example:
    >>> v = Verdict(item_id="q1", criterion_id="remove", decision="MET")
    >>> v.decision
    <Decision.MET: 'MET'>
    >>> v.model_dump(exclude_defaults=True)    # the file's key is "verdict"
    {'item_id': 'q1', 'criterion_id': 'remove', 'verdict': <Decision.MET: 'MET'>}
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Decision(StrEnum):
    """A decision on a binary criterion (or an abstention on any criterion)."""

    MET = "MET"
    UNMET = "UNMET"
    CANNOT_ASSESS = "CANNOT_ASSESS"


class Verdict(BaseModel):
    # The file format's key is "verdict"; Python code says ``decision`` (both are accepted).
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True,
                              validate_by_alias=True, serialize_by_alias=True)

    item_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    judge: str = "default"
    decision: Decision | None = Field(default=None, alias="verdict")
    option: str | None = None
    explanation: str = ""

    @model_validator(mode="after")
    def _exactly_one_answer(self) -> Verdict:
        if (self.decision is None) == (self.option is None):
            raise ValueError("give exactly one of verdict (binary) or option (multi-choice)")
        return self

    @property
    def abstained(self) -> bool:
        return self.decision is Decision.CANNOT_ASSESS

