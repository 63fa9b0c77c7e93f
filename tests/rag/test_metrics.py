"""CF, CR, RA and the RAGAS baselines: formulas against hand-worked values, and each metric's
stage calls over loopback against scripted judge replies."""

from __future__ import annotations

import pytest

from assay.jobs import CallStore, StageCaller, StageError
from assay.judges import make_judge
from assay.rag import schemas
from assay.rag.faithfulness import categorise, cf_ratio, conversational_faithfulness
from assay.rag.items import RagItem
from assay.rag.ragas import (
    count_extracted,
    ragas_context_relevance,
    ragas_context_relevance_ratio,
    ragas_faithfulness,
    ragas_faithfulness_ratio,
)
from assay.rag.relevance_refusal import context_relevance, refusal, refusal_correct

LISTING_2_ANSWER = (
    "Sure. As a precaution, avoid water exposure to the eyes, especially in the first month after "
    "surgery. It's fine to shower and wash your hair, just be careful not to get water in your "
    "eyes. You should also avoid exercise for the first week, but after that, you can go back to "
    "light activities like brisk walking, gardening, light jogging, and gentle cycling. Is there "
    "anything else I can help you with?")
SENTENCES = [
    "Sure.",
    ("As a precaution, avoid water exposure to the eyes, especially in the first month after "
     "surgery."),
    "It's fine to shower and wash your hair, just be careful not to get water in your eyes.",
    ("You should also avoid exercise for the first week, but after that, you can go back to light "
     "activities like brisk walking, gardening, light jogging, and gentle cycling."),
    "Is there anything else I can help you with?"]
LISTING_2_REPLY = {"ACKNOWLEDGEMENTS": [SENTENCES[0]], "QUESTIONS": [SENTENCES[4]],
                   "CONTAINING_INFORMATION": SENTENCES[1:4]}


def verdicts(*flags, statements=SENTENCES[1:4]):
    """A Listing 1 reply: one verdict per flag, on the shower answer's informative sentences."""
    return {"answer": [{"statement": s, "explanation": "e", "verdict": "Yes" if f else "No"}
                       for s, f in zip(statements, flags)]}


def shower_item(**extra):
    return RagItem.model_validate({"id": "shower", "scope": "in_scope",
                                   "question": "Can I shower and exercise?",
                                   "answer": LISTING_2_ANSWER, "context": ["Shower advice."],
                                   **extra})


async def caller_for(serve, tmp_path, stages):
    server = await serve(stages=stages)
    judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    return server, judge, StageCaller(judge, CallStore.open(tmp_path / "calls.sqlite"))


# --- formulas -----------------------------------------------------------------------------------

def test_cf_is_grounded_over_informative_sentences():
    assert cf_ratio(3, 3) == (1.0, None)
    assert cf_ratio(2, 3)[0] == pytest.approx(2 / 3)
    assert cf_ratio(0, 2) == (0.0, None)


@pytest.mark.parametrize("policy, value", [("zero", 0.0), ("one", 1.0), ("undefined", None)])
def test_cf_with_no_informative_sentence_follows_the_policy_and_says_why(policy, value):
    got, reason = cf_ratio(0, 0, policy)
    assert got == value and reason.startswith("no information-containing sentence")


def test_cf_counts_cannot_be_inconsistent():
    with pytest.raises(ValueError):
        cf_ratio(3, 2)


def test_ragas_faithfulness_is_supported_over_all_statements():
    assert ragas_faithfulness_ratio(5, 6)[0] == pytest.approx(5 / 6)
    assert ragas_faithfulness_ratio(0, 0) == (
        None, "the judge extracted no statement from the answer")


def test_ragas_context_relevance_is_relevant_over_all_context_sentences():
    assert ragas_context_relevance_ratio(1, 4) == (0.25, None)
    assert ragas_context_relevance_ratio(7, 4) == (1.0, None)
    assert ragas_context_relevance_ratio(0, 0)[0] is None


def test_insufficient_information_counts_no_sentence_and_joined_sentences_count_each():
    assert count_extracted(["Insufficient Information"]) == 0
    assert count_extracted(["Avoid swimming. Wear sunglasses.", "Use drops."]) == 3


def test_refusal_is_correct_only_when_it_matches_what_was_expected():
    assert refusal_correct(refused=True, expected=True)
    assert refusal_correct(refused=False, expected=False)
    assert not refusal_correct(refused=False, expected=True)
    assert not refusal_correct(refused=True, expected=False)


# --- categorisation -----------------------------------------------------------------------------

def test_acknowledgements_and_questions_are_kept_but_left_out_of_cf():
    got = categorise(SENTENCES, LISTING_2_REPLY)
    assert [c for c, _ in got] == ["acknowledgement", "information", "information", "information",
                                   "question"]


def test_a_doubled_sentence_counts_as_informative_and_a_left_out_one_gets_no_category():
    reply = {"ACKNOWLEDGEMENTS": ["  sure. "], "QUESTIONS": [SENTENCES[1]],
             "CONTAINING_INFORMATION": [SENTENCES[1]]}
    got = categorise(SENTENCES[:3], reply)
    assert got[0] == ("acknowledgement", None)  # matched ignoring case and spacing
    assert got[1][0] == "information" and "2 categories" in got[1][1]
    assert got[2][0] is None and "names this sentence" in got[2][1]


# --- over loopback ------------------------------------------------------------------------------

async def test_cf_of_listing_2s_example_with_one_ungrounded_sentence_is_two_thirds(serve,
                                                                                   tmp_path):
    server, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CATEGORISE: LISTING_2_REPLY, schemas.GROUNDING: verdicts(True, False, True)})
    async with judge:
        result = await conversational_faithfulness(caller, shower_item().exchange(1),
                                                   item_id="shower")
    assert (result.informative, result.grounded) == (3, 2)
    assert result.value == pytest.approx(2 / 3) and result.reason is None
    assert [s.grounded for s in result.sentences] == [None, True, False, True, None]
    grounding = [r for r in server.requests if "Statements:" in str(r)]
    assert len(grounding) == 1 and SENTENCES[0] not in str(grounding[0])  # "Sure." not checked


async def test_cf_grounds_against_the_context_and_the_conversation(serve, tmp_path):
    item = RagItem.model_validate({"id": "m", "scope": "in_scope", "conversation": [
        {"role": "user", "content": "I had my operation on Monday."},
        {"role": "assistant", "content": "Thank you."},
        {"role": "user", "content": "Can I wash my hair?"},
        {"role": "assistant", "content": "Since it was Monday, you can wash your hair.",
         "context": ["It's fine to wash your hair."]}]})
    seen = []

    def grounding(request):
        seen.append(request.text)
        return verdicts(True, statements=["Since it was Monday, you can wash your hair."])

    _, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CATEGORISE: {"ACKNOWLEDGEMENTS": [], "QUESTIONS": [], "CONTAINING_INFORMATION": [
            "Since it was Monday, you can wash your hair."]}, schemas.GROUNDING: grounding})
    async with judge:
        result = await conversational_faithfulness(caller, item.exchange(3), item_id="m")
    assert result.value == 1.0
    assert ("Context:It's fine to wash your hair.\n\nConversation so far:\nPatient: I had my "
            "operation on Monday.\nAssistant: Thank you.\nStatements:") in seen[0]


async def test_a_pure_acknowledgement_makes_no_grounding_call(serve, tmp_path):
    server, judge, caller = await caller_for(serve, tmp_path, {schemas.CATEGORISE: {
        "ACKNOWLEDGEMENTS": ["Sure."], "QUESTIONS": ["Anything else?"],
        "CONTAINING_INFORMATION": []}})
    item = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "q",
                                   "answer": "Sure. Anything else?"})
    async with judge:
        result = await conversational_faithfulness(caller, item.exchange(1), item_id="a",
                                                   empty="undefined")
    assert result.value is None and "empty policy" in result.reason
    assert len(server.requests) == 1


async def test_a_grounding_reply_with_the_wrong_number_of_verdicts_is_reasked_then_fails(
        serve, tmp_path):
    server, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CATEGORISE: LISTING_2_REPLY, schemas.GROUNDING: verdicts(True)})
    async with judge:
        with pytest.raises(StageError, match="stage 'rag_grounding': schema_mismatch"):
            await conversational_faithfulness(caller, shower_item().exchange(1), item_id="shower")
    assert len(server.requests) == 4  # categorise, grounding, two re-asks


async def test_a_short_grounding_reply_then_a_full_one_succeeds_after_the_reask(serve, tmp_path):
    _, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CATEGORISE: LISTING_2_REPLY,
        schemas.GROUNDING: [verdicts(True), verdicts(True, True, True)]})
    async with judge:
        result = await conversational_faithfulness(caller, shower_item().exchange(1),
                                                   item_id="shower")
    assert result.value == 1.0


async def test_context_relevance_and_refusal_read_their_listings_replies(serve, tmp_path):
    _, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CONTEXT_RELEVANCE: {"output": "[[No]]", "elaboration": "About stitches."},
        schemas.REFUSAL: {"parts_not_addressed": "All.", "parts_addressed": "None.",
                          "summary": "Declined.", "output": True}})
    exchange = shower_item().exchange(1)
    async with judge:
        cr = await context_relevance(caller, exchange, item_id="shower")
        ra = await refusal(caller, exchange, item_id="shower")
    assert (cr.relevant, cr.elaboration) == (False, "About stitches.")
    assert (ra.refused, ra.summary) == (True, "Declined.")


async def test_a_context_relevance_verdict_outside_yes_no_is_rejected(serve, tmp_path):
    _, judge, caller = await caller_for(serve, tmp_path, {
        schemas.CONTEXT_RELEVANCE: {"output": "Yes"}})
    async with judge:
        with pytest.raises(StageError, match="rag_context_relevance"):
            await context_relevance(caller, shower_item().exchange(1), item_id="shower")


async def test_ragas_faithfulness_of_figure_7_is_five_sixths(serve, tmp_path):
    statements = [f"statement {i}" for i in range(6)]
    _, judge, caller = await caller_for(serve, tmp_path, {
        schemas.RAGAS_STATEMENTS: {"statements": statements},
        schemas.RAGAS_VERDICTS: {"verdicts": [
            {"statement": s, "explanation": "e", "verdict": "No" if i == 2 else "Yes"}
            for i, s in enumerate(statements)]}})
    async with judge:
        result = await ragas_faithfulness(caller, shower_item().exchange(1), item_id="shower")
    assert result.value == pytest.approx(5 / 6)
    assert result.supported == [True, True, False, True, True, True]


async def test_ragas_context_relevance_penalises_extra_context(serve, tmp_path):
    item = RagItem.model_validate({"id": "c", "scope": "in_scope", "question": "Swimming?",
                                   "answer": "Wait.", "context": [
                                       "Avoid swimming for four weeks. Wear sunglasses outside.",
                                       "Use drops four times a day. Do not rub your eye."]})
    _, judge, caller = await caller_for(serve, tmp_path, {schemas.RAGAS_CONTEXT: {
        "sentences": ["Avoid swimming for four weeks."]}})
    async with judge:
        result = await ragas_context_relevance(caller, item.exchange(1), item_id="c")
    assert (result.value, result.context_sentences) == (0.25, 4)
