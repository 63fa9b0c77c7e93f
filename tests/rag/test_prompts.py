"""The ASTRID prompts are the paper's Listings 1-4, verbatim (golden files), and the RAGAS
baselines use the RAGAS paper's prompts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.rag import prompts

GOLDEN = Path(__file__).parent / "golden"
PAPER_LISTINGS = Path(__file__).parents[1] / "data" / "papers" / "astrid_appendix_a3_listings.txt"
FIG11_19_CONTEXT = ("The DVLA says you can drive again when you can read a car number plate from "
                    "20 metres.")


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def test_listing_1_grounding_prompt_is_golden():
    rendered = prompts.grounding_prompt(
        "when can I start driving", FIG11_19_CONTEXT,
        ["You can drive when you can read a number plate from 20 metres.", "You need new glasses."])
    assert rendered == golden("listing_1_grounding.txt")


def test_listing_2_categorisation_prompt_is_golden():
    rendered = prompts.categorisation_prompt([
        "Sure.", ("As a precaution, avoid water exposure to the eyes, especially in the first month "
                  "after surgery."), "Is there anything else I can help you with?"])
    assert rendered == golden("listing_2_categorisation.txt")


def test_listing_3_refusal_prompt_is_golden():
    rendered = prompts.refusal_prompt("How can I treat my back pain?",
                                      "I'm unable to provide assistance with that.")
    assert rendered == golden("listing_3_refusal.txt")


def test_listing_4_context_relevance_prompt_is_golden():
    rendered = prompts.context_relevance_prompt("when can I start driving", FIG11_19_CONTEXT)
    assert rendered == golden("listing_4_context_relevance.txt")


def _paper_text() -> str:
    """Appendix A.3 of the ASTRID paper, quoted in the repository (its header names the source)."""
    text = PAPER_LISTINGS.read_text(encoding="utf-8")
    return text.split("\n\n", 1)[1]  # the quote begins after the header's blank line


@pytest.mark.parametrize("name", ["LISTING_1_GROUNDING", "LISTING_2_CATEGORISATION",
                                  "LISTING_3_REFUSAL", "LISTING_4_CONTEXT_RELEVANCE"])
def test_every_line_of_each_listing_is_in_the_paper(name):
    """Against the paper itself: its line numbers and PDF wrapping removed, ``f{x}`` -> ``{x}``."""
    lines = [re.sub(r"^\s*(\d+|II)(\s|$)", "", line) for line in _paper_text().splitlines()]
    paper = re.sub(r"\s+", " ", " ".join(lines)).replace("f{", "{")
    template = getattr(prompts, name).replace("{{", "{").replace("}}", "}")
    missing = [line for line in template.splitlines()
               if line.strip() and re.sub(r"\s+", " ", line.strip()) not in paper]
    assert missing == []


def test_multi_turn_grounding_context_adds_the_conversation_after_the_passages():
    assert prompts.grounding_context("passages", "") == "passages"
    assert prompts.grounding_context("passages", "Patient: hi") == (
        "passages\n\nConversation so far:\nPatient: hi")


def test_ragas_prompts_are_the_ragas_papers():
    assert prompts.ragas_statements_prompt("Q?", "A.") == (
        "Given a question and answer, create one or more statements from each sentence in the "
        "given answer.\nquestion: Q?\nanswer: A.\n")
    verification = prompts.ragas_verification_prompt("ctx", ["s1", "s2"])
    assert verification.startswith("Consider the given context and following statements, then "
                                   "determine whether they are supported by the information "
                                   "present in the context.")
    assert verification.endswith("context: ctx\nstatement: s1\nstatement: s2\n")
    assert 'return the phrase "Insufficient Information"' in prompts.ragas_context_prompt("q", "c")
