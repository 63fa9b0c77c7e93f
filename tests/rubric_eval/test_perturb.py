"""Near-miss rules (seed 000 §5.3): target choice from the gold rubric, the strict minimal-edit
check, and the rule fallbacks, against hand-worked cases."""

from __future__ import annotations

import pytest

from assay.rubric_eval.perturb import (
    is_minimal_edit,
    locate_edit,
    modal_flip,
    number_bump,
    rule_fallback,
    select_target,
)
from assay.rubric_eval.released import RubricEntry


def entry(points, axis="completeness", text=None):
    return RubricEntry(criterion=text or f"{axis} {points}", axis=axis, points=points)


def test_the_accuracy_bonus_of_3_outweighs_two_points():
    # 9 (completeness) vs 7 + 3 = 10 (accuracy): the accuracy criterion wins
    assert select_target([entry(9), entry(7, "accuracy", "dose")]) == (2, "dose")


def test_the_accuracy_bonus_does_not_outweigh_four_points():
    # 10 vs 6 + 3 = 9
    assert select_target([entry(10, text="refer"), entry(6, "accuracy")]) == (1, "refer")


def test_a_tie_goes_to_the_first_criterion():
    # 8 + 3 = 11 and 11: the first one
    assert select_target([entry(8, "accuracy", "first"), entry(11, text="second")]) == (
        1, "first")


def test_penalty_criteria_are_never_targets_while_a_positive_one_exists():
    gold = [entry(-10, "accuracy", "harm"), entry(2, text="tone")]
    assert select_target(gold) == (2, "tone")


def test_axis_case_and_spaces_do_not_matter():
    assert select_target([entry(8), entry(6, " Accuracy ", "acc")]) == (2, "acc")


def test_an_all_penalty_rubric_falls_back_to_every_criterion():
    assert select_target([entry(-8), entry(-2, text="least bad")]) == (2, "least bad")


REF = "Take 500 mg every 6 hours.\nSee a doctor if the fever lasts."


def test_a_single_span_replacement_is_a_minimal_edit():
    assert is_minimal_edit(REF, REF.replace("500 mg", "50 mg"), "500 mg", "50 mg")


def test_whitespace_runs_are_normalised_before_comparing():
    perturbed = "Take 50 mg   every 6 hours. See a doctor if the fever lasts.  "
    assert is_minimal_edit(REF, perturbed, "500 mg", "50 mg")


@pytest.mark.parametrize("perturbed,before,after", [
    (REF.replace("500 mg", "50 mg"), "700 mg", "50 mg"),  # span not in the reference
    (REF.replace("500 mg", ""), "500 mg", ""),  # empty replacement
    (REF, "500 mg", "500 mg"),  # no change
    (REF.replace("500 mg", "50 mg").replace("doctor", "nurse"), "500 mg", "50 mg"),  # two edits
    (REF.replace("500 mg", "50 mg"), "", "50 mg"),  # empty span
])
def test_anything_else_fails_the_strict_check(perturbed, before, after):
    assert not is_minimal_edit(REF, perturbed, before, after)


def test_one_occurrence_of_the_span_is_replaced_and_located():
    ref = "Rest 2 days, then 2 more."
    assert locate_edit(ref, "Rest 3 days, then 2 more.", "2", "3") == 5
    assert locate_edit(ref, "Rest 2 days, then 3 more.", "2", "3") == 18
    assert not is_minimal_edit(ref, "Rest 3 days, then 3 more.", "2", "3")


def test_the_number_bump_skips_list_markers():
    edit = number_bump("1. Rest.\n2) Drink 2 litres a day.")
    assert (edit.before, edit.after, edit.error_type) == ("2", "3", "numeric_threshold")
    assert edit.perturbed == "1. Rest.\n2) Drink 3 litres a day."


@pytest.mark.parametrize("number,bumped", [("7", "8"), ("2.5", "3"), ("0.25", "0.75"),
                                           ("38.5", "39")])
def test_integers_go_up_by_one_and_decimals_by_a_half(number, bumped):
    assert number_bump(f"Dose {number} mg.").after == bumped


@pytest.mark.parametrize("text,before,after", [
    ("You should rest.", "should", "should not"),
    ("You should not drive.", "should not", "should"),
    ("Should it hurt, call us.", "Should", "Should not"),
    ("You can't stop abruptly.", "can't", "can"),
    ("Children cannot take it.", "cannot", "can"),
    ("Never exceed the dose; you must wait.", "Never", "Always"),
    ("You must wait; never exceed the dose.", "must", "must not"),
])
def test_the_first_modal_verb_is_flipped(text, before, after):
    edit = modal_flip(text)
    assert (edit.before, edit.after, edit.error_type) == (before, after, "modality_flip")
    assert is_minimal_edit(text, edit.perturbed, edit.before, edit.after)


def test_a_number_is_preferred_to_a_modal_verb():
    assert rule_fallback("You should take 2 tablets.").error_type == "numeric_threshold"


def test_no_rule_applies_to_a_text_without_numbers_or_modals():
    assert rule_fallback("Drink water and rest.") is None
