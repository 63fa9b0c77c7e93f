"""Reading ``assay serve``'s request bodies: every field checked before anything is scored.

A ``POST /v1/rewards`` body is ``{"items": [ITEM, ...]}``; each ITEM has

* ``prompt`` (a non-empty string: one user message) **or** ``messages`` (a non-empty list of
  ``{"role", "content"}``; ``role`` one of system, developer, user, assistant, tool;
  ``content`` a string or OpenAI content parts ``[{"type": "text", "text": ...}]``, whose texts
  are joined; other keys of a message, such as ``name``, are ignored);
* ``completion`` (a string, required: a missing completion is an error, not an empty answer
  graded; an empty string is an answer and is graded);
* ``criteria`` (optional; see :mod:`assay.rewards.labels`).

Any other key is an error (a misspelt ``criteria`` must not silently grade on the bank). Every
bad field of the request is reported at once, each named by its place (``items[2].messages[0]
.role``), so a client's mistake is that request's 400 and never reaches the batch it would
have shared with other clients' requests.

Example:
    >>> [item] = reward_items({"items": [{"messages": [{"role": "user", "content": [
    ...     {"type": "text", "text": "Cough for a week?"}]}], "completion": "See a doctor."}]})
    >>> item.messages[0]["content"], item.completion
    ('Cough for a week?', 'See a doctor.')
    >>> reward_items({"items": [{"prompt": "Hi", "completion": 3}]})
    Traceback (most recent call last):
    ...
    assay.errors.InputError: <input>: items[0].completion: expected a string, got int
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from assay.errors import InputError, Issue
from assay.item import Role
from assay.rewards.labels import criteria_from_label
from assay.rewards.scorer import RewardItem
from assay.rubric import Criterion

ROLES: tuple[str, ...] = get_args(Role)
ITEM_KEYS = frozenset({"prompt", "messages", "completion", "criteria"})


def reward_items(body: Any, bank: Sequence[Criterion] | None = None, *,
                 criteria_required: bool = False) -> list[RewardItem]:
    """The items of a ``/v1/rewards`` body, or an :class:`InputError` naming every bad field.

    ``bank``: the scorer's criteria, which criterion ids in ``criteria`` refer to;
    ``criteria_required``: the server has no bank nor selector, so every item brings criteria.
    """
    raw = body.get("items") if isinstance(body, dict) else None
    if not isinstance(raw, list):
        raise InputError(Issue(None, None, "items", 'expected {"items": [{"prompt" or '
                               '"messages", "completion", "criteria"?}, ...]}'))
    issues: list[Issue] = []
    items: list[RewardItem] = []
    for i, entry in enumerate(raw):
        try:
            item = reward_item(entry, f"items[{i}]", bank)
        except InputError as exc:
            issues += exc.issues
            continue
        if criteria_required and item.criteria is None:
            issues.append(Issue(None, None, f"items[{i}].criteria", "required: the server has "
                                "no bank (assay serve --bank), so every item brings its criteria"))
        items.append(item)
    if issues:
        raise InputError(issues)
    return items


def reward_item(entry: Any, where: str, bank: Sequence[Criterion] | None = None) -> RewardItem:
    """One item (``{"prompt" | "messages", "completion", "criteria"?}``), every field checked."""
    if not isinstance(entry, dict):
        raise InputError(Issue(None, None, where, f"expected an object, got {_kind(entry)}"))
    issues = [Issue(None, None, f"{where}.{key}", "unknown field; an item has prompt or "
                    "messages, completion and criteria") for key in entry if key not in ITEM_KEYS]
    conversation: str | list[dict[str, str]] | None = None
    try:
        conversation = prompt_of(entry, where)
    except InputError as exc:
        issues += exc.issues
    completion = entry.get("completion")
    if "completion" not in entry:
        issues.append(Issue(None, None, f"{where}.completion", "required (the answer to reward)"))
    elif not isinstance(completion, str):
        issues.append(Issue(None, None, f"{where}.completion",
                            f"expected a string, got {_kind(completion)}"))
    criteria = None
    try:
        criteria = criteria_from_label(entry.get("criteria"), bank, where=f"{where}.criteria")
    except InputError as exc:
        issues += exc.issues
    if issues or conversation is None or not isinstance(completion, str):
        raise InputError(issues)
    return RewardItem.of(conversation, completion, criteria)


def prompt_of(entry: dict[str, Any], where: str) -> str | list[dict[str, str]]:
    """The item's ``prompt`` string or its checked ``messages`` (content parts joined)."""
    if "prompt" in entry and "messages" in entry:
        raise InputError(Issue(None, None, where, "give prompt or messages, not both"))
    if "messages" in entry:
        return messages_of(entry["messages"], f"{where}.messages")
    prompt = entry.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        got = "nothing" if prompt is None else _kind(prompt)
        raise InputError(Issue(None, None, f"{where}.prompt", "a non-empty prompt string or a "
                               f"messages list is required, got {got}"))
    return prompt


def messages_of(value: Any, where: str) -> list[dict[str, str]]:
    """A checked conversation: each message's role known and its content text."""
    if not isinstance(value, list) or not value:
        raise InputError(Issue(None, None, where, "expected a non-empty list of "
                               f"{{role, content}} messages, got {_kind(value)}"))
    issues: list[Issue] = []
    messages: list[dict[str, str]] = []
    for j, message in enumerate(value):
        at = f"{where}[{j}]"
        if not isinstance(message, dict):
            issues.append(Issue(None, None, at, f"expected a {{role, content}} object, got "
                                f"{_kind(message)}"))
            continue
        role = message.get("role")
        if role not in ROLES:
            issues.append(Issue(None, None, f"{at}.role", f"expected one of {', '.join(ROLES)}, "
                                f"got {role!r}"[:200]))
        try:
            text = content_text(message.get("content"), f"{at}.content")
        except InputError as exc:
            issues += exc.issues
            continue
        messages.append({"role": str(role), "content": text})
    if issues:
        raise InputError(issues)
    return messages


def content_text(content: Any, where: str) -> str:
    """A message's text: a string, or OpenAI content parts of type ``text`` joined.

    >>> content_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "c")
    'ab'
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        raise InputError(Issue(None, None, where, "expected a string or a non-empty list of "
                               f"text content parts, got {_kind(content)}"))
    texts: list[str] = []
    issues: list[Issue] = []
    for k, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, dict) else _kind(part)
            issues.append(Issue(None, None, f"{where}[{k}]", f"only text parts can be graded, "
                                f"got {kind!r}"[:200]))
        elif not isinstance(part.get("text"), str):
            issues.append(Issue(None, None, f"{where}[{k}].text", "expected a string"))
        else:
            texts.append(part["text"])
    if issues:
        raise InputError(issues)
    return "".join(texts)


def _kind(value: Any) -> str:
    """A JSON value's kind for an error message (never the value: it may be a whole prompt)."""
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)
