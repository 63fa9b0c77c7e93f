"""Verdicts: what one judge decided about one criterion of one item.

A binary criterion gets ``verdict`` MET, UNMET or CANNOT_ASSESS. A multi-choice criterion gets
``option``, the label of the chosen option in the criterion's own (unshuffled) order; a judge may
also abstain on it with ``verdict="CANNOT_ASSESS"``. For a penalty criterion (negative weight)
MET means the undesirable behaviour is present.

Failures (transport errors, unparseable replies) are never verdicts: they are recorded as errors
by the run store, and the scoring core treats a criterion without a verdict as an abstention.

This is also the line format of verdict JSONL files (``assay score VERDICTS.jsonl``)::

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


def read_verdicts(path) -> list[Verdict]:
    """Read a verdict JSONL file, reporting every bad line (file, line, field) in one error.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.jsonl"
    >>> _ = p.write_text('{"item_id": "q", "criterion_id": "a", "verdict": "MET"}\\n')
    >>> [v.verdict.value for v in read_verdicts(p)]
    ['MET']
    """
    from assay.errors import InputError, Issue
    from assay.io.jsonl import iter_models

    issues: list[Issue] = []
    verdicts = [verdict for _, verdict in iter_models(path, Verdict, issues)]
    if issues:
        raise InputError(issues)
    return verdicts


def write_verdicts(verdicts, path) -> int:
    """Write verdicts as JSONL (the format :func:`read_verdicts` reads); returns the count."""
    from assay.io.jsonl import write_jsonl

    return write_jsonl((v.model_dump(mode="json", exclude_defaults=True) for v in verdicts), path)
