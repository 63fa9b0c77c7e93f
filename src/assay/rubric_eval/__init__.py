"""Is a rubric any good, and does it help? Seed 000's three tests of a rubric set.

* **Clinical Intent Alignment** (:mod:`.cia`, :mod:`.cia_run`): gold atomisation, a verifier
  per gold point, pooled coverage and the paired comparison of two rubric sets.
* **Near-miss discrimination** (:mod:`.perturb`, :mod:`.nearmiss`, :mod:`.pair_judge`,
  :mod:`.nearmiss_run`): one-fact perturbations of reference answers, judged pairwise with a
  rubric (or none), order swapped, several trials.
* **Rubric-guided refinement** (:mod:`.refine`, :mod:`.refine_run`): critique → edit plan →
  constrained rewrite, scored independently with the HealthBench grader.
* **Seed 000's released files** (:mod:`.released`) and their statistics (:mod:`.stats`).

Every model call is a stage of :mod:`assay.jobs` (named in :data:`.prompts.STAGES`), so jobs
resume, calls are traced and cached, and the fake judge scripts each stage by name. The
figures come from :mod:`assay.metrics` (coverage, discrimination, compare).
"""

from assay.rubric_eval.cia_run import CiaResult, arun_cia
from assay.rubric_eval.nearmiss_run import BuildResult, JudgeResult, arun_build, arun_judge
from assay.rubric_eval.refine_run import RefineResult, arun_refine
from assay.rubric_eval.released import (
    Query,
    RubricEntry,
    RubricSet,
    load_queries,
    read_conversations,
    read_responses,
    read_rubric_set,
)
from assay.rubric_eval.stats import RubricStats, rubric_stats

__all__ = [
    "BuildResult",
    "CiaResult",
    "JudgeResult",
    "Query",
    "RefineResult",
    "RubricEntry",
    "RubricSet",
    "RubricStats",
    "arun_build",
    "arun_cia",
    "arun_judge",
    "arun_refine",
    "load_queries",
    "read_conversations",
    "read_responses",
    "read_rubric_set",
    "rubric_stats",
]
