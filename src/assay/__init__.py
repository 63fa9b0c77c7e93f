"""Assay: rubric-based evaluation of LLM answers, built first for clinical and health AI.

The top-level names are imported lazily so that ``import assay`` (and ``assay --help``) stay
fast; ``from assay import Rubric`` works as usual.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on first use
    # "X as X" marks a re-export (PEP 484), so linters do not call these imports unused.
    from assay.api import agrade as agrade
    from assay.api import grade as grade
    from assay.evaluation import aevaluate as aevaluate
    from assay.evaluation import evaluate as evaluate
    from assay.generate import agenerate as agenerate
    from assay.generate import generate as generate
    from assay.item import Item as Item
    from assay.rubric import Criterion as Criterion
    from assay.rubric import CriterionKind as CriterionKind
    from assay.rubric import Option as Option
    from assay.rubric import Rubric as Rubric
    from assay.rubric import Taxonomy as Taxonomy
    from assay.sampling import asample as asample
    from assay.sampling import sample as sample
    from assay.verdict import Decision as Decision
    from assay.verdict import Verdict as Verdict

__version__ = "0.1.0"

_LAZY = {
    "agrade": "assay.api",
    "aevaluate": "assay.evaluation",
    "evaluate": "assay.evaluation",
    "agenerate": "assay.generate",
    "generate": "assay.generate",
    "grade": "assay.api",
    "asample": "assay.sampling",
    "sample": "assay.sampling",
    "Criterion": "assay.rubric",
    "CriterionKind": "assay.rubric",
    "Item": "assay.item",
    "Option": "assay.rubric",
    "Rubric": "assay.rubric",
    "Taxonomy": "assay.rubric",
    "Verdict": "assay.verdict",
    "Decision": "assay.verdict",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["__version__", *_LAZY]  # noqa: PLE0604  the lazily exported names (strings)
