"""The Anthropic Messages API wire format (``POST /v1/messages``), spoken natively.

Structured modes: ``tool`` (a tool whose ``input_schema`` is the reply schema, forced with
``tool_choice``; the tool input is the reply) and ``prompt``. A leading ``system`` message goes
to the ``system`` field; ``thinking_budget`` turns on extended thinking (the tool is then
offered with ``tool_choice: auto``, as the API requires).

Example:
    >>> from assay.judges.specs import parse_spec
    >>> cfg = parse_spec("anthropic:claude-sonnet-4-5")
    >>> body = AnthropicWire().build_body(cfg, ({"role": "system", "content": "Be strict."},
    ...     {"role": "user", "content": "hi"}), {"type": "object"}, "verdict", "tool")
    >>> body["system"], body["tool_choice"], body["max_tokens"]
    ('Be strict.', {'type': 'tool', 'name': 'verdict'}, 1024)
"""

from __future__ import annotations

from typing import Any

import orjson

from assay.judges.config import JudgeConfig
from assay.judges.openai_compat import TEXT_MODE, WireReply, _with_instruction
from assay.judges.secrets import Secret
from assay.judges.simple_evals import SAMPLER_MODE, sampler_body
from assay.judges.structured import json_instruction
from assay.judges.types import Usage

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024


def max_tokens_of(config: JudgeConfig, requested: int | None = None) -> int:
    """The ``max_tokens`` sent: ``requested``, else the config's (the Messages API needs one;
    with extended thinking it must exceed the thinking budget)."""
    max_tokens = requested or config.max_tokens or DEFAULT_MAX_TOKENS
    if config.thinking_budget and max_tokens <= config.thinking_budget:
        max_tokens = config.thinking_budget + DEFAULT_MAX_TOKENS
    return max_tokens


class AnthropicWire:
    path = "/messages"
    modes = ("tool", "prompt")

    def auth_headers(self, config: JudgeConfig, key: Secret | None) -> dict[str, Secret]:
        if key is None or config.auth == "none":
            return {}
        if config.auth == "bearer":
            return {"Authorization": Secret("Bearer " + key.reveal())}
        return {"x-api-key": key}

    def static_headers(self, config: JudgeConfig) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION, **config.headers}

    def build_body(
        self,
        config: JudgeConfig,
        messages: tuple[dict[str, Any], ...],
        schema: dict[str, Any] | None,
        schema_name: str,
        mode: str,
        *,
        cache_prefix: int = 0,
        cache_ttl: str = "5m",
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The request body. ``cache_prefix``: the first user message's first characters are
        shared with other requests: they go in a text block of their own marked
        ``cache_control: {"type": "ephemeral"}`` (prompt caching; the model reads the same
        text), with ``"ttl": "1h"`` when ``cache_ttl`` asks for Anthropic's 1-hour cache."""
        if mode == SAMPLER_MODE:  # simple-evals' Claude sampler (the model under test)
            return sampler_body("anthropic", config.model, messages,
                                temperature=config.temperature,
                                max_tokens=max_tokens_of(config, max_tokens),
                                extra=config.extra_body)
        system = [m["content"] for m in messages if m.get("role") == "system"]
        turns = tuple(m for m in messages if m.get("role") != "system")
        if mode != TEXT_MODE and (mode == "prompt" or schema is None):
            turns = _with_instruction(turns, json_instruction(schema))
        body: dict[str, Any] = {
            "model": config.model,
            "max_tokens": max_tokens_of(config, max_tokens),
            "messages": [{"role": m["role"], "content": m["content"]} for m in turns],
        }
        if cache_prefix > 0:
            _mark_cached_prefix(body["messages"], cache_prefix, cache_ttl)
        if system:
            body["system"] = "\n\n".join(s if isinstance(s, str) else orjson.dumps(s).decode() for s in system)
        if mode == "tool" and schema is not None:
            body["tools"] = [{
                "name": schema_name,
                "description": "Record your judgement. Call this tool exactly once.",
                "input_schema": schema,
            }]
            body["tool_choice"] = (
                {"type": "auto"} if config.thinking_budget else {"type": "tool", "name": schema_name}
            )
        if config.temperature is not None and not config.thinking_budget:
            body["temperature"] = config.temperature
        if config.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": config.thinking_budget}
        if config.extra_body:
            body.update(config.extra_body)
        return body

    def read(self, payload: dict[str, Any]) -> WireReply:
        blocks = payload.get("content") or []
        text = None
        for block in blocks:
            if block.get("type") == "tool_use":
                text = orjson.dumps(block.get("input")).decode()
                break
        if text is None:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        stop = payload.get("stop_reason")
        refusal = "the model refused to answer" if stop == "refusal" else None
        thinking = "".join(b.get("thinking", "") for b in blocks if b.get("type") == "thinking")
        return WireReply(text, _usage(payload.get("usage")), refusal, stop, thinking or None)

    def rejects_mode(self, status: int, body: bytes) -> bool:
        if status not in (400, 422):
            return False
        text = body.decode("utf-8", "replace").lower()
        return "tool" in text or "schema" in text


def _mark_cached_prefix(messages: list[dict[str, Any]], chars: int, ttl: str) -> None:
    """Split the first user message after ``chars`` characters, marking the head for caching."""
    mark = {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}
    for message in messages:
        content = message["content"]
        if message["role"] == "user" and isinstance(content, str):
            if chars >= len(content):
                message["content"] = [{"type": "text", "text": content, "cache_control": mark}]
            else:
                message["content"] = [
                    {"type": "text", "text": content[:chars], "cache_control": mark},
                    {"type": "text", "text": content[chars:]}]
            return


def _usage(raw: dict[str, Any] | None) -> Usage:
    """Anthropic's input_tokens excludes cache reads and writes; fold them into prompt tokens.
    The writes to the 1-hour cache (billed 2x, not 1.25x) are counted in ``cache_creation``."""
    if not raw:
        return Usage()
    cached = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    split = raw.get("cache_creation")
    written_1h = int(split.get("ephemeral_1h_input_tokens") or 0) if isinstance(split, dict) else 0
    return Usage(int(raw.get("input_tokens") or 0) + cached + written,
                 int(raw.get("output_tokens") or 0), cached, 0, written, min(written_1h, written))
