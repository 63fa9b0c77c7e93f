"""RubricsTree's response optimisation (seed 003 §6.3): ``assay refine --method rubricstree``
over loopback, the fake server playing the router, the auditor and the actor, on the shipped
PHA examples; and its texts against the paper's, byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.routing.feedback import REVISION_PROMPT, LeafFeedback, feedback_report, revision_prompt
from assay.testing import FakeJudgeServer, ModelScript

PAPER = json.loads((Path(__file__).parent / "data" / "rubricstree_optimisation.json")
                   .read_text("utf-8"))
EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
ITEMS = EXAMPLES / "pha-items.jsonl"
STAGES = EXAMPLES / "fake-stages.yaml"
CHEST_FIX = "Call emergency services now: chest pressure with a numb arm can be a heart attack."


def actor() -> ModelScript:
    """Revises the chest answer (the only failing one); appends a line to the others."""
    def augment(messages):
        previous = messages[-1]["content"].split("### Your Previous Response: ")[1]
        return previous.split("\n### Evaluation Feedback:")[0] + " Ask your doctor if unsure."
    return ModelScript(answers={"crushing pressure": CHEST_FIX}, default=augment)


def refine(server, tmp_path, *extra, name="opt"):
    return CliRunner().invoke(app, [
        "refine", "--method", "rubricstree", "--items", str(ITEMS),
        "--judge", f"openai-compatible:fake@{server.base_url}",
        "--actor", f"openai-compatible:health-bot@{server.base_url}",
        "--out", str(tmp_path / name), "--n-bootstrap", "200", "--quiet", *extra])


def test_the_feedback_report_is_the_papers_format_byte_for_byte():
    rendered = feedback_report([
        LeafFeedback("a", "<Specific Rubric Prompt>", False, "<Auditor’s Clinical Rationale>"),
        LeafFeedback("b", "<Specific Rubric Prompt>", True, "<Auditor’s Clinical Rationale>")])
    assert rendered == PAPER["feedback_report"]


def test_the_revision_prompt_is_the_papers_p4_byte_for_byte():
    # the paper's text conversion escaped markdown with backslashes and dropped line breaks
    printed = re.sub(r"\\(.)", r"\1", PAPER["feedback_prompt"])
    assert REVISION_PROMPT.replace("\n", "") == printed
    assert revision_prompt("{query}", "{base_response}", "{feedback_text}") == REVISION_PROMPT


def test_a_multi_line_reason_keeps_each_entry_on_its_two_lines():
    report = feedback_report([LeafFeedback("a", "Uses\nplain words.", True, "Short.\n\nClear.")])
    assert report.splitlines()[1:] == ["- [Pass] Criterion: Uses plain words.",
                                       "  Reasoning: Short. Clear."]


def test_rubricstree_refinement_revises_the_flagged_answer_and_measures_the_gain(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": actor()}) as server:
        out = refine(server, tmp_path)
        revisions = [r for r in server.requests if r.get("stage") == "model:health-bot"]
        stages = [r.get("stage") for r in server.requests]
    assert out.exit_code == 0, out.output
    # only the chest answer fails a leaf: the other three are left as they are
    assert len(revisions) == 1 and stages.count("route_tree") == 16  # routed once, not twice
    chest = next(r["body"]["messages"][-1]["content"] for r in revisions
                 if "crushing pressure" in r["body"]["messages"][-1]["content"])
    assert ("### Evaluation Feedback: Evaluated Rubrics and Feedback:\n- [Fail] Criterion: "
            in chest)
    assert "  Reasoning: The response misses a possible heart attack" in chest
    assert "### Your Previous Response: Try to relax and drink some water" in chest
    summary = json.loads((tmp_path / "opt" / "optimise.json").read_text())
    assert summary["status"] == "complete" and summary["revised"] == 1
    assert summary["left_alone"] == 3 and "chest" not in summary["left_alone_items"]
    assert summary["versus_base"]["n_items"] == 4
    assert summary["versus_base"]["mean_difference"]["value"] == pytest.approx(0.25)  # chest 0→1
    er = next(g for g in summary["per_leaf"] if g["leaf_id"] == "ms.sf.er.01")
    assert (er["fixed"], er["broken"], er["gain"]) == (1, 0, 1.0)
    skills = summary["per_axis"]["Medical skills"]
    assert skills["n_items"] == 4 and skills["mean_difference"]["value"] > 0
    scores = {r["id"]: (r["base"], r["revised"]) for r in map(
        json.loads, (tmp_path / "opt" / "scores.jsonl").read_text().splitlines())}
    assert scores["chest"] == (0.0, 1.0) and scores["ldl"] == (1.0, 1.0)
    assert "RubricsTree response optimisation (complete" in out.output
    assert "left alone 3 with no failed leaf" in " ".join(out.output.split())


def test_an_answer_with_no_failed_leaf_is_left_as_it_is(tmp_path):
    """Issue 43, point 6: an answer that passed every leaf was revised anyway and fell from
    1.000 to 0.826. Here the actor would drop the LDL figure the passing answer gave."""
    careless = ModelScript(answers={"crushing pressure": CHEST_FIX},
                           default="Your cholesterol results look fine, no need to worry.")
    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": careless}) as server:
        out = refine(server, tmp_path)
        asked = [r["body"]["messages"][-1]["content"] for r in server.requests
                 if r.get("stage") == "model:health-bot"]
    assert out.exit_code == 0, out.output
    assert len(asked) == 1 and "crushing pressure" in asked[0]
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "opt" / "revisions.jsonl")
                                    .read_text().splitlines())}
    assert rows["ldl"]["left_alone"] and rows["ldl"]["revised"] == rows["ldl"]["base"]
    assert rows["ldl"]["failed_leaves"] == [] and rows["ldl"]["feedback"] is None
    scores = {r["id"]: (r["base"], r["revised"]) for r in map(
        json.loads, (tmp_path / "opt" / "scores.jsonl").read_text().splitlines())}
    assert scores["ldl"] == (1.0, 1.0)
    summary = json.loads((tmp_path / "opt" / "optimise.json").read_text())
    assert (summary["revised"], summary["left_alone"]) == (1, 3)


def test_a_resumed_refinement_makes_no_new_call(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": actor()}) as server:
        assert refine(server, tmp_path).exit_code == 0
        before = len(server.requests)
        again = refine(server, tmp_path)
        assert len(server.requests) == before
    assert again.exit_code == 0, again.output


def test_an_answer_whose_base_grading_failed_is_not_revised(tmp_path):
    stages = {"route_tree": json.loads(json.dumps(_stage(STAGES, "route_tree"))),
              "auditor": {"by_prompt": [["Statins lower", "no bracketed verdict here"]],
                          "default": {"output": "Reason: fine. [1]"}}}
    with FakeJudgeServer.run_in_thread(stages=stages, models={"health-bot": actor()}) as server:
        out = refine(server, tmp_path)
        revised = [r["body"]["messages"][-1]["content"] for r in server.requests
                   if r.get("stage") == "model:health-bot"]
    assert out.exit_code == 4  # an incomplete job (issue 40)
    summary = json.loads((tmp_path / "opt" / "optimise.json").read_text())
    # every graded answer passes every leaf here: none is sent to the actor
    assert summary["status"] == "incomplete" and summary["revised"] == 0
    assert "statin" in summary["not_revised"] and "statin" not in summary["left_alone_items"]
    assert summary["left_alone"] == 3 and revised == []


def test_a_revision_cut_at_the_token_limit_is_not_graded(tmp_path):
    cut = ModelScript(answers={"crushing pressure": {"text": "Call", "finish_reason": "length"}},
                      default="A revised answer.")
    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": cut}) as server:
        out = refine(server, tmp_path)
    assert out.exit_code == 4  # an incomplete job (issue 40)
    summary = json.loads((tmp_path / "opt" / "optimise.json").read_text())
    assert summary["status"] == "incomplete"
    assert "truncated: the revision was cut at max_tokens=" in summary["failed"]["chest"]
    scores = {r["id"]: r["revised"] for r in map(
        json.loads, (tmp_path / "opt" / "scores.jsonl").read_text().splitlines())}
    assert scores["chest"] is None and summary["versus_base"]["n_items"] == 3


def test_plan_options_are_refused_with_the_rubricstree_method(tmp_path):
    out = CliRunner().invoke(app, ["refine", "--method", "rubricstree", "--items", str(ITEMS),
                                   "--judge", "vllm:x", "--actor", "vllm:y", "--gold", "g.jsonl",
                                   "--out", str(tmp_path / "o")])
    assert out.exit_code != 0 and "--gold" in out.output and "--method plan" in out.output


def _stage(path: Path, name: str):
    import yaml

    return yaml.safe_load(path.read_text())[name]


def test_the_readme_demo_with_the_shipped_actor_script_fixes_the_chest_pain_answer(tmp_path):
    script = EXAMPLES / "fake-actor.yaml"
    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": script}) as server:
        out = refine(server, tmp_path)
    assert out.exit_code == 0, out.output
    summary = json.loads((tmp_path / "opt" / "optimise.json").read_text())
    assert summary["versus_base"]["mean_b"]["value"] == pytest.approx(0.75)
    assert summary["versus_base"]["mean_a"]["value"] == pytest.approx(1.0)


def test_the_auditor_role_chosen_grades_both_the_base_and_the_revision(tmp_path):
    from assay.grading.auditor_roles import ROLES

    with FakeJudgeServer.run_in_thread(stages=STAGES, models={"health-bot": actor()}) as server:
        out = refine(server, tmp_path, "--template", "auditor:medical-bioethicist")
        audits = [r["body"]["messages"][-1]["content"] for r in server.requests
                  if r.get("stage") == "auditor"]
    assert out.exit_code == 0, out.output
    # 15 active leaves graded before; after, the 3 of the one answer revised (the others are
    # left as they are, so their grades stand)
    assert len(audits) == 18
    assert all(a.startswith(ROLES["medical-bioethicist"]) for a in audits)
