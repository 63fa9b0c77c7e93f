"""The sentence splitter keeps clinical abbreviations inside their sentences."""

from __future__ import annotations

import pytest

from assay.rag.sentences import split_sentences


@pytest.mark.parametrize("text, expected", [
    ("Take 500 mg. of paracetamol every 4 hrs. e.g. after meals. Then rest.",
     ["Take 500 mg. of paracetamol every 4 hrs. e.g. after meals.", "Then rest."]),
    ("Dr. Patel will call you. Mrs. Jones will answer.",
     ["Dr. Patel will call you.", "Mrs. Jones will answer."]),
    ("Use the drops q.i.d. i.e. four times a day. Is there anything else?",
     ["Use the drops q.i.d. i.e. four times a day.", "Is there anything else?"]),
    ("Call us 9 a.m. to 5 p.m. on weekdays. Vit. D is fine.",
     ["Call us 9 a.m. to 5 p.m. on weekdays.", "Vit. D is fine."]),
    ("Take 5 mg. Then rest.", ["Take 5 mg.", "Then rest."]),
])
def test_clinical_abbreviations_do_not_end_a_sentence(text, expected):
    assert split_sentences(text) == expected


def test_everyday_words_that_pysbd_lists_as_abbreviations_still_end_sentences():
    assert split_sentences("Thank you for telling me. I'm sorry it is sore.") == [
        "Thank you for telling me.", "I'm sorry it is sore."]


def test_spoken_text_without_a_final_stop_is_one_sentence():
    assert split_sentences("yes that would be ok") == ["yes that would be ok"]
    assert split_sentences("   ") == []


def test_listing_2s_example_answer_splits_into_its_five_statements():
    answer = ("Sure. As a precaution, avoid water exposure to the eyes, especially in the first "
              "month after surgery. It's fine to shower and wash your hair, just be careful not to "
              "get water in your eyes. You should also avoid exercise for the first week, but "
              "after that, you can go back to light activities like brisk walking, gardening, "
              "light jogging, and gentle cycling. Is there anything else I can help you with?")
    assert len(split_sentences(answer)) == 5
