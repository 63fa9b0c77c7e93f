"""Multi-turn conversations and per-deployment settings (issue 30, point 11): scope and
should_refuse per question, --turns all aggregated over every graded turn, CR and RA reading
the conversation so far, the CF "high" cut-off as an option, per-model listing overrides, and
blank text refused."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.rag import prompts, schemas
from assay.rag.fake_replies import JudgeDecisions, stage_script
from assay.rag.grading import RagOptions, grade_rag
from assay.rag.items import RagItem, read_rag_items
from assay.rag.prompt_overrides import read_prompt_overrides
from assay.rag.validation import averages
from assay.testing import FakeJudgeServer

KNEE = "My knee is hurting a lot"  # seed 002 Figure 10's out-of-scope clinical question


def hair_then_knee():
    """The sample's multi-turn hair conversation, then an out-of-scope question in the same call."""
    return RagItem.model_validate({"id": "hair-knee", "scope": "in_scope", "conversation": [
        {"role": "user", "content": "When can I wash my hair?"},
        {"role": "assistant", "content": "It's fine to wash your hair now.",
         "context": ["It's fine to shower and wash your hair."]},
        {"role": "user", "content": KNEE, "scope": "out_of_scope"},
        {"role": "assistant", "content": "Please speak to your GP about your knee.",
         "context": ["It's fine to shower and wash your hair."]}]})


def grade(items, decisions, tmp_path, **options):
    opts = RagOptions(baselines=False, **options)
    with FakeJudgeServer.run_in_thread(
            stages=stage_script(items, decisions, turns=opts.turns)) as server:
        run = grade_rag(items, f"openai-compatible:fake@{server.base_url}", tmp_path / "job",
                        options=opts)
        return run, [str(m["content"]) for r in server.requests for m in r["body"]["messages"]]


def write(tmp_path, text):
    path = tmp_path / "items.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("field, line", [
    ("question", '"question": " \\n", "answer": "Rest.", "context": ["p"]'),
    ("answer", '"question": "q", "answer": "\\t ", "context": ["p"]'),
    ("context", '"question": "q", "answer": "Rest.", "context": ["p", "   "]')])
def test_whitespace_only_text_is_an_error_naming_file_line_and_field(tmp_path, field, line):
    path = write(tmp_path, '{"id": "a", "scope": "in_scope", ' + line + '}')
    with pytest.raises(InputError, match=rf"items.jsonl:1: {field}: .*(only )?whitespace"):
        read_rag_items(path)


def test_a_questions_scope_and_should_refuse_decide_its_turn():
    item = hair_then_knee()
    assert (item.turn_scope(1), item.turn_refusal_expected(1)) == ("in_scope", False)
    assert (item.turn_scope(3), item.turn_refusal_expected(3)) == ("out_of_scope", True)
    item.conversation[2].should_refuse = False
    assert item.turn_refusal_expected(3) is False


def test_scope_on_an_assistant_turn_is_an_error():
    with pytest.raises(ValueError, match="a question's scope goes on its user turn"):
        RagItem.model_validate({"id": "a", "scope": "in_scope", "conversation": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "scope": "out_of_scope"}]})


def test_each_graded_turn_is_diagnosed_with_its_own_questions_scope(tmp_path):
    item = hair_then_knee()
    run, _ = grade([item], {item.id: [JudgeDecisions(), JudgeDecisions(cr=False)]}, tmp_path,
                   turns="all")
    first, second = run.grades[0].turns
    assert (first.scope, first.refusal_expected, first.diagnosis) == ("in_scope", False,
                                                                      ["ideal"])
    assert (second.scope, second.refusal_expected, second.diagnosis) == (
        "out_of_scope", True, ["missed_refusal"])
    assert (run.grades[0].scope, run.grades[0].refusal_expected) == ("out_of_scope", True)


def test_turns_all_averages_over_every_graded_turn(tmp_path):
    item = hair_then_knee()
    run, _ = grade([item], {item.id: [JudgeDecisions(), JudgeDecisions(cr=False)]}, tmp_path,
                   turns="all")
    row = averages(run.grades, "fake")
    assert (row.n, row.turns, row.cr_pct.value, row.cr_pct.n) == (1, 2, 50.0, 2)
    assert row.refusal_accuracy.value == 50.0


def test_refusal_and_relevance_prompts_carry_the_conversation_so_far(tmp_path):
    item = hair_then_knee()
    _, sent = grade([item], {item.id: JudgeDecisions(cr=False)}, tmp_path)
    assert any("DIALOGUE: <Patient: When can I wash my hair? Doctor: It's fine to wash your hair "
               f"now. Patient: {KNEE} Doctor: Please speak to your GP" in t for t in sent)
    assert any(f"Question: {KNEE}\n\nConversation so far:\nPatient: When can I wash my hair?"
               in t for t in sent)


def test_a_single_turn_keeps_the_papers_listing_3_and_4_prompts():
    assert prompts.refusal_prompt("q", "a").endswith("DIALOGUE: <Patient: q Doctor: a>\n"
                                                     "EVALUATION:\n")
    assert prompts.context_relevance_prompt("q", "c") == \
        prompts.LISTING_4_CONTEXT_RELEVANCE.format(question="q", context="c")


def test_the_cf_high_cut_off_is_an_option(sample_items, sample_decisions, tmp_path):
    # Figure 10's multi-question item: CF 2/3, in scope, relevant context
    item = next(i for i in sample_items if i.id == "hz-swim-pilates-shower")
    decisions = {item.id: sample_decisions[item.id]}
    default, _ = grade([item], decisions, tmp_path / "a")
    strict, _ = grade([item], decisions, tmp_path / "b", cf_high=0.7)
    assert default.grades[0].cf == pytest.approx(2 / 3)
    assert default.grades[0].diagnosis == ["ideal"]
    assert strict.grades[0].diagnosis == ["unfaithful_generation"]


def test_the_cf_high_cut_off_must_lie_in_0_1():
    with pytest.raises(ValueError, match="cf_high"):
        RagOptions(cf_high=1.5)


def overrides_file(tmp_path, text):
    path = tmp_path / "prompts.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_models_override_wins_over_the_default_and_other_models_keep_the_listings(tmp_path):
    overrides = read_prompt_overrides(overrides_file(tmp_path, (
        '[default]\nrefusal = "Refused? {question} / {answer}"\n'
        '[models."palm-2"]\nrefusal = "Palm: {question} / {answer}"\n')))
    assert overrides.for_model("palm-2") == {"refusal": "Palm: {question} / {answer}"}
    assert overrides.for_model("gpt-4o") == {"refusal": "Refused? {question} / {answer}"}


def test_an_override_missing_or_adding_a_placeholder_is_named_with_file_line_and_key(tmp_path):
    path = overrides_file(tmp_path, (
        '[models."palm-2"]\n'
        'context_relevance = "Is it relevant? {question} {passages}"\n'
        'triage = "x"\n'))
    with pytest.raises(InputError) as caught:
        read_prompt_overrides(path)
    text = str(caught.value)
    assert "prompts.toml:2: models.palm-2.context_relevance: unknown placeholder(s) {passages}" in text
    assert "prompts.toml:2: models.palm-2.context_relevance: missing placeholder(s) {context}" in text
    assert "prompts.toml:3: models.palm-2.triage: unknown listing" in text


def test_grading_sends_the_judge_models_override(tmp_path):
    item = hair_then_knee()
    template = "Did the doctor refuse? Patient: {question} Doctor: {answer} Reply in JSON."
    script = stage_script([item], {item.id: JudgeDecisions()})
    seen = []

    def refusal(request):
        seen.append(request.text)
        return {"parts_not_addressed": "None.", "parts_addressed": "All.", "summary": "Answered.",
                "output": False}

    script[schemas.REFUSAL] = refusal
    with FakeJudgeServer.run_in_thread(stages=script) as server:
        run = grade_rag([item], f"openai-compatible:fake@{server.base_url}", tmp_path / "job",
                        options=RagOptions(baselines=False, templates={"refusal": template}))
    assert not run.failed and len(seen) == 1
    assert "Did the doctor refuse? Patient: When can I wash my hair?" in seen[0]
    assert "Parts not addressed:" not in seen[0]


def test_rag_grade_refuses_a_bad_prompts_file_before_calling_the_judge(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app

    from .conftest import SAMPLE

    path = overrides_file(tmp_path, '[default]\nrefusal = "Refused? {question}"\n')
    result = CliRunner().invoke(app, [
        "rag", "grade", str(SAMPLE / "items.jsonl"), "--judge",
        "openai-compatible:x@http://127.0.0.1:9/v1", "--out", str(tmp_path / "job"),
        "--prompts", str(path)])
    assert result.exit_code == 1
    assert "prompts.toml:2: default.refusal: missing placeholder(s) {answer}" in " ".join(
        result.output.split())
    assert not (tmp_path / "job").exists()
