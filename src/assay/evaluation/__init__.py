"""Evaluating a model: sample it, grade its answers, score and report in one resumable run.

:func:`evaluate` / :func:`aevaluate` (:mod:`assay.evaluation.api`, ``assay eval``) with one
:class:`EvalOptions`; one eval's stages (:mod:`assay.evaluation.run`), its directory
(:mod:`assay.evaluation.rundir`), two conditions compared (:mod:`assay.evaluation.conditions`),
its report (:mod:`assay.evaluation.report`) and the worst-at-k reliability curve
(:mod:`assay.evaluation.worst_at_k`).
"""

from assay.evaluation.api import aevaluate, evaluate
from assay.evaluation.options import EvalOptions
from assay.evaluation.run import EvalResult
from assay.evaluation.rundir import select_examples
from assay.evaluation.worst_at_k import expected_minimum, worst_at_k

__all__ = ["EvalOptions", "EvalResult", "aevaluate", "evaluate", "expected_minimum",
           "select_examples", "worst_at_k"]
