"""The paper's adaptive-selection prompt (Appendix G), verbatim, and its reply schema.

The PDF's extraction marks headings with ``####``; the prompt's own headings are the ``# ...``
lines kept here. The JSON example keeps the paper's trailing comma and code fence (the judges
layer's parser tolerates both in the reply). ``<<conversation>>`` is the conversation rendered
as simple-evals does (``role: content`` turns separated by blank lines) and ``<<rubric_item>>``
the criterion text.

Example:
    >>> text = render_relevance_prompt([{"role": "user", "content": "Bee sting?"}], "Says hi.")
    >>> text.splitlines()[0].startswith("You are a careful, concise evaluator.")
    True
    >>> "user: Bee sting?" in text and "# Rubric Criterion\\n\\nSays hi." in text
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

STAGE = "bank_relevance"
VERSION = "health-score-relevance-1"

RELEVANCE_TEMPLATE = """You are a careful, concise evaluator. Your job is to judge how relevant \
a rubric criterion is to a given medical conversation. You do not provide medical advice; you \
only assess relevance.
Evaluate the relevance of the rubric criterion to the medical question.

# Instructions

Relevance means = how directly the criterion would help assess or grade an "answer" to the \
conversation/question. If the criterion aligns with the information the answer must cover \
(facts, reasoning steps, safety checks, scope, context), it's relevant. If it's tangential or \
unrelated, it's not relevant.

Scoring scale (1–5)

5 (Highly relevant): The criterion is central/essential to correctly answering or grading the \
question. An answer that satisfies this criterion would directly improve \
correctness/safety/completeness for this question.

4 (Relevant): The criterion is clearly helpful but not absolutely essential.

3 (Somewhat relevant / uncertain): The criterion may help in part of the answer or under common \
interpretations, but relevance is limited or ambiguous.

2 (Weakly relevant): Minimal or indirect connection; would rarely affect grading quality.

1 (Not relevant): No meaningful connection to the question.

If the criterion is about a different topic, population, or task type than the question → lean \
to 1–2.

# Medical Conversation

<<conversation>>

# Rubric Criterion

<<rubric_item>>

# Output format

Return only this JSON object (no markdown code fences, no extra text):

```json
{
  "score": <integer 1-5>,
  "justification_short": "<one to two sentence, non-speculative explanation that cites \
concrete overlaps or mismatches>",
}
```"""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "justification_short": {"type": "string"},
    },
    "required": ["score"],
}


def render_conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """simple-evals' rendering: ``role: content`` turns joined by blank lines."""
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)


def render_relevance_prompt(messages: Sequence[Mapping[str, Any]], criterion_text: str) -> str:
    return (RELEVANCE_TEMPLATE.replace("<<conversation>>", render_conversation(messages))
            .replace("<<rubric_item>>", criterion_text))
