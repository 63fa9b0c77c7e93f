"""Evaluating a model: sample it, grade its answers, score and report in one resumable run.

:func:`evaluate` / :func:`aevaluate` (:mod:`assay.evaluation.run`, ``assay eval``); the
worst-at-k reliability curve (:mod:`assay.evaluation.worst_at_k`).
"""

from assay.evaluation.run import EvalResult, aevaluate, evaluate, select_examples
from assay.evaluation.worst_at_k import expected_minimum, worst_at_k

__all__ = ["EvalResult", "aevaluate", "evaluate", "expected_minimum", "select_examples",
           "worst_at_k"]
