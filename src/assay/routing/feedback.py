"""RubricsTree's response optimisation texts (seed 003 §6.3, App. I.2.3 and I.4): the feedback
report built from the auditor's verdicts, and the actor's revision prompt (P4), word for word.

The report lists every graded active leaf in routing order, in the paper's format: ``[Pass]`` or
``[Fail]``, the leaf's criterion text (the "Specific Rubric Prompt") and the auditor's reason.
A leaf the auditor did not grade (a failed or unparsed call) has no line: it is neither a pass
nor a fail, and the caller decides (``assay refine --method rubricstree`` does not revise an
item whose base grading is incomplete). Line breaks inside a criterion or a reason are folded
into spaces so that each entry keeps the format's two lines.

Example:
    >>> print(feedback_report([
    ...     LeafFeedback("ms.sf.er.01", "Tells the user to call emergency services.", False,
    ...                  "The response misses a possible heart attack."),
    ...     LeafFeedback("ms.cm.cl.01", "Uses plain language.", True, "Plain words.")]))
    Evaluated Rubrics and Feedback:
    - [Fail] Criterion: Tells the user to call emergency services.
      Reasoning: The response misses a possible heart attack.
    - [Pass] Criterion: Uses plain language.
      Reasoning: Plain words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

FEEDBACK_HEADER = "Evaluated Rubrics and Feedback:"

# P4, "Prompt for Feedback-Guided Optimization" (typos kept). The paper's text lost its line
# breaks; they are put back where the text runs on without a space (a heading or list item
# starting), so removing every "\n" gives the paper's text exactly.
REVISION_PROMPT = (
    "You are an expert personal health agent. Your task is to refine and improve your previous "
    "response based on the provided evaluation feedback.\n"
    "### User Query: {query}\n"
    "### Your Previous Response: {base_response}\n"
    "### Evaluation Feedback: {feedback_text}\n"
    "### Revision Instructions:\n"
    "1. Preserve the content of original response. Instead of rewrite, please augment the "
    "response by seamlessly inserting the necessary additions or clarifications.\n"
    "2. If the feedback indicates a failure (e.g., missing user context in a rubric criterion), "
    "augment your response by adding relevant follow-up questions or information.\n"
    "3. **Important** Delete or modify original statements part if the feedback specifically "
    "flags (e.g., definitive statement) them as incorrect, unsafe, or necessary to avoid, other "
    "wise please keep the original contents.\n"
    "Output the new updated response to the query:"
)
PROMPT_VERSION = "rubricstree-p4:" + hashlib.sha256(
    (FEEDBACK_HEADER + REVISION_PROMPT).encode()).hexdigest()[:12]
_SLOT = re.compile(r"\{(query|base_response|feedback_text)\}")


@dataclass(frozen=True)
class LeafFeedback:
    """The auditor's verdict on one active leaf: its id, criterion text, pass, reason."""

    leaf_id: str
    criterion: str
    passed: bool
    reasoning: str


def _one_line(text: str) -> str:
    return " ".join(text.split())


def feedback_report(leaves: Iterable[LeafFeedback]) -> str:
    """The paper's feedback report of ``leaves`` (see the module docstring)."""
    lines = [FEEDBACK_HEADER]
    for leaf in leaves:
        lines.append(f"- [{'Pass' if leaf.passed else 'Fail'}] Criterion: "
                     f"{_one_line(leaf.criterion)}")
        lines.append(f"  Reasoning: {_one_line(leaf.reasoning)}")
    return "\n".join(lines)


def revision_prompt(query: str, base_response: str, feedback_text: str) -> str:
    """P4 filled in one pass (inserted text is never scanned again for slots).

    >>> revision_prompt("Q {feedback_text}", "A", "F").splitlines()[1:4]
    ['### User Query: Q {feedback_text}', '### Your Previous Response: A', '### Evaluation Feedback: F']
    """
    values = {"query": query, "base_response": base_response, "feedback_text": feedback_text}
    return _SLOT.sub(lambda m: values[m.group(1)], REVISION_PROMPT)
