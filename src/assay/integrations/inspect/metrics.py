"""HealthBench's clipped mean as an Inspect metric, overall and per axis and theme.

Each scored sample carries its example metrics in ``Score.metadata["example_metrics"]``
(:func:`example_metrics`): for the ``healthbench`` formula, simple-evals' own per-example
metrics (``overall_score``, one per example tag, one per rubric tag rescored over its
criteria); for another formula, the sample's score as ``overall_score`` and under each
``theme:`` tag, and each axis's score under ``axis:NAME``. :func:`healthbench_clipped`
aggregates them with :func:`assay.scoring.healthbench_report`: each figure is the mean clipped
to [0, 1] with the bootstrap std of the clipped resample means, as simple-evals reports
HealthBench. Unscored samples (``Score.unscored()``) never reach a metric.

Inspect keeps one sample's metadata when it reduces several epochs: with ``epochs > 1`` the
axis and theme figures are those of each sample's first epoch, the overall one that of the
reduced values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric

from assay.scoring.healthbench import HealthBenchExampleScore, healthbench_report

EXAMPLE_METRICS = "example_metrics"


def example_metrics(score: float, *, healthbench: Mapping[str, float] | None = None,
                    axes: Mapping[str, float] | None = None,
                    tags: Iterable[str] = ()) -> dict[str, float]:
    """One sample's metrics for :func:`healthbench_clipped` (see the module docstring).

    >>> example_metrics(0.5, axes={"safety": 1.0}, tags=["theme:hedging", "lang:en"])
    {'overall_score': 0.5, 'theme:hedging': 0.5, 'axis:safety': 1.0}
    """
    if healthbench is not None:
        return dict(healthbench)
    out = {"overall_score": score}
    out.update({tag: score for tag in tags if tag.startswith("theme:")})
    out.update({f"axis:{axis}": value for axis, value in (axes or {}).items()})
    return out


@metric
def healthbench_clipped(bootstrap_samples: int = 1000, seed: int = 0) -> Metric:
    """The clipped mean of the samples' scores (``overall``) with its bootstrap std, and the
    same for each axis (``axis_NAME``) and theme (``theme_NAME``); see the module docstring.
    ``seed`` seeds the bootstrap (simple-evals draws unseeded)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        examples = [_example(s) for s in scores]
        if not examples:
            return {}
        report = healthbench_report(examples, n_bootstrap=bootstrap_samples, seed=seed)
        out: dict[str, float] = {"overall": report.overall, "bootstrap_std": report.bootstrap_std}
        for prefix, groups in (("axis", report.by_axis), ("theme", report.by_theme)):
            for name, stat in sorted(groups.items()):
                out[f"{prefix}_{name}"] = stat.mean
        return out

    return compute


def _example(sample: SampleScore) -> HealthBenchExampleScore:
    score = sample.score
    value = float(score.as_float())
    stored: Any = (score.metadata or {}).get(EXAMPLE_METRICS)
    metrics = {str(k): float(v) for k, v in stored.items()} if isinstance(stored, Mapping) else {}
    metrics["overall_score"] = value  # the reduced value when epochs were reduced
    return HealthBenchExampleScore(str(sample.sample_id), value, metrics)
