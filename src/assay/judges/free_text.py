"""A free-text answer (the model under test) from a provider reply: what is graded, what is kept.

The visible answer is what a user would read and what is graded; a reasoning model's thinking
(returned apart, or inline as ``<think>...</think>`` before the answer, as Qwen3 and DeepSeek-R1
served raw do) is kept beside it, never graded. A stop is recorded, never hidden: a reply cut
at the token limit keeps ``finish_reason: "length"``; the model's own refusal is its answer
(``finish_reason: "refusal"``); a content filter's stop, or no visible text at all, is a
failure, never an empty answer to grade.

Example:
    >>> from assay.judges.openai_compat import WireReply
    >>> from assay.judges.types import Usage
    >>> text_answer(WireReply("<think>dose?</think>\\nTake 500 mg.", Usage(), None, "stop"))
    ({'text': 'Take 500 mg.', 'finish_reason': 'stop', 'reasoning': 'dose?'}, None)
    >>> text_answer(WireReply("", Usage(), None, "length"))[1].kind.value
    'empty'
"""

from __future__ import annotations

import re
from typing import Any

from assay.judges.openai_compat import WireReply
from assay.judges.types import Failure, FailureKind

_INLINE_THINKING = re.compile(r"\A\s*<think>(.*?)</think>\s*", re.DOTALL)


def text_answer(reply: WireReply) -> tuple[dict[str, Any] | None, Failure | None]:
    """``({"text", "finish_reason", "reasoning"}, None)``, or ``(None, failure)``."""
    finish = reply.finish_reason
    if finish == "content_filter":
        return None, Failure(FailureKind.REFUSAL, "the endpoint's content filter stopped the answer")
    visible, reasoning = reply.text, reply.reasoning
    inline = _INLINE_THINKING.match(visible)
    if inline is not None:
        visible = visible[inline.end():]
        reasoning = "\n\n".join(part for part in (reasoning, inline.group(1).strip()) if part)
    if reply.refusal is not None:
        if not visible.strip() and finish != "refusal":  # OpenAI's message.refusal: the model's words
            visible = reply.refusal
        finish = "refusal"
    if not visible.strip():
        return None, Failure(FailureKind.EMPTY,
                             f"the model returned no visible answer (finish reason {finish})")
    return {"text": visible, "finish_reason": finish, "reasoning": reasoning or None}, None
