"""Rubric generation from evidence (seed 000): a query in, an instance-specific rubric out,
every criterion traced to the evidence it rests on.

* :func:`generate` / :func:`agenerate`: the job (batch, resume, budget, output files);
  ``assay generate QUERIES --kb KB --model SPEC --out rubrics.jsonl`` on the command line.
* :class:`Generator`: one query through the stages (:mod:`~assay.generate.pipeline`).
* :mod:`~assay.generate.rules`, :mod:`~assay.generate.board`: the deterministic rules.
* :func:`generic_rubric`: the paper's Table 8 baseline; ``method="one-step"`` the other one.
"""

import sys as _sys
from types import ModuleType as _ModuleType

from assay.generate.baselines import generic_rubric
from assay.generate.board import Board, Fact, build_board, safety_override
from assay.generate.job import GenerateResult, agenerate, generate
from assay.generate.pipeline import METHODS, GenerateConfig, Generator
from assay.generate.queries import Query, read_queries, write_rubrics
from assay.generate.schemas import SCHEMAS
from assay.generate.templates import load_templates

__all__ = [
    "METHODS",
    "SCHEMAS",
    "Board",
    "Fact",
    "GenerateConfig",
    "GenerateResult",
    "Generator",
    "Query",
    "agenerate",
    "build_board",
    "generate",
    "generic_rubric",
    "load_templates",
    "read_queries",
    "safety_override",
    "write_rubrics",
]


class _CallableModule(_ModuleType):
    """``assay.generate(...)`` works although ``assay.generate`` is also this package."""

    def __call__(self, *args, **kwargs):
        return generate(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
