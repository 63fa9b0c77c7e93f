"""OpenAI's Responses API (``POST /responses``), for free-text answers of a model under test.

simple-evals samples its newer reasoning models (o3, o4-mini, o1-pro) through this API
(``ResponsesSampler``), so ``--protocol simple-evals`` asks them the same way (wire
``openai-responses``; authentication and headers as the chat-completions wire). A reply's answer
is its ``output_text`` (the text parts of its ``message`` items, in order), its thinking the
``reasoning`` items' summaries; a reply stopped at ``max_output_tokens`` ends with
``finish_reason`` ``length``, one stopped by the content filter is a refusal. A structured
request (a judge) describes its schema in the prompt.

Example:
    >>> reply = OpenAIResponsesWire().read({"status": "completed", "output": [
    ...     {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Think."}]},
    ...     {"type": "message", "content": [{"type": "output_text", "text": "Ice it."}]}],
    ...     "usage": {"input_tokens": 9, "output_tokens": 4,
    ...               "output_tokens_details": {"reasoning_tokens": 2}}})
    >>> reply.text, reply.finish_reason, reply.reasoning, reply.usage.reasoning_tokens
    ('Ice it.', 'stop', 'Think.', 2)
"""

from __future__ import annotations

from typing import Any

from assay.judges.config import JudgeConfig
from assay.judges.openai_compat import TEXT_MODE, OpenAIWire, WireReply, _with_instruction
from assay.judges.simple_evals import SAMPLER_MODE, sampler_body
from assay.judges.structured import json_instruction
from assay.judges.types import Usage


class OpenAIResponsesWire(OpenAIWire):
    path = "/responses"
    modes = ("prompt",)

    def build_body(
        self,
        config: JudgeConfig,
        messages: tuple[dict[str, Any], ...],
        schema: dict[str, Any] | None,
        schema_name: str,
        mode: str,
        *,
        cache_prefix: int = 0,  # OpenAI caches shared prefixes by itself: nothing to mark
        cache_ttl: str = "5m",
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The request body; ``max_tokens``: ``max_output_tokens`` (default: the config's)."""
        if max_tokens is None:
            max_tokens = config.max_tokens
        if mode == SAMPLER_MODE:
            return sampler_body("openai-responses", config.model, messages,
                                temperature=config.temperature, max_tokens=max_tokens,
                                extra=config.extra_body)
        if mode != TEXT_MODE:
            messages = _with_instruction(messages, json_instruction(schema))
        body: dict[str, Any] = {"model": config.model, "input": list(messages)}
        if max_tokens is not None:
            body["max_output_tokens"] = max_tokens
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.reasoning_effort is not None:
            body["reasoning"] = {"effort": config.reasoning_effort}
        if config.extra_body:
            body.update(config.extra_body)
        return body

    def read(self, payload: dict[str, Any]) -> WireReply:
        """Answer, usage, refusal, finish reason and thinking of a Responses API reply."""
        text, refusal, thinking = [], None, []
        for item in payload.get("output") or []:
            if item.get("type") == "message":
                for part in item.get("content") or []:
                    if part.get("type") == "output_text":
                        text.append(part.get("text") or "")
                    elif part.get("type") == "refusal":
                        refusal = part.get("refusal") or "the model refused to answer"
            elif item.get("type") == "reasoning":
                thinking += [s.get("text", "") for s in item.get("summary") or []]
        cut = (payload.get("incomplete_details") or {}).get("reason")
        if cut == "content_filter" and not refusal:
            refusal = "the endpoint's content filter stopped the reply"
        finish = "length" if cut == "max_output_tokens" else "stop"
        return WireReply("".join(text), _usage(payload.get("usage")), refusal, finish,
                         "\n".join(t for t in thinking if t) or None)

    def rejects_mode(self, status: int, body: bytes) -> bool:
        return False  # one mode: nothing to fall back to


def _usage(raw: dict[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    details_in = raw.get("input_tokens_details") or {}
    details_out = raw.get("output_tokens_details") or {}
    return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0),
                 int(details_in.get("cached_tokens") or 0),
                 int(details_out.get("reasoning_tokens") or 0))
