from assay.grading.parse import ReplyError, parse_criterion_reply, parse_item_reply
from assay.verdict import Decision


def test_binary_verdict_is_read_case_insensitively(binary):
    v = parse_criterion_reply({"verdict": "unmet", "explanation": "no"}, binary, item_id="q1")
    assert v.decision is Decision.UNMET and v.explanation == "no"


def test_cannot_assess_is_a_verdict_not_an_error(binary):
    v = parse_criterion_reply({"verdict": "CANNOT_ASSESS", "explanation": "?"}, binary, item_id="q1")
    assert v.decision is Decision.CANNOT_ASSESS


def test_criteria_met_boolean_is_accepted_for_binary(binary):
    v = parse_criterion_reply({"criteria_met": True}, binary, item_id="q1")
    assert v.decision is Decision.MET


def test_unknown_verdict_word_is_an_error(binary):
    result = parse_criterion_reply({"verdict": "maybe"}, binary, item_id="q1")
    assert isinstance(result, ReplyError) and "maybe" in result.message


def test_strict_bool_rejects_a_string_true_like_simple_evals(binary):
    result = parse_criterion_reply({"criteria_met": "true"}, binary, item_id="q1", strict_bool=True)
    assert isinstance(result, ReplyError)


def test_selected_option_is_mapped_back_through_the_permutation(ordinal):
    perm = (2, 0, 1, 3)  # displayed: well, poorly, partly, not discussed
    v = parse_criterion_reply({"selected_option": 1}, ordinal, item_id="q1", perm=perm)
    assert v.option == "well"


def test_selected_option_zero_is_cannot_assess(ordinal):
    v = parse_criterion_reply({"selected_option": 0}, ordinal, item_id="q1")
    assert v.decision is Decision.CANNOT_ASSESS


def test_selected_option_out_of_range_is_an_error(ordinal):
    assert isinstance(parse_criterion_reply({"selected_option": 9}, ordinal, item_id="q1"), ReplyError)


def test_per_item_reply_gives_one_result_per_criterion_and_flags_missing_ones(binary, ordinal):
    results = parse_item_reply({"verdicts": {"stinger": {"verdict": "MET"}}}, [binary, ordinal],
                               item_id="q1")
    assert results[0].decision is Decision.MET
    assert isinstance(results[1], ReplyError) and results[1].criterion_id == "pain"


def test_a_reply_that_is_not_an_object_is_an_error(binary):
    assert isinstance(parse_criterion_reply(None, binary, item_id="q1"), ReplyError)
