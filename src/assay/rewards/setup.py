"""Building a :class:`RewardScorer` from plain settings (used by the CLI, ``assay serve`` and
verl's environment-configured entry point).

Example:
    >>> from assay.judges import run_sync
    >>> scorer = build_scorer("vllm:Qwen/Qwen3-8B", bank="health-score")
    >>> len(scorer.fixed), scorer.judge.config.temperature   # HealthBench's grader sampling
    (29, 0.5)
    >>> run_sync(scorer.aclose())
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from assay.rewards.failures import checked_failure_policy
from assay.rewards.scorer import RewardScorer, checked_normalization, checked_template

if TYPE_CHECKING:
    from assay.rubric import Rubric


def build_scorer(
    judge: str,
    *,
    bank: str | Path | None = "health-score",
    select: bool = False,
    selector_judge: str | None = None,
    threshold: int = 4,
    fallback: str = "best",
    store: str | Path | None = None,
    cache: str | Path | None = None,
    template: str = "healthbench",
    normalization: str = "minmax",
    config_file: str | Path | None = None,
    budget_usd: float | None = None,
    on_failure: str = "no-reward",
    rubric_writer: str | None = None,
) -> RewardScorer:
    """A scorer over ``judge`` (a spec): all of ``bank`` per prompt, or with ``select`` the
    criteria the relevance selector keeps (its calls stored in ``store``, so selections survive
    restarts, and ``assay bank select --store`` can precompute them). The selector asks
    ``selector_judge`` (default: the same model) with its own settings — not the grader
    template's sampling — so its calls match those of ``assay bank select``.
    ``bank=None``: every sample must bring its own criteria. ``budget_usd``: a hard cap
    shared by the grader and the selector (:class:`~assay.judges.Budget`); once it is
    reached, every reward is None. ``on_failure``: what a sample with a failed criterion call
    gets (see :mod:`assay.rewards.scorer`; default ``no-reward``). ``bank="llm-generated"``:
    Health-SCORE's LLM-Generated baseline, a rubric written per prompt by ``rubric_writer``
    (default: the same model), its calls stored in ``store`` (:mod:`assay.bank.llm_rubric`)."""
    from assay.bank.selection import RelevanceSelector, checked_fallback
    from assay.bank.shipped import load_bank
    from assay.errors import ConfigError
    from assay.grading.grader import GradingConfig
    from assay.jobs import CallStore, StageCaller
    from assay.judges import Budget, ResponseCache, make_judge
    from assay.judges.config import JudgeConfig
    from assay.judges.specs import config_from

    policy = checked_failure_policy(on_failure)
    config = config_from(judge, config_file)
    if template == "healthbench":
        defaults = GradingConfig(templates={"all": "healthbench"}).sampling_defaults()
        update = {k: v for k, v in defaults.items() if getattr(config, k) is None}
        config = JudgeConfig.model_validate({**config.model_dump(), **update})
    response_cache = ResponseCache(cache) if cache else None
    budget = Budget(budget_usd) if budget_usd is not None else None
    client = make_judge(config, cache=response_cache, budget=budget)
    if bank == "llm-generated":
        from assay.bank.llm_rubric import LlmRubricWriter

        if select:
            raise ConfigError("--select picks from a bank; llm-generated writes each prompt's "
                              "rubric instead")
        writer = make_judge(config_from(rubric_writer or judge, config_file),
                            cache=response_cache, budget=budget)
        source = LlmRubricWriter(StageCaller(writer, CallStore.open(
            store or "assay-selection.sqlite")))
        return RewardScorer(client, criteria=source, template=checked_template(template),
                            normalization=checked_normalization(normalization),
                            on_failure=policy)
    rubric = load_bank(bank) if bank is not None else None
    criteria: Rubric | RelevanceSelector | None = rubric
    if select:
        if rubric is None:
            raise ConfigError("per-prompt selection needs a bank")
        calls = CallStore.open(store or "assay-selection.sqlite")
        selector_client = make_judge(config_from(selector_judge or judge, config_file),
                                     cache=response_cache, budget=budget)
        criteria = RelevanceSelector(StageCaller(selector_client, calls), rubric,
                                     threshold=threshold, fallback=checked_fallback(fallback))
    return RewardScorer(client, criteria=criteria, template=checked_template(template),
                        normalization=checked_normalization(normalization), on_failure=policy)
