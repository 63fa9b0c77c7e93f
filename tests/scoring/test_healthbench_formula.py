"""HealthBench's official score: hand-worked on real dev.jsonl examples, and the aggregate
checked against a literal port of simple-evals' ``_compute_clipped_stats``."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from assay.rubric import Criterion
from assay.scoring import HealthBenchExampleScore, healthbench_example, healthbench_report
from assay.verdict import Verdict


def load_example(path, line_number: int) -> tuple[dict, list[Criterion]]:
    with open(path) as f:
        row = json.loads(f.readlines()[line_number - 1])
    criteria = [
        Criterion(id=f"r{i}", text=r["criterion"], weight=r["points"], tags=r["tags"])
        for i, r in enumerate(row["rubrics"])
    ]
    return row, criteria


def mark(criteria: list[Criterion], met: set[int]) -> dict[str, Verdict]:
    return {
        c.id: Verdict(item_id="x", criterion_id=c.id, decision="MET" if i in met else "UNMET")
        for i, c in enumerate(criteria)
    }


def test_pneumonia_example_scores_met_points_over_positive_points(healthbench_dev_path):
    # dev.jsonl line 2 (prompt 553b75c2...): 19 criteria, positive points
    # 8+8+8+8+8+10+9+8+8+8+8+7+7+7+5+5 = 122. Met: #0 (+8), #3 (+8), #6 (+10), #12 (+8)
    # and the penalties #5 (-7) and #16 (-8): 34 - 15 = 19.  19 / 122.
    row, criteria = load_example(healthbench_dev_path, 2)
    result = healthbench_example(criteria, mark(criteria, {0, 3, 6, 12, 5, 16}), row["example_tags"])
    assert result.score == 19 / 122
    # example tags inherit the overall score
    assert result.metrics["theme:global_health"] == 19 / 122
    # completeness: positives 8+10+9+8+8+7+7 = 57; met 8 - 7 + 10 + 8 - 8 = 11
    assert result.metrics["axis:completeness"] == 11 / 57


def test_example_score_is_not_clipped_per_example(healthbench_dev_path):
    # dev.jsonl line 1 (bee sting): only penalties met: -10 - 8 - 6 - 4 - 9 - 7 - 7 - 8 - 6 - 4
    row, criteria = load_example(healthbench_dev_path, 1)
    penalties = {i for i, c in enumerate(criteria) if c.weight < 0}
    positive_total = sum(c.weight for c in criteria if c.weight > 0)
    result = healthbench_example(criteria, mark(criteria, penalties), row["example_tags"])
    assert result.score == -69 / positive_total
    assert result.score < 0


def test_rubric_tag_without_positive_points_is_left_out():
    criteria = [
        Criterion(id="a", text="good", weight=5, tags=["axis:accuracy"]),
        Criterion(id="b", text="bad", weight=-5, tags=["axis:communication_quality"]),
    ]
    result = healthbench_example(criteria, mark(criteria, {0}))
    assert "axis:communication_quality" not in result.metrics
    assert result.metrics["axis:accuracy"] == 1.0


def test_mean_is_clipped_but_examples_are_not():
    examples = [
        HealthBenchExampleScore("a", -0.5, {"overall_score": -0.5}),
        HealthBenchExampleScore("b", 0.3, {"overall_score": 0.3}),
    ]
    assert healthbench_report(examples).overall == 0.0
    examples.append(HealthBenchExampleScore("c", 1.5, {"overall_score": 1.5}))
    assert healthbench_report(examples).overall == pytest.approx(1.3 / 3)


def simple_evals_aggregate(examples: list[HealthBenchExampleScore], seed: int) -> dict:
    """A literal port of simple-evals' _compute_clipped_stats/_aggregate_get_clipped_mean."""

    def stats(values, stat):
        if stat == "mean":
            return np.clip(np.mean(values), 0, 1)
        if stat == "n_samples":
            return len(values)
        samples = [np.random.choice(values, len(values)) for _ in range(1000)]
        return np.std([stats(list(s), "mean") for s in samples])

    name2values = defaultdict(list)
    for example in examples:
        for name, value in example.metrics.items():
            name2values[name].append(value)
        name2values["score"].append(example.score)
    np.random.seed(seed)
    final = {}
    for name, values in name2values.items():
        for stat in ["mean", "n_samples", "bootstrap_std"]:
            final[name if stat == "mean" else f"{name}:{stat}"] = stats(values, stat)
    return final


def test_report_equals_simple_evals_to_the_last_bit(healthbench_dev_path):
    rng = np.random.default_rng(3)
    examples = []
    with open(healthbench_dev_path) as f:
        for line_number, line in enumerate(f, 1):
            row, criteria = load_example(healthbench_dev_path, line_number)
            met = {i for i in range(len(criteria)) if rng.random() < 0.5}
            examples.append(
                healthbench_example(criteria, mark(criteria, met), row["example_tags"],
                                    example_id=row["prompt_id"])
            )
    expected = simple_evals_aggregate(examples, seed=11)
    report = healthbench_report(examples, seed=11)
    assert report.overall == expected.pop("score")
    assert report.bootstrap_std == expected.pop("score:bootstrap_std")
    assert report.n == expected.pop("score:n_samples") == 60
    assert report.metrics == expected
    assert set(report.by_axis) == {
        "accuracy", "completeness", "context_awareness", "communication_quality",
        "instruction_following",
    }
    assert report.by_theme["global_health"].mean == expected["theme:global_health"]


def test_bootstrap_is_identical_for_the_same_seed_and_differs_for_another():
    examples = [HealthBenchExampleScore(str(i), i / 10, {"overall_score": i / 10}) for i in range(10)]
    assert healthbench_report(examples, seed=5) == healthbench_report(examples, seed=5)
    assert healthbench_report(examples, seed=5).bootstrap_std != healthbench_report(
        examples, seed=6
    ).bootstrap_std
