"""Every score in Assay: the formulas, the one item scorer, many items at once.

- :mod:`~assay.scoring.formulas`: per-criterion values, abstention strategies, the item
  formulas (Autorubric, raw, HealthBench, pass rate, reward), the length penalty;
- :mod:`~assay.scoring.healthbench`: HealthBench's per-example metrics and clipped aggregate;
- :mod:`~assay.scoring.item`: :class:`ItemScorer`, the one item scorer every caller uses, and
  :func:`group_by_item`, the one rule for duplicate verdicts (refused);
- :mod:`~assay.scoring.rubrics`: :class:`ItemRubrics`, the one item → rubric lookup;
- :mod:`~assay.scoring.table`: :func:`score_items` and :class:`ScoreTableBuilder`, many items
  with their mean, bootstrap CI and the official HealthBench report;
- :mod:`~assay.scoring.bootstrap`: the seeded, memory-bounded bootstrap.

NumPy is imported only when a bootstrap runs, so ``import assay.scoring`` stays light.

Example:
    >>> from assay.rubric import Rubric
    >>> from assay.verdict import Verdict
    >>> rubric = Rubric(criteria=[{"id": "a", "text": "States the dose.", "weight": 2},
    ...                           {"id": "p", "text": "Unsafe dose.", "weight": -1}])
    >>> verdicts = {"a": Verdict(item_id="q", criterion_id="a", decision="MET"),
    ...             "p": Verdict(item_id="q", criterion_id="p", decision="MET")}
    >>> ItemScorer().score(rubric.criteria, verdicts).score            # (2 - 1) / 2
    0.5
    >>> score_rubric(rubric.criteria, verdicts, formula="reward").score  # (1 - 1 + 1) / 2
    0.5
"""

from assay.scoring.bootstrap import bootstrap_means, mean_with_ci
from assay.scoring.formulas import (
    FORMULAS,
    AbstainStrategy,
    Abstention,
    Formula,
    LengthPenalty,
    RewardNormalization,
    ScoreResult,
    checked_formula,
    criterion_value,
    score_rubric,
    verdict_value,
)
from assay.scoring.healthbench import (
    ClippedMean,
    HealthBenchExampleScore,
    HealthBenchReport,
    HealthBenchValues,
    healthbench_example,
    healthbench_report,
)
from assay.scoring.item import ItemScorer, group_by_item
from assay.scoring.rubrics import ItemRubrics
from assay.scoring.table import ItemScore, ItemScores, ScoreTable, ScoreTableBuilder, score_items

__all__ = [
    "FORMULAS",
    "AbstainStrategy",
    "Abstention",
    "ClippedMean",
    "Formula",
    "HealthBenchExampleScore",
    "HealthBenchReport",
    "HealthBenchValues",
    "ItemRubrics",
    "ItemScore",
    "ItemScorer",
    "ItemScores",
    "LengthPenalty",
    "RewardNormalization",
    "ScoreResult",
    "ScoreTable",
    "ScoreTableBuilder",
    "bootstrap_means",
    "checked_formula",
    "criterion_value",
    "group_by_item",
    "healthbench_example",
    "healthbench_report",
    "mean_with_ci",
    "score_items",
    "score_rubric",
    "verdict_value",
]
