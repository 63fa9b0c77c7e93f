"""Matching a judge's echoed sentences to the answer's sentences (:mod:`assay.rag.matching`)."""

from __future__ import annotations

from assay.rag.matching import loose_key, match, match_in_order


def test_punctuation_quotes_dashes_and_spacing_do_not_change_the_loose_key():
    assert loose_key("It\u2019s fine \u2014 no  \u201crubbing\u201d") == loose_key(
        "it's fine - no \"rubbing\".")


def test_a_paraphrase_is_not_matched():
    assert match(["Wait a week before driving."], ["Wait seven days before driving."]) == [[]]


def test_the_strict_tier_separates_sentences_that_differ_only_in_punctuation():
    assert match(["Yes.", "Yes?"], ["Yes.", "Yes?"]) == [[0], [1]]


def test_an_echo_of_a_repeated_sentence_names_every_occurrence():
    assert match(["Rest.", "Use drops.", "Rest."], ["rest"]) == [[0, 2]]


def test_a_string_without_letters_or_digits_matches_nothing_loosely():
    assert match(["...", "Rest."], ["\u2026"]) == [[]]


def test_a_leading_enumerator_is_ignored_only_when_nothing_else_matches():
    assert match(["Use drops."], ["Statement 1: Use drops"]) == [[0]]
    assert match(["2 drops a day.", "Rest."], ["2 drops a day"]) == [[0]]


def test_one_to_one_matching_gives_each_verdict_its_own_occurrence():
    assert match_in_order(["Rest.", "Rest."], ["rest", "rest", "rest"]) == [0, 1, None]
