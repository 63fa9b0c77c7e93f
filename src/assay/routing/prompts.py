"""The routers' prompts and reply schemas.

* :data:`CATALOGUE_PROMPT`: RubricsTree's "Prompt for Adaptive Rubric Selection" (App. I.4),
  word for word (typos kept), with ``{user_query}`` and ``{rubrics_catalog}``; catalogue rows
  are ``ID:[id], Taxonomy: L1 -> L2 -> L3 [-> L4], Trigger Condition: [trigger]``.
* :data:`RELEVANCE_PROMPT`: Health-SCORE's adaptive-selection prompt (App. G), word for word,
  with ``<<conversation>>`` and ``<<rubric_item>>``; a 1-5 score per criterion.
* :data:`TREE_PROMPT`: the top-down walk of RubricsTree §3.1 (the paper gives no prompt for
  it): P1's selection rules, applied to one level of nodes at a time, each rated 0-1.

The paper's replies are a bare ID list and a fenced JSON object; the judges layer asks every
model for a JSON object, so the ID list travels as ``{"rubric_ids": [...]}``.
When the query has a health memory, it is shown after the query under "### User Health Memory"
(the papers leave its serialisation open; see :mod:`assay.health_memory`).

Example:
    >>> from assay.routing.base import Entry
    >>> catalogue_row(Entry("hm.lab.01", "Mentions LDL-C.", ("Health memory", "Labs", "Lipids"),
    ...                     "lipid or cholesterol questions"))
    'ID:hm.lab.01, Taxonomy: Health memory -> Labs -> Lipids, Trigger Condition: lipid or cholesterol questions'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from assay.judges.completion import CompletionBudget
from assay.routing.base import Entry

CATALOGUE_PROMPT = """\
You are an expert in medical triage and health information classification. Your task is to analyze a user’s health-related query and select the most appropriate evaluation rubrics from a provided catalog of all rubrics.

### Selection Guidelines
You must consider why the user is asking the query and what information would make the response optimal. Determine if a rubric from the catalog is relevant based on the following rules:
1. Implicit Context: The user query does not need to directly mention ’me’, ’my’, or ’personal’ to be relevant to personal health data/rubrics.
2. Relevance Criteria: A rubric is relevant to the user query if and only if the following are all true (for the user health memory, only focus on around 5-8 relevant KEY metrics (could be more only if the user query asks for a broader range of information):
a) The rubrics is strongly related to the user query keywords. AND
b) The response would be significantly improved with the information from that rubric. AND
c) The user query fits the "Trigger Condition" of that rubric.

### Understanding the Taxonomy
Each rubric row in the catalog contains a hierarchical classification path, moving from general categories to highly specific aspects and the trigger condition:
ID:[Rubric ID], Taxonomy: [Level 1] -> [Level 2] -> [Level 3] -> [Level 4] (optional), Trigger Condition: [Trigger Condition]
Note: Level 1, Level 2, and Level 3 are always provided. Level 4 may be empty or "None". When evaluating a rubric, consider the relevance of the higher levels to the user query first, and then finalize your decision based on the deepest available level in that row.

### User Query
"{user_query}"
{health_memory}
### Rubrics Catalog and Rubric Trigger Condition
Below is the full catalog with the trigger condition of available rubrics. Each entry includes a unique Rubric ID, its Taxonomy Path, and its Trigger Condition.
{rubrics_catalog}

### Evaluation Instructions
1. Analyze the user’s query against every rubric provided in the catalog.
2. Identify ALL rubrics that meet the relevance criteria.
3. Only select more relevant rubrics to evaluate the user query.
4. Output in the correct ID list format.

### Output Format
Provide your final evaluation STRICTLY as a list array of the selected Rubric IDs in the bracket. Do not include any markdown formatting, explanations, or conversational text. Ohterwise, the evaluation is invalid.
Example Output: ["xxx.xxx.01", "yyy.zzz.02", "xxx.ddd.01"]"""

RELEVANCE_PROMPT = """\
You are a careful, concise evaluator. Your job is to judge how relevant a rubric criterion is to a given medical conversation. You do not provide medical advice; you only assess relevance.
Evaluate the relevance of the rubric criterion to the medical question.

# Instructions

Relevance means = how directly the criterion would help assess or grade an "answer" to the conversation/question. If the criterion aligns with the information the answer must cover (facts, reasoning steps, safety checks, scope, context), it's relevant. If it's tangential or unrelated, it's not relevant.

## Scoring scale (1–5)

5 (Highly relevant): The criterion is central/essential to correctly answering or grading the question. An answer that satisfies this criterion would directly improve correctness/safety/completeness for this question.

4 (Relevant): The criterion is clearly helpful but not absolutely essential.

3 (Somewhat relevant / uncertain): The criterion may help in part of the answer or under common interpretations, but relevance is limited or ambiguous.

2 (Weakly relevant): Minimal or indirect connection; would rarely affect grading quality.

1 (Not relevant): No meaningful connection to the question.

If the criterion is about a different topic, population, or task type than the question → lean to 1–2.

# Medical Conversation

<<conversation>>

# Rubric Criterion

<<rubric_item>>

# Output format

Return only this JSON object (no markdown code fences, no extra text):

{
  "score": <integer 1-5>,
  "justification_short": "<one to two sentence, non-speculative explanation that cites concrete overlaps or mismatches>",
}"""

TREE_PROMPT = """\
You are an expert in medical triage and health information classification. You walk a hierarchical catalog of evaluation rubrics from the top down: at each step you rate how relevant each listed node is to the user’s health-related query, and only the nodes you rate as relevant are opened further.

### Selection Guidelines
You must consider why the user is asking the query and what information would make the response optimal.
1. Implicit Context: The user query does not need to directly mention ’me’, ’my’, or ’personal’ to be relevant to personal health data/rubrics.
2. A node is relevant when the user query fits its Trigger Condition (or, for a category, when any aspect it covers fits) and the response would be significantly improved with the information from it. For the user health memory, only focus on around 5-8 relevant KEY metrics (could be more only if the user query asks for a broader range of information).

### User Query
"{user_query}"
{health_memory}
### Nodes to Rate (depth {depth})
Each row: ID:[Node ID], Taxonomy: [path], Trigger Condition: [when it applies or what it covers]
{nodes}

### Output Format
Rate every node's relevance from 0 (unrelated) to 1 (essential) with one short reason.{query_class}
Reply with a JSON object: {{"query_class": "...", "nodes": [{{"id": "...", "relevance": 0.0, "reason": "..."}}]}}"""

QUERY_CLASS_NOTE = """
Also classify the query as "emergency" (possible red-flag or urgent symptoms), "broad" (asks for a wide review of the user's health), "narrow" (one specific fact or metric) or "standard"."""

_SLOT = re.compile(r"\{(user_query|health_memory|rubrics_catalog)\}")
HEALTH_MEMORY_SECTION = "\n### User Health Memory\n{memory}\n"

def catalogue_schema(ids: Sequence[str]) -> dict[str, Any]:
    """P1's reply: some of the leaf ``ids`` shown (an enum of them), each at most once.

    >>> catalogue_schema(["a1", "a2"])["properties"]["rubric_ids"]
    {'type': 'array', 'items': {'type': 'string', 'enum': ['a1', 'a2']}, 'maxItems': 2}
    """
    return {"type": "object", "required": ["rubric_ids"], "properties": {"rubric_ids": {
        "type": "array", "items": {"type": "string", "enum": list(ids)}, "maxItems": len(ids)}}}


def catalogue_budget(n_ids: int) -> CompletionBudget:
    """The completion budget of a selection among ``n_ids`` leaves (about 16 tokens an id)."""
    return CompletionBudget.listing(n_ids, each=16)


def tree_budget(n_nodes: int) -> CompletionBudget:
    """The completion budget of rating ``n_nodes`` nodes (id, relevance, a short reason)."""
    return CompletionBudget.listing(n_nodes, each=80)


RELEVANCE_BUDGET = CompletionBudget(256, cap=1024)
RELEVANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5},
                   "justification_short": {"type": "string"}},
    "required": ["score", "justification_short"],
}
QUERY_CLASSES = ("emergency", "broad", "standard", "narrow")


def tree_schema(first_level: bool, ids: Sequence[str]) -> dict[str, Any]:
    """A tree-walk step's reply: ratings of nodes named by ``ids`` (an enum of them)."""
    node = {"type": "object", "required": ["id", "relevance"],
            "properties": {"id": {"type": "string", "enum": list(ids)},
                           "relevance": {"type": "number", "minimum": 0, "maximum": 1},
                           "reason": {"type": "string"}}}
    properties: dict[str, Any] = {"nodes": {"type": "array", "items": node,
                                            "maxItems": len(ids)}}
    required = ["nodes"]
    if first_level:
        properties["query_class"] = {"type": "string", "enum": list(QUERY_CLASSES)}
        required.append("query_class")
    return {"type": "object", "properties": properties, "required": required}


def prompt_version(text: str) -> str:
    """A short hash of a prompt text, part of a router's config (and so of its cache key)."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def catalogue_row(entry: Entry) -> str:
    """One catalogue row in P1's format (``None`` when a leaf has no trigger)."""
    return (f"ID:{entry.id}, Taxonomy: {' -> '.join(entry.path)}, "
            f"Trigger Condition: {entry.trigger or 'None'}")


def memory_section(memory: str) -> str:
    return HEALTH_MEMORY_SECTION.format(memory=memory) if memory else ""


def catalogue_prompt(query: str, memory: str, entries: Sequence[Entry]) -> str:
    """P1 filled in one pass (inserted text is never scanned for placeholders again)."""
    values = {"user_query": query, "health_memory": memory_section(memory),
              "rubrics_catalog": "\n".join(catalogue_row(e) for e in entries)}
    return _SLOT.sub(lambda m: values[m.group(1)], CATALOGUE_PROMPT)


def relevance_prompt(conversation: str, criterion: str) -> str:
    """Health-SCORE's prompt, filled as simple-evals fills its templates (``str.replace``)."""
    return RELEVANCE_PROMPT.replace("<<conversation>>", conversation).replace(
        "<<rubric_item>>", criterion)


def tree_prompt(query: str, memory: str, rows: Sequence[str], depth: int,
                first_level: bool) -> str:
    return TREE_PROMPT.format(user_query=query, health_memory=memory_section(memory),
                              depth=depth, nodes="\n".join(rows),
                              query_class=QUERY_CLASS_NOTE if first_level else "")
