"""Verdicts: what one judge decided about one criterion of one item.

A binary criterion gets ``verdict`` MET, UNMET or CANNOT_ASSESS. A multi-choice criterion gets
``option``, the label of the chosen option in the criterion's own (unshuffled) order; a judge may
also abstain on it with ``verdict="CANNOT_ASSESS"``. For a penalty criterion (negative weight)
MET means the undesirable behaviour is present.

Failures (transport errors, unparseable replies) are never verdicts: they are recorded as errors
by the run store, and the scoring core treats a criterion without a verdict as an abstention.

This is also the line format of verdict JSONL files (``assay score VERDICTS.jsonl``; read and
written by :mod:`assay.io.verdicts`)::

    {"item_id": "q1", "criterion_id": "remove", "verdict": "MET", "judge": "gpt-4.1"}
    {"item_id": "q1", "criterion_id": "pain", "option": "well"}

Example:
    >>> Verdict(item_id="q1", criterion_id="remove", verdict="MET").verdict
    <VerdictLabel.MET: 'MET'>
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VerdictLabel(StrEnum):
    MET = "MET"
    UNMET = "UNMET"
    CANNOT_ASSESS = "CANNOT_ASSESS"


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    judge: str = "default"
    verdict: VerdictLabel | None = None
    option: str | None = None
    explanation: str = ""

    @model_validator(mode="after")
    def _exactly_one_answer(self) -> Verdict:
        if (self.verdict is None) == (self.option is None):
            raise ValueError("give exactly one of verdict (binary) or option (multi-choice)")
        return self

    @property
    def abstained(self) -> bool:
        return self.verdict is VerdictLabel.CANNOT_ASSESS

