"""Discrimination: does the rubric score a good response above a degraded one?

**Near-miss pairs (seed 000 §4.2–4.5).** Each pair (X_ref ≻ X_cand) is judged in one or more
calls (seed 000: 3 trials × both orders = 6 calls); a call gives both scores and optionally a
decision REF / CAND / SAME.

- ΔV̄ per pair = mean over calls of (V_ref − V_cand) (the position-debiased delta when the
  calls cover both orders);
- outcome = majority vote over the calls' decisions (a call without a decision votes by the
  sign of its delta): REF wins if it beats both other counts, CAND likewise, else a tie;
- μΔ = mean ΔV̄ over pairs, with a seeded percentile bootstrap CI over pairs (raw points);
- AUROC three ways: ``auroc_paper`` = P(ΔV̄ > 0), ties counting ½ (the paper's literal
  quantity); ``auroc_judge_vote`` = ROC AUC of ΔV̄ against [outcome = win] (what the seed's
  code computes: the judge's self-consistency); ``auroc_true_labels`` = ROC AUC of ΔV̄
  against the true pair labels, or, when every pair is ref ≻ cand by construction, the
  symmetric AUROC over {(ΔV̄ᵢ, 1), (−ΔV̄ᵢ, 0)}.

**Perturbation stress tests (seed 003 §5.3).** Given each item's clean and perturbed scores:
Detection Rate DR = 100·mean 1[S_pert < S_clean] (with a Wilson CI), and Mean Penalty
ΔMP = 100·mean (S_clean − S_pert)/S_clean over items with S_clean ≠ 0 (negative: the
evaluator rewarded the corruption); the relative difference of means is reported too.

Example:
    >>> r = discrimination([[PairCall(ref=8, cand=5)], [PairCall(ref=4, cand=6)],
    ...                     [PairCall(ref=7, cand=7)]], n_bootstrap=100)
    >>> r.mu_delta.value, r.wins, r.ties, r.losses, r.auroc_paper.value
    (0.3333333333333333, 1, 1, 1, 0.5)
    >>> s = stress_test({"a": 0.8, "b": 0.5}, {"a": 0.4, "b": 0.6})
    >>> s.detection_rate.value, round(s.mean_penalty.value, 6)
    (50.0, 15.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.metrics.results import Interval, Metric
from assay.metrics.uncertainty import bootstrap_ci, proportion

PairDecision = Literal["REF", "CAND", "SAME"]
Outcome = Literal["win", "tie", "loss"]


class PairCall(BaseModel):
    """One judge call on a pair: the reference's and the candidate's scores, and its decision."""

    model_config = ConfigDict(frozen=True)

    ref: float
    cand: float
    decision: PairDecision | None = None

    @property
    def vote(self) -> PairDecision:
        if self.decision is not None:
            return self.decision
        return "REF" if self.ref > self.cand else "CAND" if self.ref < self.cand else "SAME"


class DiscriminationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_pairs: int
    deltas: list[float]
    outcomes: list[Outcome]
    wins: int
    ties: int
    losses: int
    win_rate: Metric
    tie_rate: Metric
    mu_delta: Metric
    auroc_paper: Metric
    auroc_judge_vote: Metric
    auroc_true_labels: Metric


class StressTestReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    detection_rate: Metric  # percent
    mean_penalty: Metric  # percent, mean of per-item relative decreases
    mean_penalty_of_means: Metric  # percent, relative decrease of the mean score
    n_zero_clean: int  # items left out of mean_penalty (clean score 0)


def pair_delta(calls: Sequence[PairCall]) -> float:
    """ΔV̄: the mean of (ref − cand) over a pair's calls."""
    if not calls:
        raise ValueError("a pair needs at least one judge call")
    return float(np.mean([c.ref - c.cand for c in calls]))


def majority_outcome(calls: Sequence[PairCall]) -> Outcome:
    """Seed 000's vote: REF (win) or CAND (loss) only with a strict plurality, else tie."""
    votes = Counter(c.vote for c in calls)
    ref, cand, same = votes["REF"], votes["CAND"], votes["SAME"]
    if ref > max(cand, same):
        return "win"
    if cand > max(ref, same):
        return "loss"
    return "tie"


def roc_auc(labels: Sequence[bool], scores: Sequence[float]) -> Metric:
    """ROC AUC (scikit-learn), None when only one class is present."""
    from sklearn.metrics import roc_auc_score

    if len(set(map(bool, labels))) < 2:
        return Metric.undefined("only one class present: AUROC is undefined", n=len(labels))
    return Metric.of(roc_auc_score(labels, scores), n=len(labels))


def paper_auroc(deltas: Sequence[float]) -> Metric:
    """Seed 000's literal AUROC: the share of pairs with ΔV̄ > 0, ties counting ½."""
    if not deltas:
        return Metric.undefined("no pairs")
    d = np.asarray(deltas, float)
    return Metric.of(float(np.mean((d > 0) + 0.5 * (d == 0))), n=len(d))


def discrimination(
    pairs: Sequence[Sequence[PairCall]],
    *,
    true_labels: Sequence[bool] | None = None,
    n_bootstrap: int = 1000,
    seed: int = 0,
) -> DiscriminationReport:
    """μΔ, win/tie/loss and the three AUROCs over near-miss ``pairs`` (see module docstring).

    ``true_labels[i]`` says whether pair i's reference is truly the better response; omit it
    when every pair is ref ≻ cand by construction.
    """
    deltas = [pair_delta(calls) for calls in pairs]
    outcomes: list[Outcome] = [majority_outcome(calls) for calls in pairs]
    n = len(deltas)
    counts = Counter(outcomes)
    wins = [o == "win" for o in outcomes]
    if true_labels is not None:
        if len(true_labels) != n:
            raise ValueError(f"{n} pairs but {len(true_labels)} true labels")
        auroc_true = roc_auc(true_labels, deltas)
    elif n:
        auroc_true = roc_auc([True] * n + [False] * n, [*deltas, *(-x for x in deltas)])
    else:
        auroc_true = Metric.undefined("no pairs")
    return DiscriminationReport(
        n_pairs=n,
        deltas=deltas,
        outcomes=outcomes,
        wins=counts["win"],
        ties=counts["tie"],
        losses=counts["loss"],
        win_rate=bootstrap_ci(wins, n_resamples=n_bootstrap, seed=seed) if n
        else Metric.undefined("no pairs"),
        tie_rate=proportion(counts["tie"], n),
        mu_delta=bootstrap_ci(deltas, n_resamples=n_bootstrap, seed=seed) if n
        else Metric.undefined("no pairs"),
        auroc_paper=paper_auroc(deltas),
        auroc_judge_vote=roc_auc(wins, deltas),
        auroc_true_labels=auroc_true,
    )


def stress_test(
    clean: Mapping[str, float | None], perturbed: Mapping[str, float | None]
) -> StressTestReport:
    """Detection Rate and Mean Penalty over items scored in both settings (percentages)."""
    ids = sorted(k for k in clean.keys() & perturbed.keys()
                 if clean[k] is not None and perturbed[k] is not None)
    c = np.array([clean[k] for k in ids], float)
    p = np.array([perturbed[k] for k in ids], float)
    n = len(ids)
    if n == 0:
        none = Metric.undefined("no item scored in both settings")
        return StressTestReport(n=0, detection_rate=none, mean_penalty=none,
                                mean_penalty_of_means=none, n_zero_clean=0)
    detected = proportion(int(np.sum(p < c)), n)
    assert detected.value is not None and detected.ci is not None
    dr = Metric(value=100 * detected.value, n=n, ci=Interval(
        low=100 * detected.ci.low, high=100 * detected.ci.high, level=detected.ci.level,
        method="wilson"))
    nonzero = c != 0
    mp = (
        Metric.of(100 * float(np.mean((c[nonzero] - p[nonzero]) / c[nonzero])),
                  n=int(nonzero.sum()))
        if nonzero.any()
        else Metric.undefined("every clean score is 0", n=0)
    )
    mean_clean = float(c.mean())
    mpm = (
        Metric.of(100 * (mean_clean - float(p.mean())) / mean_clean, n=n)
        if mean_clean != 0
        else Metric.undefined("the mean clean score is 0", n=n)
    )
    return StressTestReport(n=n, detection_rate=dr, mean_penalty=mp,
                            mean_penalty_of_means=mpm, n_zero_clean=int((~nonzero).sum()))
