"""The reward failure policy, and the failure counts shown to every trainer (what each policy
does: :mod:`assay.rewards.scorer`, which imports this module; this one imports nothing of the
scorer's and counts anything with a ``reward`` and a ``failed`` mapping, :class:`Outcome`).

Example:
    >>> FAILURE_POLICIES
    ('no-reward', 'unmet', 'penalty-met', 'skip')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, get_args

from assay.errors import ConfigError

FailurePolicy = Literal["no-reward", "unmet", "penalty-met", "skip"]
FAILURE_POLICIES: tuple[FailurePolicy, ...] = get_args(FailurePolicy)


def checked_failure_policy(value: str) -> FailurePolicy:
    """``value`` as a reward failure policy; a ConfigError names the choices.

    >>> checked_failure_policy("penalty-met")
    'penalty-met'
    """
    if not _is_failure_policy(value):
        raise ConfigError(f"unknown failure policy {value!r}; use {', '.join(FAILURE_POLICIES)}")
    return value


def _is_failure_policy(value: str) -> TypeGuard[FailurePolicy]:
    return value in FAILURE_POLICIES


class Outcome(Protocol):
    """What the counts read of a sample's result (a :class:`~assay.rewards.RewardResult`): its
    reward (None when withheld) and its failures (criterion id, ``selection`` or ``input`` →
    why)."""

    @property
    def reward(self) -> float | None: ...

    @property
    def failed(self) -> Mapping[str, str]: ...


@dataclass
class FailureCounts:
    """What went wrong since the scorer started (``/metrics``; adapters report per batch)."""

    samples: int = 0          # samples with any failure
    withheld: int = 0         # ... of which left without a reward
    calls: int = 0            # failed criterion calls (not sent ones included)
    selections: int = 0       # prompts whose selection failed for good
    selection_retries: int = 0
    oversized: int = 0        # samples refused for a size limit

    def add(self, results: Sequence[Outcome]) -> None:
        for r in results:
            if r.failed:
                self.samples += 1
                self.withheld += r.reward is None
                self.calls += sum(k not in ("selection", "input") for k in r.failed)
                self.oversized += "input" in r.failed

    def as_metrics(self) -> dict[str, int]:
        """Prometheus names (without the ``assay_`` prefix)."""
        return {"reward_failed_samples_total": self.samples,
                "reward_withheld_samples_total": self.withheld,
                "reward_failed_calls_total": self.calls,
                "reward_selection_failures_total": self.selections,
                "reward_selection_retries_total": self.selection_retries,
                "reward_oversized_samples_total": self.oversized}


def batch_failures(results: Sequence[Outcome]) -> dict[str, float]:
    """One batch's failures as trainer metrics: the share of samples with a failure, the
    share left without a reward, and the failed criterion calls per sample.

    >>> from types import SimpleNamespace as Result
    >>> batch_failures([Result(reward=None, failed={"a": "500"}), Result(reward=1.0, failed={})])
    {'failed_sample_rate': 0.5, 'withheld_sample_rate': 0.5, 'failed_calls_per_sample': 0.5}
    """
    counts = FailureCounts()
    counts.add(results)
    n = max(1, len(results))
    return {"failed_sample_rate": counts.samples / n, "withheld_sample_rate": counts.withheld / n,
            "failed_calls_per_sample": counts.calls / n}
