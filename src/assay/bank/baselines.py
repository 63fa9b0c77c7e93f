"""Health-SCORE's fixed baseline rubrics (seed 004 §4.2, Table 2) as reward criteria, not only
as system prompts: ``single-axis`` and ``multi-axes`` are built-in banks, so
``assay serve --bank multi-axes``, ``build_scorer(judge, bank="single-axis")`` and
``assay grade|eval --rubric multi-axes`` grade against them.

* ``single-axis``: one criterion, the paper's one generic rubric word for word ("You are a
  helpful assistant. Please generate a response that follows user instructions.", the 15
  tokens of Table 2), the same text as the Single-Axis system prompt.
* ``multi-axes``: the five HealthBench-axis criteria of the Multi-Axes system prompt
  (:data:`assay.bank.system_prompt.MULTI_AXES`; the paper does not give their texts).

Both are positive (weight 1): the paper gives no polarity or points. The texts come from
:mod:`assay.bank.system_prompt`, so the in-context and the reward conditions never drift apart.

Example:
    >>> [c.id for c in baseline_rubric("multi-axes").criteria][:2]
    ['axis-accuracy', 'axis-completeness']
    >>> baseline_rubric("single-axis").criteria[0].text
    'You are a helpful assistant. Please generate a response that follows user instructions.'
"""

from __future__ import annotations

from assay.bank.system_prompt import MULTI_AXES, SINGLE_AXIS
from assay.rubric import Criterion, Provenance, Rubric

BASELINE_BANKS = ("single-axis", "multi-axes")
VERSION = "1.0.0"


def baseline_rubric(name: str) -> Rubric:
    """The ``single-axis`` or ``multi-axes`` rubric (see the module docstring)."""
    note = f"Health-SCORE (seed 004) Table 2, {name} baseline"
    if name == "single-axis":
        criteria = [Criterion(id="single-axis", text=SINGLE_AXIS, axis="instruction_following")]
    elif name == "multi-axes":
        criteria = list(MULTI_AXES)
    else:
        raise KeyError(f"unknown baseline rubric {name!r}; use {', '.join(BASELINE_BANKS)}")
    return Rubric(id=name, version=VERSION, metadata={"source": note}, criteria=[
        c.model_copy(update={"provenance": Provenance(source="bank", note=note)})
        for c in criteria])
