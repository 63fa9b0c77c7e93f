"""One criterion: a single, atomic requirement that a judge can rule on.

A criterion is *binary* (MET / UNMET), *ordinal* (ordered options) or *nominal* (unordered
options). Multi-choice options carry explicit values in [0, 1], so a score never depends on the
order in which options are shown; an option may be flagged ``na`` (not applicable), which the
scoring core treats as an abstention.

The sign of ``weight`` is the criterion's polarity: a negative weight marks an undesirable
behaviour (a penalty), and MET then means "the undesirable thing happened", as in HealthBench.

Example:
    >>> c = Criterion(text="Advises calling emergency services for anaphylaxis.", weight=10)
    >>> c.kind, c.is_penalty, c.id.startswith("c-")
    (<CriterionKind.BINARY: 'binary'>, False, True)
    >>> pain = Criterion(
    ...     id="pain", text="How well is pain management explained?", kind="ordinal",
    ...     options=[{"label": "poorly", "value": 0}, {"label": "partly", "value": 0.5},
    ...              {"label": "well", "value": 1}])
    >>> [o.value for o in pain.options]
    [0.0, 0.5, 1.0]
"""

from __future__ import annotations

import functools
import hashlib
import math
from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError


def _error(field: str, message: str) -> PydanticCustomError:
    """A model-level error that still points at one field (readers append ``ctx["loc"]``)."""
    return PydanticCustomError("criterion_shape", message.replace("{", "(").replace("}", ")"),
                               {"loc": (field,)})


class CriterionKind(StrEnum):
    BINARY = "binary"
    ORDINAL = "ordinal"
    NOMINAL = "nominal"


class Option(BaseModel):
    """One answer a multi-choice criterion allows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1)
    value: float | None = Field(default=None, description="Score in [0, 1]; None only if na.")
    na: bool = Field(default=False, description="Not applicable / cannot assess.")

    @model_validator(mode="after")
    def _value_in_unit_interval(self) -> Option:
        if self.value is None and not self.na:
            raise _error("value", f"option {self.label!r} needs a value in [0, 1] (or na: true)")
        if self.value is not None and not 0.0 <= self.value <= 1.0:
            raise _error("value", f"option {self.label!r} has value {self.value}, outside [0, 1]")
        return self


class Provenance(BaseModel):
    """Where a criterion came from, so generated and bank criteria stay auditable."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(
        default="user",
        description="physician, generated, bank, taxonomy, imported or user.",
    )
    author: str | None = None
    evidence: list[str] = Field(default_factory=list, description="Evidence references.")
    note: str | None = None
    stage: str | None = Field(default=None, description="Pipeline stage that wrote it (generated).")
    model: str | None = Field(default=None, description="Model that wrote it (generated).")


class CriterionExample(BaseModel):
    """A labelled example response for a criterion (few-shot calibration, documentation)."""

    model_config = ConfigDict(extra="forbid")

    response: str = Field(min_length=1)
    verdict: str = Field(min_length=1, description="MET, UNMET, CANNOT_ASSESS or an option label.")
    reason: str | None = None


@functools.lru_cache(maxsize=4096)  # a rubric's texts are derived again on each load
def derive_criterion_id(text: str) -> str:
    """A stable id from the criterion text (whitespace and case do not matter).

    >>> derive_criterion_id("Mentions  dose.") == derive_criterion_id("mentions dose.")
    True
    """
    normalised = " ".join(text.lower().split())  # same as collapsing \s+, several times faster
    return "c-" + hashlib.sha256(normalised.encode()).hexdigest()[:12]


def positional_criterion_ids(texts: list[str]) -> list[str]:
    """The ids criteria with these texts (in this order) get when no id is given.

    The first criterion with a given text keeps :func:`derive_criterion_id`; the k-th repeat of
    it (the same text, or one differing only in case and spacing) gets ``-k`` appended, so real
    HealthBench rubrics that state a criterion twice keep both copies, each with a stable id.
    Renumbering only happens when a copy of that same text is added or removed before it.

    >>> a, b, c = positional_criterion_ids(["Advises rest.", "Hydrates.", "advises  REST."])
    >>> c == a + "-2" and b != a
    True
    """
    seen: dict[str, int] = {}
    ids = []
    for text in texts:
        base = derive_criterion_id(text)
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


class Criterion(BaseModel):
    """A single requirement of a rubric. See the module docstring for an example."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(default="", description="Stable id; derived from the text when omitted.")
    text: str = Field(
        min_length=1,
        validation_alias=AliasChoices("text", "requirement", "criterion"),
        description="The requirement (for multi-choice criteria, the question).",
    )
    kind: CriterionKind = CriterionKind.BINARY
    options: list[Option] = Field(default_factory=list)
    weight: float = Field(
        default=1.0,
        validation_alias=AliasChoices("weight", "points"),
        description="Points; negative marks a penalty criterion.",
    )
    axis: str | None = None
    tags: list[str] = Field(default_factory=list)
    guidance: str | None = None
    examples: list[CriterionExample] = Field(default_factory=list)
    trigger: str | None = Field(default=None, description="When a router should activate it.")
    provenance: Provenance | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("criterion text is empty")
        return text

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        # A criterion given with options but no kind is ordinal, as in Autorubric.
        if isinstance(data, dict) and data.get("options") and "kind" not in data:
            data = {**data, "kind": data.get("scale_type", "ordinal")}
            data.pop("scale_type", None)
        return data

    @model_validator(mode="after")
    def _check_shape(self) -> Criterion:
        if not self.id:
            self.id = derive_criterion_id(self.text)
        if not math.isfinite(self.weight):
            raise _error("weight", f"weight is {self.weight}: expected a finite number")
        if self.weight == 0:
            raise _error("weight", "weight is 0: a criterion must count for or against the answer")
        if self.kind is CriterionKind.BINARY:
            if self.options:
                raise _error("options", "a binary criterion takes no options (use kind: ordinal/nominal)")
            return self
        scored = [o for o in self.options if not o.na]
        if len(scored) < 2:
            article = "an" if self.kind is CriterionKind.ORDINAL else "a"
            raise _error(
                "options", f"{article} {self.kind.value} criterion needs at least two scored options"
            )
        labels = [o.label for o in self.options]
        if len(set(labels)) != len(labels):
            raise _error("options", "option labels must be unique")
        return self

    @property
    def is_penalty(self) -> bool:
        """True for an undesirable behaviour (negative weight)."""
        return self.weight < 0

    @property
    def is_multi_choice(self) -> bool:
        return self.kind is not CriterionKind.BINARY

    def option(self, label: str) -> Option:
        """The option with this label (exact match first, then case/space-insensitive)."""
        for o in self.options:
            if o.label == label:
                return o
        wanted = " ".join(label.split()).casefold()
        for o in self.options:
            if " ".join(o.label.split()).casefold() == wanted:
                return o
        raise KeyError(f"criterion {self.id!r} has no option {label!r}")
