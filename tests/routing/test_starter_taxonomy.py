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


def test_it_covers_medical_skills_and_health_memory(tree):
    top = {n.name for n in tree.root.children}
    assert top == {"Medical skills", "Health memory"}
    second = {c.name for n in tree.root.children for c in n.children}
    assert {"Knowledge", "Safety", "Communication", "Personalization", "Factual grounding",
            "Numerical accuracy"} <= second


def test_ids_are_dotted_paths_and_requirements_are_readable(tree):
    memory = HealthMemory()
    for entry in Catalogue.from_taxonomy(tree).entries:
        assert re.fullmatch(r"[a-z]{2}(\.[a-z]{2,3}){1,2}\.\d{2}", entry.id), entry.id
        for requirement in entry.requires:
            memory.has(requirement)  # raises on an unknown requirement kind


def test_it_is_versioned(tree):
    assert re.fullmatch(r"\d+\.\d+\.\d+", tree.version)
