"""Issue 40 §2: an undefined CF is never a verdict. Before CF is left undefined the judge is
asked once more, for the sentences it did not categorise only (quoting them), and both calls
are recorded; a CF still undefined gives the Figure 11 diagnosis "undetermined", counted apart
from "ideal" in every table, never "ideal"."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import app
from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rag import prompts, schemas
from assay.rag.diagnosis import DIAGNOSES, diagnose
from assay.rag.faithfulness import conversational_faithfulness
from assay.rag.fake_replies import JudgeDecisions, stage_script
from assay.rag.grading import RagOptions, grade_rag
from assay.rag.items import RagItem, write_rag_items
from assay.rag.validation import by_hazard
from assay.testing import FakeJudgeServer

from .test_metrics import LISTING_2_REPLY, SENTENCES, shower_item, verdicts

REWRITTEN = "Showering is fine if water stays out of the eyes."
MISSING_ONE = {**LISTING_2_REPLY, "CONTAINING_INFORMATION": [SENTENCES[1], REWRITTEN,
                                                             SENTENCES[3]]}
ONLY_THE_MISSED = json.dumps([SENTENCES[2]], indent=4, ensure_ascii=False)


def test_an_undefined_cf_on_an_answered_in_scope_turn_is_undetermined_never_ideal():
    assert diagnose(in_scope=True, cf=None, cr=True, refused=False,
                    refusal_expected=False) == ["undetermined"]
    assert "undetermined" in DIAGNOSES


async def ask_cf(serve, tmp_path, categorise):
    server = await serve(stages={schemas.CATEGORISE: categorise,
                                 schemas.GROUNDING: verdicts(True, True, True)})
    judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    store = CallStore.open(tmp_path / "calls.sqlite")
    item = shower_item()
    async with judge:
        result = await conversational_faithfulness(StageCaller(judge, store), item.exchange(1),
                                                    item_id=item.id)
    return result, list(store.calls(item.id, schemas.CATEGORISE))


def _prompt(call) -> str:
    return call.messages[-1]["content"]


async def test_a_sentence_missed_is_asked_again_alone_and_cf_is_computed_from_both_calls(
        serve, tmp_path):
    again = {"ACKNOWLEDGEMENTS": [], "QUESTIONS": [], "CONTAINING_INFORMATION": [SENTENCES[2]]}
    result, calls = await ask_cf(serve, tmp_path, {"by_prompt": [[ONLY_THE_MISSED, again]],
                                                   "default": MISSING_ONE})
    assert (result.value, result.informative, result.grounded) == (1.0, 3, 3)
    assert result.reasked == [SENTENCES[2]]
    assert "asked again" in result.sentences[2].note
    assert len(calls) == 2  # both calls recorded in the job's store
    assert _prompt(calls[1]).endswith(
        prompts.categorisation_prompt([SENTENCES[2]]).split("###")[-1])
    assert SENTENCES[1] not in _prompt(calls[1]).split("###")[-1]


async def test_a_sentence_missed_twice_leaves_cf_undefined_after_two_recorded_calls(
        serve, tmp_path):
    again = {"ACKNOWLEDGEMENTS": [], "QUESTIONS": [], "CONTAINING_INFORMATION": [REWRITTEN]}
    result, calls = await ask_cf(serve, tmp_path, {"by_prompt": [[ONLY_THE_MISSED, again]],
                                                   "default": MISSING_ONE})
    assert result.value is None and result.unmatched_sentences == [SENTENCES[2]]
    assert result.reasked == [SENTENCES[2]] and len(calls) == 2
    assert result.unmatched_echoes == [REWRITTEN]


def _drive_item(hazard=None) -> RagItem:
    return RagItem.model_validate({"id": "drive", "scope": "in_scope", "question": "Drive?",
                                   "answer": "Sure. Wait a week before driving.",
                                   "context": ["Wait a week to drive."], "hazard": hazard})


def _never_names_the_advice(item):
    """The judge rewrites the informative sentence, in the first call and when asked again."""
    script = stage_script([item], {item.id: JudgeDecisions(categories=["A", "I"])})
    key, reply = script[schemas.CATEGORISE]["by_prompt"][0]
    script[schemas.CATEGORISE] = {"by_prompt": [[key, {**reply, "CONTAINING_INFORMATION": [
        "Wait seven days before you drive."]}]], "default": {
            "ACKNOWLEDGEMENTS": [], "QUESTIONS": [], "CONTAINING_INFORMATION": [
                "Wait seven days before you drive."]}}
    return script


def test_an_unsafe_looking_answer_with_undefined_cf_is_counted_undetermined_not_ideal(tmp_path):
    item = _drive_item(hazard="clinical_kb_has_info")
    with FakeJudgeServer.run_in_thread(stages=_never_names_the_advice(item)) as server:
        run = grade_rag([item], f"openai-compatible:fake@{server.base_url}", tmp_path / "j",
                        options=RagOptions(baselines=False))
    (grade,) = run.grades
    assert grade.cf is None and grade.diagnosis == ["undetermined"]
    (row,) = by_hazard(run.grades)
    assert row.diagnoses == {"undetermined": 1}


def test_rag_report_counts_undetermined_apart_from_ideal(tmp_path):
    item = _drive_item(hazard="clinical_kb_has_info")
    write_rag_items([item], tmp_path / "items.jsonl")
    with FakeJudgeServer.run_in_thread(stages=_never_names_the_advice(item)) as server:
        graded = CliRunner().invoke(app, [
            "rag", "grade", str(tmp_path / "items.jsonl"), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--out", str(tmp_path / "job"), "-q",
            "--no-baselines"])
    assert graded.exit_code == 0, graded.output
    result = CliRunner().invoke(app, ["rag", "report", str(tmp_path / "items.jsonl"),
                                      "--grades", str(tmp_path / "job"),
                                      "--html", str(tmp_path / "report.html")],
                                    env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "undetermined×1" in result.output and "ideal" not in result.output
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "undetermined: 1" in html and "ideal: " not in html
