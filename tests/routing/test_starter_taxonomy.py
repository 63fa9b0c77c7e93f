"""The shipped starter taxonomy stays valid: CI fails if a curation round breaks it."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from assay.health_memory import HealthMemory
from assay.io import read_taxonomy
from assay.routing import Catalogue
from assay.routing.data import STARTER_TAXONOMY


@pytest.fixture(scope="module")
def tree():
    return read_taxonomy(STARTER_TAXONOMY)


def test_it_has_at_least_100_atomic_boolean_leaves_with_triggers(tree):
    leaves = tree.leaves()
    assert len(leaves) >= 100
    for leaf in leaves:
        c = leaf.criterion
        assert c.kind.value == "binary" and c.trigger, c.id
        assert c.weight > 0, f"{c.id}: starter leaves are phrased so that MET = pass (§2.4)"
        assert len(c.text) < 160 and c.text.endswith("."), c.id


def test_leaves_sit_at_depth_3_or_4_and_auto_weights_sum_to_one(tree):
    depths = Counter(tree.level_of(leaf.id) for leaf in tree.leaves())
    assert set(depths) == {3, 4}
    assert sum(tree.auto_weights().values()) == pytest.approx(1.0)


def test_it_covers_medical_skills_health_memory_and_agent_actions(tree):
    top = {n.name for n in tree.root.children}
    assert top == {"Medical skills", "Health memory", "Agent actions"}  # Table 1's groups
    second = {c.name for n in tree.root.children for c in n.children}
    assert {"Knowledge", "Safety", "Communication", "Personalization", "Factual grounding",
            "Numerical accuracy", "Tool use", "Actions for the user"} <= second


def test_leaf_names_are_the_whole_criterion_not_cut(tree):
    for leaf in tree.leaves():
        text = leaf.criterion.text.removeprefix("The response ").rstrip(".")
        assert leaf.name == text[0].upper() + text[1:], leaf.id


def test_it_lints_clean(tree):
    from assay.io.taxonomy_check import lint_taxonomy

    assert lint_taxonomy(STARTER_TAXONOMY) == []


def test_every_leaf_sits_in_the_group_its_id_names(tree):
    for node, path in tree.walk():
        if node.is_leaf:
            assert path[-1].id == node.id.rsplit(".", 1)[0], node.id


def test_weights_span_at_most_a_factor_of_25(tree):
    weights = tree.auto_weights().values()
    assert max(weights) / min(weights) <= 25  # 1/378 to 1/18; 0.1.0 had 1/588 to 1/30


def test_ids_are_dotted_paths_and_requirements_are_readable(tree):
    memory = HealthMemory()
    for entry in Catalogue.from_taxonomy(tree).entries:
        assert re.fullmatch(r"[a-z]{2}(\.[a-z]{2,3}){1,2}\.\d{2}", entry.id), entry.id
        for requirement in entry.requires:
            memory.has(requirement)  # raises on an unknown requirement kind


def test_it_is_versioned(tree):
    assert re.fullmatch(r"\d+\.\d+\.\d+", tree.version)
