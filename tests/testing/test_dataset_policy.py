"""The fake judge answering from an Autorubric dataset's ground truth, and perturbed copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InputError
from assay.io.autorubric_dataset import read_dataset
from assay.testing import policy_from_string
from assay.testing.dataset_policy import DatasetPolicy, perturb_labels, write_perturbed_dataset
from assay.testing.prompts import CriterionView

CHARM = Path(__file__).parents[2] / "examples" / "autorubric" / "charm100_sample.json"


def _label(labels, item_id, criterion_id):
    return next(v for v in labels if (v.item_id, v.criterion_id) == (item_id, criterion_id))


def test_the_policy_answers_the_label_of_the_graded_response_and_criterion():
    data = read_dataset(CHARM)
    policy = policy_from_string(f"dataset:{CHARM}")
    assert isinstance(policy, DatasetPolicy)
    response = data.items[7].response  # "ERROR: Unable to process request..."
    assert policy(CriterionView("factual_accuracy", None, f"\n{response}\n")) == "UNMET"
    assert policy(CriterionView("specificity", None, data.items[6].response)) == (
        "N/A - question doesn't require recommendations")
    assert policy(CriterionView("specificity", None, "an answer it never saw")) == "CANNOT_ASSESS"


def test_perturbing_flips_binary_moves_ordinal_one_step_and_takes_the_next_nominal_option():
    data = read_dataset(CHARM)
    changed = perturb_labels(data.items, data.labels, rate=1.0, seed=0)
    before = {(v.item_id, v.criterion_id): v for v in data.labels}
    after = {(v.item_id, v.criterion_id): v for v in changed}
    assert after[("item-007", "factual_accuracy")].decision.value == "MET"  # was UNMET
    assert after[("item-000", "factual_accuracy")].decision.value == "UNMET"  # was MET
    assert after[("item-000", "satisfaction")].option == "3 - Somewhat satisfied"  # top: down
    assert after[("item-004", "satisfaction")].option == "2 - Somewhat dissatisfied"  # up
    assert after[("item-006", "specificity")].option == "Very vague - no concrete suggestions"
    assert after[("item-002", "response_length")].option == "Just right - appropriate length"
    assert after[("item-001", "response_length")].option == "Too verbose - unnecessarily long"
    assert all(before[k] != after[k] for k in before)


def test_perturbing_is_seeded_and_changes_about_the_rate():
    data = read_dataset(CHARM)
    once = perturb_labels(data.items, data.labels, rate=0.3, seed=5)
    assert once == perturb_labels(data.items, data.labels, rate=0.3, seed=5)
    assert once != perturb_labels(data.items, data.labels, rate=0.3, seed=6)
    n_changed = sum(a != b for a, b in zip(data.labels, once))
    assert 10 <= n_changed <= 34  # 72 labels × 0.3 = 21.6 ± 3 SD
    assert perturb_labels(data.items, data.labels, rate=0.0) == data.labels


def test_a_perturbed_copy_is_a_valid_dataset_with_exactly_the_changed_labels(tmp_path):
    n = write_perturbed_dataset(CHARM, tmp_path / "perturbed.json", rate=0.25, seed=2)
    original, copy = read_dataset(CHARM), read_dataset(tmp_path / "perturbed.json")
    assert [i.response for i in copy.items] == [i.response for i in original.items]
    assert n == sum(a != b for a, b in zip(original.labels, copy.labels)) > 0


def test_the_perturbed_policy_string_answers_from_a_seeded_perturbed_copy():
    data = read_dataset(CHARM)
    policy = policy_from_string(f"perturbed:0.3:{CHARM}", seed=4)
    expected = perturb_labels(data.items, data.labels, rate=0.3, seed=4)
    assert policy.labels == expected
    with pytest.raises(InputError, match="RATE in"):
        policy_from_string(f"perturbed:1.5:{CHARM}")
