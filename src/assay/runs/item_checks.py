"""The checks that keep an item from being sent to a judge, shared by a run and its dry run.

An item without a rubric, without a response, with a response over
:data:`~assay.limits.MAX_RESPONSE_CHARS` or with a judge prompt over
:data:`~assay.limits.MAX_PROMPT_CHARS` is reported (an :class:`~assay.errors.Issue` naming it)
and skipped; the rest of the run goes on.

Example:
    >>> from assay.item import Item
    >>> str(item_issue(Item(id="q1", prompt="Bee?", response=""), None))
    '<input>: item[q1]: the item has no rubric and no --rubric was given'
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.errors import Issue
from assay.grading.grader import PlannedCall
from assay.item import Item
from assay.limits import MAX_PROMPT_CHARS, MAX_RESPONSE_CHARS, prompt_chars
from assay.rubric import Rubric


def item_issue(item: Item, rubric: Rubric | None) -> Issue | None:
    """Why ``item`` (graded against ``rubric``: its own or the run's) cannot be planned."""
    if rubric is None:
        return Issue(None, None, f"item[{item.id}]",
                     "the item has no rubric and no --rubric was given")
    if not item.response:
        return Issue(None, None, f"item[{item.id}].response", "no response to grade")
    if len(item.response) > MAX_RESPONSE_CHARS:  # never send a 50 MB answer to a judge
        return Issue(None, None, f"item[{item.id}].response",
                     f"{len(item.response):,} characters, over the limit of "
                     f"{MAX_RESPONSE_CHARS:,}: not sent to a judge")
    return None


def prompt_issue(item: Item, calls: Sequence[PlannedCall]) -> Issue | None:
    """Why the planned ``calls`` of ``item`` cannot be sent: a prompt over the limit."""
    longest = max((prompt_chars(c.messages) for c in calls), default=0)
    if longest > MAX_PROMPT_CHARS:
        return Issue(None, None, f"item[{item.id}]",
                     f"a judge prompt of {longest:,} characters, over the limit of "
                     f"{MAX_PROMPT_CHARS:,}: not sent to a judge")
    return None
