"""HealthBench as simple-evals computes it: per-example scores, then the clipped mean.

:func:`healthbench_example` scores one example (overall, each example tag, each rubric tag
rescored over its own criteria); :func:`healthbench_report` aggregates examples into the
official figures: the mean clipped to [0, 1] with the bootstrap std of the clipped resample
means.

Example:
    >>> from assay.rubric import Criterion
    >>> from assay.verdict import Verdict
    >>> criteria = [Criterion(id="a", text="States the dose.", weight=6, tags=["axis:accuracy"]),
    ...             Criterion(id="b", text="Advises seeing a doctor.", weight=4)]
    >>> verdicts = {"a": Verdict(item_id="q", criterion_id="a", decision="MET"),
    ...             "b": Verdict(item_id="q", criterion_id="b", decision="UNMET")}
    >>> healthbench_example(criteria, verdicts, ["theme:dosing"]).metrics
    {'overall_score': 0.6, 'theme:dosing': 0.6, 'axis:accuracy': 1.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.errors import InputError, Issue
from assay.rubric.criterion import Criterion
from assay.scoring.bootstrap import bootstrap_means
from assay.scoring.formulas import Abstention, criterion_value, score_points
from assay.verdict import Verdict


@dataclass(frozen=True, slots=True)
class HealthBenchExampleScore:
    """One example's HealthBench metrics, named as simple-evals names them.

    ``metrics`` holds ``overall_score``, one entry per example tag (each equal to the overall
    score) and one per rubric tag present (that tag's criteria rescored alone; tags whose
    criteria have no positive points are left out).
    """

    example_id: str
    score: float
    metrics: dict[str, float] = field(default_factory=dict)


def healthbench_example(
    criteria: Sequence[Criterion],
    verdicts: Mapping[str, Verdict],
    example_tags: Iterable[str] = (),
    *,
    abstention: Abstention = Abstention(),
    example_id: str = "",
) -> HealthBenchExampleScore:
    """Score one HealthBench example exactly as simple-evals' ``grade_sample`` does."""

    # Each criterion's value is worked out once (it raises on a verdict that does not fit)
    # and every subset is summed by score_points, in the rubric's order, as score_rubric is.
    points = [(criterion_value(c, verdicts.get(c.id), abstention), c.weight) for c in criteria]
    overall = score_points(points, formula="healthbench").score
    if overall is None:
        raise InputError(
            Issue(None, None, f"example[{example_id}]", "no positive points to score against")
        )
    metrics: dict[str, float] = {"overall_score": overall}
    for tag in example_tags:
        metrics[tag] = overall
    by_tag: dict[str, list[tuple[float | None, float]]] = {}
    for criterion, point in zip(criteria, points):
        for tag in dict.fromkeys(criterion.tags):
            by_tag.setdefault(tag, []).append(point)
    for tag, subset in by_tag.items():
        tag_score = score_points(subset, formula="healthbench").score
        if tag_score is not None:
            metrics[tag] = tag_score
    return HealthBenchExampleScore(example_id, overall, metrics)


@dataclass(frozen=True, slots=True)
class ClippedMean:
    """A HealthBench aggregate: the mean clipped to [0, 1], its bootstrap std and n."""

    mean: float
    bootstrap_std: float
    n_samples: int


@dataclass(frozen=True, slots=True)
class HealthBenchReport:
    """The official HealthBench result.

    ``overall`` is the clipped mean of the example scores; ``metrics`` is the flat dict that
    simple-evals reports (``overall_score``, ``overall_score:n_samples``,
    ``overall_score:bootstrap_std``, and the same three for every tag); ``by_axis`` and
    ``by_theme`` pick out the ``axis:`` rubric tags and the ``theme:`` example tags.
    """

    overall: float
    bootstrap_std: float
    n: int
    metrics: dict[str, float]
    by_axis: dict[str, ClippedMean]
    by_theme: dict[str, ClippedMean]


class HealthBenchValues:
    """Example metrics gathered as they come, one compact column per metric name, for
    :func:`healthbench_report` (a run's scoring adds 100,000 examples without keeping them)."""

    def __init__(self) -> None:
        from array import array

        self._array = array
        self.columns: dict[str, Any] = {}

    def add(self, example: HealthBenchExampleScore) -> None:
        columns = self.columns
        for name, value in example.metrics.items():
            column = columns.get(name)
            if column is None:
                column = columns[name] = self._array("d")
            column.append(value)
        score = columns.get("score")
        if score is None:
            score = columns["score"] = self._array("d")
        score.append(example.score)

    def extend(self, later: HealthBenchValues) -> None:
        """Append ``later``'s examples after these, as :meth:`add` would have in turn: each
        column's values follow on, and a column first met in ``later`` comes after every
        column here (the bootstrap draws go column by column, in that order)."""
        for name, values in later.columns.items():
            column = self.columns.get(name)
            if column is None:
                self.columns[name] = self._array("d", values)
            else:
                column.extend(values)

    def __bool__(self) -> bool:
        return bool(self.columns)

    def report(self, *, n_bootstrap: int = 1000, seed: int = 0) -> HealthBenchReport:
        return _clipped_report(self.columns, n_bootstrap=n_bootstrap, seed=seed)


def healthbench_report(
    examples: Iterable[HealthBenchExampleScore], *, n_bootstrap: int = 1000, seed: int = 0
) -> HealthBenchReport:
    """Aggregate example scores as simple-evals' ``_aggregate_get_clipped_mean`` does.

    The bootstrap draws ``n_bootstrap`` resamples of each metric's values and takes the
    (population) std of their clipped means. simple-evals draws from NumPy's unseeded global
    generator; here one ``numpy.random.RandomState(seed)`` is consumed in the same order, so
    the figures equal simple-evals' after ``numpy.random.seed(seed)`` and are reproducible.
    """
    values = HealthBenchValues()
    for example in examples:
        values.add(example)
    return values.report(n_bootstrap=n_bootstrap, seed=seed)


def _clipped_report(name2values: Mapping[str, Sequence[float]], *, n_bootstrap: int,
                    seed: int) -> HealthBenchReport:
    import numpy as np

    if not name2values:
        raise InputError("no HealthBench examples to aggregate")
    rng = np.random.RandomState(seed)
    stats: dict[str, ClippedMean] = {}
    for name, values in name2values.items():
        array = np.asarray(values, dtype=float)
        n = len(array)

        def draw(rows: int, n: int = n) -> np.ndarray:
            return rng.randint(0, n, size=(rows, n))

        means = np.clip(bootstrap_means(array, n_bootstrap, draw), 0, 1)
        stats[name] = ClippedMean(
            float(np.clip(array.mean(), 0, 1)), float(np.std(means)), len(array)
        )

    score = stats.pop("score")
    metrics: dict[str, float] = {}
    for name, stat in stats.items():
        metrics[name] = stat.mean
        metrics[f"{name}:n_samples"] = stat.n_samples
        metrics[f"{name}:bootstrap_std"] = stat.bootstrap_std
    return HealthBenchReport(
        overall=score.mean,
        bootstrap_std=score.bootstrap_std,
        n=score.n_samples,
        metrics=metrics,
        by_axis={k.removeprefix("axis:"): v for k, v in stats.items() if k.startswith("axis:")},
        by_theme={
            k.removeprefix("theme:"): v for k, v in stats.items() if k.startswith("theme:")
        },
    )
