"""Two verdict sets item by item (``assay compare --items``): each item's scores in A and B,
B − A from the one item scorer, and the criteria that flipped."""

from __future__ import annotations

import json

import pytest
from tests.metrics.test_compare_runs import _grade
from tests.report.conftest import AGREE, DISAGREE
from typer.testing import CliRunner

from assay.cli import app
from assay.metrics.item_changes import item_changes
from assay.metrics.scores import item_scores
from assay.metrics.sources import Rubrics, run_rubrics, run_verdicts
from assay.rubric import Criterion, Rubric
from assay.scoring import Abstention
from assay.verdict import Verdict

runner = CliRunner()


def test_each_items_scores_are_the_item_scorers_and_the_difference_is_b_minus_a():
    import random

    rng = random.Random(7)
    criteria = [Criterion(id=f"c{k}", text=f"Point {k}.", weight=w)
                for k, w in enumerate([5, 3, -4, 2, 6])]
    sides = [[Verdict(item_id=f"q{i}", criterion_id=c.id,
                      decision=rng.choice(["MET", "UNMET", "CANNOT_ASSESS"]))
              for i in range(30) for c in criteria] for _ in range(2)]
    rubrics = Rubrics(shared=Rubric(id="r", criteria=criteria))
    changes = item_changes(*sides, rubrics, abstention=Abstention.parse("zero"))
    by_item = {f"q{i}": criteria for i in range(30)}
    a = item_scores(by_item, sides[0], abstention=Abstention.parse("zero"))
    b = item_scores(by_item, sides[1], abstention=Abstention.parse("zero"))
    assert [c.item_id for c in changes] == sorted(by_item)
    for change in changes:
        assert (change.score_a, change.score_b) == (a[change.item_id], b[change.item_id])
        assert change.difference == pytest.approx(b[change.item_id] - a[change.item_id])
        theirs = {(v.criterion_id, v.decision) for v in sides[0] if v.item_id == change.item_id}
        mine = {(v.criterion_id, v.decision) for v in sides[1] if v.item_id == change.item_id}
        assert change.flipped == len({c for c, _ in theirs ^ mine})


def test_two_verdicts_on_one_criterion_are_refused_not_the_last_taken():
    criteria = [Criterion(id="a", text="A.")]
    twice = [Verdict(item_id="q", criterion_id="a", decision=d) for d in ("MET", "UNMET")]
    from assay.errors import InputError
    from assay.metrics.item_changes import item_change

    with pytest.raises(InputError):
        item_change("q", criteria, twice, twice[:1])


async def test_compare_items_lists_the_items_that_fell_with_the_flipped_criteria(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    b = await _grade(tmp_path, "b", [DISAGREE])  # the stinger is UNMET in B: every score falls
    result = runner.invoke(app, ["compare", str(a), str(b), "--items", "--json",
                                 str(tmp_path / "c.json")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Items: 4 of 4 changed" in result.output
    assert "Explains how to remove the stinger.: MET → UNMET" in result.output
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["scores"]["n_items"] == 4 and len(data["items"]) == 4
    first = data["items"][0]
    rubrics = run_rubrics(a)
    expected_a = item_scores(rubrics.criteria_by_item(["q0"]),
                             [v for v in run_verdicts(a) if v.item_id == "q0"])["q0"]
    assert first["score_a"] == pytest.approx(expected_a)
    assert first["difference"] == pytest.approx(first["score_b"] - first["score_a"])
    assert first["difference"] < 0
    flipped = [c for c in first["criteria"] if c["flipped"]]
    assert [(c["criterion_id"], c["a"], c["b"]) for c in flipped] == [("stinger", "MET", "UNMET")]
    tweezers = next(c for c in first["criteria"] if c["criterion_id"] == "tweezers")
    assert (tweezers["a"], tweezers["b"], tweezers["flipped"]) == ("UNMET", "UNMET", False)


async def test_compare_items_shows_a_penalty_as_detected_or_clear(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    b = await _grade(tmp_path, "b", [{**AGREE, "tweezers": "MET"}])
    result = runner.invoke(app, ["compare", str(a), str(b), "--items"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Recommends squeezing the stinger with tweezers.: CLEAR → DETECTED" in result.output


async def test_without_items_the_json_is_as_before(tmp_path):
    a = await _grade(tmp_path, "a", [AGREE])
    out = tmp_path / "c.json"
    assert runner.invoke(app, ["compare", str(a), str(a), "--json", str(out)]).exit_code == 0
    assert "items" not in json.loads(out.read_text())


def simple_evals_calculate_score(points: list[float], met: list[bool]) -> float | None:
    """simple-evals' ``healthbench_eval.calculate_score``, written out: the met criteria's points
    over the positive points (penalties count when met; the per-example score is not clipped)."""
    total_possible_points = sum(p for p in points if p > 0)
    if total_possible_points == 0:
        return None
    achieved_points = sum(p for p, criteria_met in zip(points, met, strict=True) if criteria_met)
    return achieved_points / total_possible_points


def test_healthbench_item_scores_and_differences_are_simple_evals_on_random_rubrics():
    import random

    rng = random.Random(11)
    sides: list[list[Verdict]] = [[], []]
    per_item, expected = {}, {}
    for i in range(40):
        points = [rng.choice([-10, -5, -2, 1, 2, 3, 5, 7, 10]) for _ in range(rng.randint(2, 9))]
        criteria = [Criterion(id=f"c{k}", text=f"Point {k}.", weight=p)
                    for k, p in enumerate(points)]
        per_item[f"q{i}"] = Rubric(id=f"r{i}", criteria=criteria)
        scores = []
        for side in sides:
            met = [rng.random() < 0.6 for _ in points]
            side += [Verdict(item_id=f"q{i}", criterion_id=c.id, decision="MET" if m else "UNMET")
                     for c, m in zip(criteria, met, strict=True)]
            scores.append(simple_evals_calculate_score(points, met))
        expected[f"q{i}"] = scores
    changes = item_changes(*sides, Rubrics(per_item=per_item), formula="healthbench")
    for change in changes:
        a, b = expected[change.item_id]
        if a is None:  # penalties only: no positive points, no score
            assert change.score_a is None and change.score_b is None
            continue
        assert change.score_a == pytest.approx(a, abs=1e-12)
        assert change.score_b == pytest.approx(b, abs=1e-12)
        assert change.difference == pytest.approx(b - a, abs=1e-12)
