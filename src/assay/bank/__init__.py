"""Criterion banks (Health-SCORE, seed 004): a few general criteria distilled from many
instance rubrics, selected per prompt, used as RL rewards and in the system prompt.

* :func:`load_health_score` — the paper's 29 criteria, shipped (polarity inferred, versioned).
* :func:`build_bank` — embed every source criterion, cluster, one representative (medoid or
  LLM-distilled) per cluster, polarity, de-duplication, and a per-cluster report.
* :func:`bank_coverage` — one-to-one coverage of a reference set (the 29) by a bank, beside
  the most frequent source criteria of the same number.
* :class:`RelevanceSelector` — the paper's 1–5 relevance prompt per (conversation, criterion)
  (the routing layer's relevance router), a threshold and fallback, cached by prompt.
* :func:`system_prompt` — the rubric-in-context system message for each condition of §3.5.

Example:
    >>> bank = load_health_score()
    >>> len(bank.criteria), bank.version, [c.id for c in bank.penalties]
    (29, '1.0.0', ['hs-03', 'hs-08'])
"""

from assay.bank.builder import BankBuild, BankConfig, build_bank
from assay.bank.coverage import BankCoverage, Coverage, bank_coverage, one_to_one_coverage
from assay.bank.report import ClusterReport
from assay.bank.selection import CriteriaSelection, CriterionSelector, RelevanceSelector
from assay.bank.shipped import HEALTH_SCORE_PATH, load_bank, load_health_score
from assay.bank.sources import SourceCriterion, read_source_criteria
from assay.bank.system_prompt import CONDITIONS, system_prompt, with_system_prompt

__all__ = [
    "CONDITIONS",
    "HEALTH_SCORE_PATH",
    "BankBuild",
    "BankConfig",
    "BankCoverage",
    "ClusterReport",
    "Coverage",
    "CriteriaSelection",
    "CriterionSelector",
    "RelevanceSelector",
    "SourceCriterion",
    "bank_coverage",
    "build_bank",
    "load_bank",
    "load_health_score",
    "one_to_one_coverage",
    "read_source_criteria",
    "system_prompt",
    "with_system_prompt",
]
