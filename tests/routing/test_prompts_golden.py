"""The papers' prompts are used word for word (compared with the papers' own text)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from assay.grading.prompts import criterion_messages
from assay.grading.templates import builtin_template
from assay.item import Item
from assay.routing.base import Entry
from assay.routing.prompts import (
    RELEVANCE_PROMPT,
    catalogue_prompt,
    catalogue_row,
    relevance_prompt,
)
from assay.rubric import Criterion

PAPER = json.loads((Path(__file__).parent / "data" / "paper_prompts.json").read_text("utf-8"))


def squash(text: str) -> str:
    """The papers' PDFs lost line breaks and heading marks: compare everything else."""
    return re.sub(r"[\s#`]", "", text.replace("```json", ""))


def test_the_catalogue_router_prompt_is_rubricstrees_selection_prompt():
    ours = catalogue_prompt("{user_query}", "", [])
    paper = PAPER["rubricstree_router"]
    assert squash(ours) == squash(paper.replace("{rubrics_catalog}", ""))


def test_the_auditor_template_is_rubricstrees_clinical_auditor_prompt():
    template = builtin_template("auditor")
    filled = template.fill({"conversation": "{query}", "context": "", "response": "{response}",
                            "criterion_text": "{eval_criteria}"})
    assert squash(filled) == squash(PAPER["rubricstree_auditor"])
    assert template.reply == "bracket" and template.sampling == {"temperature": 0.1}


def test_the_relevance_prompt_is_health_scores_selection_prompt():
    assert squash(RELEVANCE_PROMPT) == squash(PAPER["healthscore_relevance"].replace("\\_", "_"))
    filled = relevance_prompt("user: my knee hurts", "Suggests consulting a provider.")
    assert "# Medical Conversation\n\nuser: my knee hurts\n\n# Rubric Criterion\n\nSuggests" in filled


def test_catalogue_rows_follow_the_papers_row_format():
    entry = Entry("hm.lab.01", "Mentions LDL-C.", ("Health memory", "Labs", "Lipids", "LDL"),
                  "specific biomarker inquiries")
    assert catalogue_row(entry) == ("ID:hm.lab.01, Taxonomy: Health memory -> Labs -> Lipids -> "
                                    "LDL, Trigger Condition: specific biomarker inquiries")
    assert catalogue_row(Entry("x", "X.", ("A", "B", "C"))).endswith("Trigger Condition: None")


def test_the_health_memory_is_shown_to_the_router_and_the_auditor_in_one_format():
    memory = {"labs": [{"name": "LDL-C", "value": 162, "unit": "mg/dL",
                        "reference_range": {"high": 130}}]}
    item = Item(id="q", prompt="Is my cholesterol ok?", response="Yes.", health_memory=memory)
    block = "Labs:\n- LDL-C: 162 mg/dL (reference <= 130; HIGH)"
    assert f"### User Health Memory\n{block}\n" in catalogue_prompt(item.prompt, item.health_memory
                                                                   .render(), [])
    messages = criterion_messages(builtin_template("auditor"), item,
                                          Criterion(id="c", text="Mentions LDL-C."))
    assert f"<health_memory>\n{block}\n</health_memory>" in messages[0]["content"]
