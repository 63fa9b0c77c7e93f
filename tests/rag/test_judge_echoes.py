"""CF when the judge echoes sentences back as real models do (issue 30, point 8): a dropped
final full stop, curly quotes, changed spacing or dashes change nothing; grounding verdicts go
to the sentence they repeat; what cannot be matched makes CF undefined and is listed."""

from __future__ import annotations

import pytest

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rag import schemas
from assay.rag.faithfulness import conversational_faithfulness
from assay.rag.fake_replies import JudgeDecisions, stage_script
from assay.rag.grading import RagOptions, grade_rag
from assay.rag.items import RagItem
from assay.testing import FakeJudgeServer

from .test_metrics import LISTING_2_REPLY, SENTENCES, shower_item

# asked again for the sentence alone, the judge rewrites it again
ASKED_AGAIN_REWRITTEN = {"ACKNOWLEDGEMENTS": [], "QUESTIONS": [],
                         "CONTAINING_INFORMATION": ["Wait seven days before you drive."]}


def grade_sample_echoing(items, decisions, echo, job):
    changed = {k: d.model_copy(update={"echo": echo}) for k, d in decisions.items()}
    with FakeJudgeServer.run_in_thread(stages=stage_script(items, changed)) as server:
        return grade_rag(items, f"openai-compatible:fake@{server.base_url}", job,
                         options=RagOptions(baselines=False))


@pytest.mark.parametrize("echo", ["no_full_stop", "curly_quotes", "whitespace", "dashes", "all"])
def test_a_judge_echoing_with_small_changes_gives_the_sample_the_same_cf_as_an_exact_echo(
        sample_items, sample_decisions, sample_graded, echo, tmp_path):
    exact, _ = sample_graded
    run = grade_sample_echoing(sample_items, sample_decisions, echo, tmp_path / "job")
    assert not run.failed
    assert {g.id: g.cf for g in run.grades} == {g.id: g.cf for g in exact.grades}
    assert all(not g.cf_unmatched for g in run.grades)


def test_the_sample_has_sentences_each_echo_change_alters(sample_items):
    """The test above is only a test if the changes hit the sample's sentences."""
    from assay.rag.fake_replies import ECHO_CHANGES
    from assay.rag.sentences import split_sentences

    sentences = [s for i in sample_items for t in i.graded_turns()
                 for s in split_sentences(i.conversation[t].content)]
    for name, change in ECHO_CHANGES.items():
        assert any(change(s) != s for s in sentences), name


async def ask_cf(serve, tmp_path, categorise, grounding, item=None):
    server = await serve(stages={schemas.CATEGORISE: categorise, schemas.GROUNDING: grounding})
    judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    caller = StageCaller(judge, CallStore.open(tmp_path / "calls.sqlite"))
    item = item or shower_item()
    async with judge:
        return await conversational_faithfulness(caller, item.exchange(1), item_id=item.id)


def verdict(statement, ok):
    return {"statement": statement, "explanation": "e", "verdict": "Yes" if ok else "No"}


async def test_the_issues_sure_without_full_stop_and_curly_apostrophe_keep_cf_at_one(
        serve, tmp_path):
    categories = {"ACKNOWLEDGEMENTS": ["Sure"], "QUESTIONS": [SENTENCES[4]],
                  "CONTAINING_INFORMATION": [SENTENCES[1], SENTENCES[2].replace("'", "\u2019"),
                                             SENTENCES[3]]}
    grounding = {"answer": [verdict(s, True) for s in SENTENCES[1:4]]}
    result = await ask_cf(serve, tmp_path, categories, grounding)
    assert (result.value, result.informative, result.grounded) == (1.0, 3, 3)


async def test_grounding_verdicts_go_to_the_sentence_they_repeat_not_their_position(
        serve, tmp_path):
    # the judge answers in reverse order: the last informative sentence is the ungrounded one
    grounding = {"answer": [verdict(SENTENCES[3], False), verdict(SENTENCES[2], True),
                            verdict(SENTENCES[1], True)]}
    result = await ask_cf(serve, tmp_path, LISTING_2_REPLY, grounding)
    assert [s.grounded for s in result.sentences] == [None, True, True, False, None]


async def test_numbered_statements_in_grounding_verdicts_are_matched(serve, tmp_path):
    grounding = {"answer": [verdict(f"{n}. {s}", n != 2) for n, s in enumerate(SENTENCES[1:4], 1)]}
    result = await ask_cf(serve, tmp_path, LISTING_2_REPLY, grounding)
    assert result.value == pytest.approx(2 / 3) and not result.unmatched_echoes


async def test_a_sentence_the_categorisation_does_not_name_makes_cf_undefined_and_is_listed(
        serve, tmp_path):
    rewritten = {**LISTING_2_REPLY, "CONTAINING_INFORMATION": [
        SENTENCES[1], "Showering is fine if water stays out of the eyes.", SENTENCES[3]]}
    asked_again = {"ACKNOWLEDGEMENTS": [], "QUESTIONS": [], "CONTAINING_INFORMATION": [
        "Showering is fine if water stays out of the eyes."]}
    result = await ask_cf(serve, tmp_path, {"by_prompt": [[f'"{SENTENCES[2]}"\n]', asked_again]],
                                            "default": rewritten}, {"answer": []})
    assert result.value is None
    assert result.unmatched_sentences == [SENTENCES[2]]
    assert result.unmatched_echoes == ["Showering is fine if water stays out of the eyes."]
    assert "not matched to the judge's categorisation" in result.reason
    assert SENTENCES[2] in result.reason


async def test_an_informative_sentence_no_verdict_names_makes_cf_undefined_and_is_listed(
        serve, tmp_path):
    grounding = {"answer": [verdict(SENTENCES[1], True), verdict("Something else entirely.", True),
                            verdict(SENTENCES[3], True)]}
    result = await ask_cf(serve, tmp_path, LISTING_2_REPLY, grounding)
    assert result.value is None and result.unmatched_sentences == [SENTENCES[2]]
    assert result.unmatched_echoes == ["Something else entirely."]
    assert "grounding verdicts" in result.reason


def test_an_unmatched_sentence_reaches_the_grade_and_its_cf_is_left_out_of_the_average(
        tmp_path):
    from assay.rag.validation import averages

    item = RagItem.model_validate({"id": "drive", "scope": "in_scope", "question": "Drive?",
                                   "answer": "Sure. Wait a week before driving.",
                                   "context": ["Wait a week to drive."]})
    script = stage_script([item], {"drive": JudgeDecisions(categories=["A", "I"])})
    # the judge rewrites the informative sentence
    key, reply = script[schemas.CATEGORISE]["by_prompt"][0]
    script[schemas.CATEGORISE] = {"by_prompt": [[key, {**reply, "CONTAINING_INFORMATION": [
        "Wait seven days before you drive."]}]], "default": ASKED_AGAIN_REWRITTEN}
    with FakeJudgeServer.run_in_thread(stages=script) as server:
        run = grade_rag([item], f"openai-compatible:fake@{server.base_url}", tmp_path / "j",
                        options=RagOptions(baselines=False))
    (grade,) = run.grades
    assert grade.cf is None and grade.cf_unmatched == ["Wait a week before driving."]
    assert averages(run.grades, "fake").cf_pct.n == 0


def test_rag_grade_names_every_sentence_it_could_not_match(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app
    from assay.rag.items import write_rag_items

    item = RagItem.model_validate({"id": "drive", "scope": "in_scope", "question": "Drive?",
                                   "answer": "Sure. Wait a week before driving.",
                                   "context": ["Wait a week to drive."]})
    write_rag_items([item], tmp_path / "items.jsonl")
    script = stage_script([item], {"drive": JudgeDecisions(categories=["A", "I"])})
    key, reply = script[schemas.CATEGORISE]["by_prompt"][0]
    script[schemas.CATEGORISE] = {"by_prompt": [[key, {**reply, "CONTAINING_INFORMATION": [
        "Wait seven days before you drive."]}]], "default": ASKED_AGAIN_REWRITTEN}
    with FakeJudgeServer.run_in_thread(stages=script) as server:
        result = CliRunner().invoke(app, [
            "rag", "grade", str(tmp_path / "items.jsonl"), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--out", str(tmp_path / "job"), "-q",
            "--no-baselines"])
    assert result.exit_code == 0, result.output
    assert ("note: drive turn 1: CF undefined: 1 answer sentence(s) the judge's replies do not "
            "name: 'Wait a week before driving.'") in " ".join(result.output.split())
