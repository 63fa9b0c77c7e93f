"""RubricsTree's weighted pass rate with tree auto-weights, and Health-SCORE's ±1 reward."""

from __future__ import annotations

import pytest

from assay.rubric import Criterion, Taxonomy
from assay.scoring import score_rubric
from assay.verdict import Verdict

TREE = Taxonomy(
    id="pha",
    root={"id": "root", "name": "all", "children": [
        {"id": "skills", "name": "Medical skills", "children": [
            {"id": "k", "name": "Knowledge", "children": [
                {"id": "k1", "name": "k1", "criterion": {"id": "k1", "text": "Correct dose."}},
                {"id": "k2", "name": "k2", "criterion": {"id": "k2", "text": "Names drug class."}},
            ]},
            {"id": "s", "name": "Safety", "children": [
                {"id": "s1", "name": "s1", "criterion": {"id": "s1", "text": "Refers chest pain."}},
            ]},
        ]},
        {"id": "memory", "name": "Health memory", "children": [
            {"id": "m1", "name": "m1", "criterion": {"id": "m1", "text": "Uses HbA1c."}},
            {"id": "m2", "name": "m2", "criterion": {"id": "m2", "text": "Uses LDL-C."}},
        ]},
    ]},
)


def met(*ids: str, unmet: tuple[str, ...] = ()) -> dict[str, Verdict]:
    out = {i: Verdict(item_id="q", criterion_id=i, decision="MET") for i in ids}
    out.update({i: Verdict(item_id="q", criterion_id=i, decision="UNMET") for i in unmet})
    return out


def test_auto_weights_are_products_of_one_over_children_along_the_path():
    # root has 2 children; skills has 2; k has 2 leaves; s has 1; memory has 2
    assert TREE.auto_weights() == {
        "k1": 1 / 8, "k2": 1 / 8, "s1": 1 / 4, "m1": 1 / 4, "m2": 1 / 4
    }
    assert sum(TREE.auto_weights().values()) == 1.0


def test_pass_rate_over_active_leaves_renormalises_the_tree_weights():
    # active leaves k1 (1/8), s1 (1/4), m1 (1/4); k1 and m1 pass: (1/8 + 1/4) / (5/8) = 0.6
    rubric = TREE.to_rubric(["k1", "s1", "m1"])
    result = score_rubric(rubric.criteria, met("k1", "m1", unmet=("s1",)), formula="pass-rate")
    assert result.score == pytest.approx(0.6)


def test_pass_rate_counts_an_unmet_penalty_as_a_pass():
    criteria = [Criterion(id="a", text="good", weight=2), Criterion(id="b", text="bad", weight=-1)]
    # a passes (2), b unmet passes (1): 3 / 3; b met fails: 2 / 3
    assert score_rubric(criteria, met("a", unmet=("b",)), formula="pass-rate").score == 1.0
    assert score_rubric(criteria, met("a", "b"), formula="pass-rate").score == pytest.approx(2 / 3)


BANK = [
    Criterion(id="p1", text="Recommends follow-up.", weight=1),
    Criterion(id="p2", text="Explains risks.", weight=1),
    Criterion(id="p3", text="Asks for context.", weight=1),
    Criterion(id="n1", text="Gives unsafe advice.", weight=-1),
]


def test_reward_is_plus_one_per_met_desirable_and_minus_one_per_met_undesirable():
    verdicts = met("p1", "p2", "n1", unmet=("p3",))  # raw = 1 + 1 - 1 = 1
    assert score_rubric(BANK, verdicts, formula="reward", reward_normalization="none").score == 1
    # minmax: (1 + 1) / (3 + 1)
    assert score_rubric(BANK, verdicts, formula="reward").score == 0.5
    # positive: 1 / 3 ; count: 1 / 4
    assert score_rubric(BANK, verdicts, formula="reward",
                        reward_normalization="positive").score == pytest.approx(1 / 3)
    assert score_rubric(BANK, verdicts, formula="reward",
                        reward_normalization="count").score == 0.25


def test_reward_ignores_weight_magnitudes():
    heavy = [c.model_copy(update={"weight": c.weight * 7}) for c in BANK]
    verdicts = met("p1", "n1", unmet=("p2", "p3"))
    assert score_rubric(heavy, verdicts, formula="reward").score == score_rubric(
        BANK, verdicts, formula="reward"
    ).score == 0.25
