"""Meta-evaluation: agreement with human labels, reliability between judges, confidence
intervals and paired tests, discrimination, CIA coverage and HealthBench's meta-eval.

Every function returns typed results; a figure that is undefined on the data is ``None`` with a
reason (:class:`Metric`), never NaN.

Example:
    >>> from assay.metrics import binary_agreement
    >>> binary_agreement([True, False, True], [True, False, False]).accuracy.value
    0.6666666666666666
"""

from assay.metrics.agreement import AgreementReport, agreement
from assay.metrics.agreement_binary import binary_agreement
from assay.metrics.agreement_na import na_diagnostics
from assay.metrics.agreement_nominal import nominal_agreement
from assay.metrics.agreement_ordinal import ordinal_agreement
from assay.metrics.compare import compare_scores, compare_verdicts
from assay.metrics.coverage import cia, compare_coverage
from assay.metrics.coverage_gold import coverage_summary
from assay.metrics.discrimination import PairCall, discrimination, stress_test
from assay.metrics.healthbench_meta import (
    MetaEvalRow,
    grader_labels_from_verdicts,
    meta_eval_items,
    meta_evaluate,
    meta_evaluate_by_judge,
    read_meta_eval,
)
from assay.metrics.inter_judge import inter_judge
from assay.metrics.pairs import discrimination_summary, pairs_from_verdicts, read_pair_calls
from assay.metrics.reliability import fleiss_kappa, icc, krippendorff_alpha, percent_agreement
from assay.metrics.results import Interval, Metric, StatTest
from assay.metrics.scores import item_scores, score_agreement
from assay.metrics.significance import (
    cohens_d,
    mcnemar_exact,
    paired_permutation,
    two_proportion_ztest,
    wilcoxon_signed_rank,
)
from assay.metrics.sources import Rubrics, read_rubrics, read_source, verdicts_of
from assay.metrics.summary import AgreementSummary, agreement_summary, comparison
from assay.metrics.uncertainty import bootstrap_ci, proportion, wilson_interval

__all__ = [
    "AgreementReport",
    "AgreementSummary",
    "Interval",
    "MetaEvalRow",
    "Metric",
    "PairCall",
    "Rubrics",
    "StatTest",
    "agreement",
    "agreement_summary",
    "binary_agreement",
    "bootstrap_ci",
    "cia",
    "cohens_d",
    "compare_coverage",
    "compare_scores",
    "compare_verdicts",
    "comparison",
    # CLI-backed summaries: assay meta-eval, assay discrimination, assay coverage
    "coverage_summary",
    "discrimination",
    "discrimination_summary",
    "fleiss_kappa",
    "grader_labels_from_verdicts",
    "icc",
    "inter_judge",
    "item_scores",
    "krippendorff_alpha",
    "mcnemar_exact",
    "meta_eval_items",
    "meta_evaluate",
    "meta_evaluate_by_judge",
    "na_diagnostics",
    "nominal_agreement",
    "ordinal_agreement",
    "paired_permutation",
    "pairs_from_verdicts",
    "percent_agreement",
    "proportion",
    "read_meta_eval",
    "read_pair_calls",
    "read_rubrics",
    "read_source",
    "score_agreement",
    "stress_test",
    "two_proportion_ztest",
    "verdicts_of",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
