"""The stage prompts are the paper's (seed 000, Tables 9–15), word for word, and overridable."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.generate import SCHEMAS, load_templates

PAPER = {  # sentences quoted from the paper's appendix
    "route": [("You are an expert Medical Research Assistant. Analyze the user’s query and decide "
              "which authoritative sources are needed."),
              ("2. Generate 3–5 specific search queries combining medical terms with relevant "
              "authoritative sites."),
              'Example format: {"intent": "string", "queries": ["query1", "query2", "query3"]}'],
    "synthesize_evidence": [("Your goal is to create a structured “Evidence Block” strictly "
                            "following the provided JSON schema."),
                            "Ensure every extracted entry is associated with a valid source URL."],
    "extract_facts": ["Task: Decompose the provided text into a comprehensive list of Atomic Facts.",
                      "- Deconstruct complex sentences into single, standalone premises."],
    "filter_facts": [("ALWAYS retain all safety_red_flags and negative_constraints, regardless of "
                     "query specificity.")],
    "interaction_intent": ["Analyze the user query to identify implicit interaction requirements."],
    "draft_rubric": [("Aim for comprehensive coverage while keeping the total number of criteria "
                     "under 15 through effective clustering."),
                     ("- Safety first: every red flag or contraindication must correspond to a "
                     "high-stakes evaluation criterion.")],
    "audit_rubric": ["- Constraint: The final rubric must contain no more than 20 criteria.",
                     ("- Exception: Do NOT merge distinct safety red flags or distinct negative "
                     "constraints; these must remain separate for visibility."),
                     ("- Negative Check: Ensure that at least one negative (penalty) criterion is "
                     "present.")],
}


@pytest.mark.parametrize("stage", sorted(PAPER))
def test_each_stage_prompt_quotes_the_paper(stage):
    [text] = ["\n".join(m["content"] for m in load_templates()[stage].render(
        max_draft=15, max_criteria=20))]
    for sentence in PAPER[stage]:
        assert sentence in text


def test_every_stage_has_a_template_and_a_schema_named_after_it():
    templates = load_templates()
    assert set(templates) == set(SCHEMAS)
    assert all(s["type"] == "object" and s["required"] for s in SCHEMAS.values())


def test_placeholders_are_filled_and_json_braces_left_alone():
    messages = load_templates()["filter_facts"].render(query="Q?", facts="[1]")
    assert messages[1]["content"] == "User Query: Q?\n\nAtomic Facts:\n[1]"
    assert '"relevant_positive_facts": [],' in messages[0]["content"]


def test_a_folder_overrides_the_stages_it_names(tmp_path):
    (tmp_path / "route.txt").write_text("Be brief.\n=== user ===\nQ: {query}", encoding="utf-8")
    templates = load_templates(tmp_path)
    assert templates["route"].render(query="x") == [{"role": "system", "content": "Be brief."},
                                                     {"role": "user", "content": "Q: x"}]
    assert templates["route"].version != load_templates()["route"].version
    assert templates["audit_rubric"] == load_templates()["audit_rubric"]


def test_an_override_for_an_unknown_stage_is_refused(tmp_path):
    (tmp_path / "rout.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="unknown stage"):
        load_templates(tmp_path)


def test_an_override_with_an_unknown_placeholder_is_refused_at_its_line(tmp_path):
    """Issue 30, point 6: a misspelt placeholder would reach the model unfilled."""
    path = tmp_path / "route.txt"
    path.write_text("Be brief.\n=== user ===\nQ: {querry}", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_templates(tmp_path)
    assert f"{path}:3: {{querry}}: unknown placeholder (route fills {{query}})" in [
        str(i) for i in caught.value.issues]


def test_an_override_missing_a_placeholder_is_refused(tmp_path):
    """Without {query} the route stage would never see the user's question."""
    path = tmp_path / "route.txt"
    path.write_text("Route this medical question.", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_templates(tmp_path)
    assert [str(i) for i in caught.value.issues] == [
        f"{path}: {{query}}: missing placeholder (route fills {{query}})"]
