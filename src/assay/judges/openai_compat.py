"""The OpenAI chat-completions wire format (OpenAI and every compatible server).

Structured modes, strongest first: ``json_schema`` (``response_format`` with the schema),
``json_mode`` (``{"type": "json_object"}``), ``prompt`` (the schema is described in the prompt);
``text`` asks for a free-text answer (the model under test): no reply format at all;
``simple-evals`` sends simple-evals' HealthBench grader request exactly
(:mod:`assay.judges.simple_evals`).

Example:
    >>> from assay.judges.specs import parse_spec
    >>> cfg = parse_spec("vllm:m", temperature=0.0, seed=7)
    >>> body = OpenAIWire().build_body(cfg, ({"role": "user", "content": "hi"},),
    ...                                {"type": "object"}, "verdict", "json_mode")
    >>> body["response_format"], body["seed"]
    ({'type': 'json_object'}, 7)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.judges.config import JudgeConfig
from assay.judges.local_servers import SERVER_MODES, server_schema_fields
from assay.judges.secrets import Secret
from assay.judges.simple_evals import MODE as SIMPLE_EVALS
from assay.judges.simple_evals import SAMPLER_MODE, exact_body, sampler_body
from assay.judges.structured import json_instruction
from assay.judges.types import Usage


@dataclass(frozen=True, slots=True)
class WireReply:
    """The part of a provider reply the judge needs."""

    text: str
    usage: Usage
    refusal: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    """A reasoning model's visible thinking, when the endpoint returns it apart from the answer."""


TEXT_MODE = "text"


class OpenAIWire:
    path = "/chat/completions"
    modes: tuple[str, ...] = ("json_schema", "json_mode", "prompt")

    def auth_headers(self, config: JudgeConfig, key: Secret | None) -> dict[str, Secret]:
        if key is None or config.auth == "none":
            return {}
        if config.auth == "api-key":
            return {"api-key": key}
        if config.auth == "x-api-key":
            return {"x-api-key": key}
        return {"Authorization": Secret("Bearer " + key.reveal())}

    def static_headers(self, config: JudgeConfig) -> dict[str, str]:
        return dict(config.headers)

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
        """The request body; ``max_tokens``: the completion budget (default: the config's)."""
        if max_tokens is None:
            max_tokens = config.max_tokens
        if mode == SAMPLER_MODE:  # simple-evals' sampler (the model under test)
            return sampler_body("openai", config.model, messages, temperature=config.temperature,
                                max_tokens=max_tokens, extra=config.extra_body)
        if mode == SIMPLE_EVALS:  # openai/simple-evals' grader request, nothing more
            return exact_body(config.model, messages, temperature=config.temperature,
                              max_tokens=max_tokens)
        if mode in ("json_mode", "prompt"):
            messages = _with_instruction(messages, json_instruction(schema))
        body: dict[str, Any] = {"model": config.model, "messages": list(messages)}
        if mode == "json_schema" and schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            }
        elif mode in SERVER_MODES and schema is not None:
            body.update(server_schema_fields(mode, schema))
        elif mode == "json_mode" or (mode in ("json_schema", *SERVER_MODES) and schema is None):
            body["response_format"] = {"type": "json_object"}
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if max_tokens is not None:
            key = "max_completion_tokens" if config.provider == "openai" else "max_tokens"
            body[key] = max_tokens
        if config.seed is not None:
            body["seed"] = config.seed
        if config.reasoning_effort is not None:
            body["reasoning_effort"] = config.reasoning_effort
        if config.extra_body:
            body.update(config.extra_body)
        return body

    def read(self, payload: dict[str, Any]) -> WireReply:
        """Text, usage, refusal and finish reason of a chat-completions reply."""
        choice = (payload.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        if not refusal and finish == "content_filter":
            refusal = "the endpoint's content filter stopped the reply"
        # vLLM, SGLang and DeepSeek return thinking as reasoning_content; OpenRouter, Ollama
        # and recent vLLM as reasoning
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return WireReply(content or "", _usage(payload.get("usage")), refusal, finish,
                         reasoning if isinstance(reasoning, str) and reasoning else None)

    def rejects_mode(self, status: int, body: bytes) -> bool:
        """A 400/422 complaining about ``response_format``: try the next weaker mode."""
        if status not in (400, 422):
            return False
        text = body.decode("utf-8", "replace").lower()
        return any(w in text for w in ("response_format", "json_schema", "json_object", "schema",
                                       "guided_json", "structured_outputs"))


def _with_instruction(messages: tuple[dict[str, Any], ...], instruction: str) -> tuple[dict, ...]:
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("role") == "user" and isinstance(out[i].get("content"), str):
            out[i] = {**out[i], "content": out[i]["content"] + instruction}
            return tuple(out)
    out.append({"role": "user", "content": instruction.strip()})
    return tuple(out)


def _usage(raw: dict[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    return Usage(
        int(raw.get("prompt_tokens") or 0),
        int(raw.get("completion_tokens") or 0),
        int(prompt_details.get("cached_tokens") or 0),
        int(completion_details.get("reasoning_tokens") or 0),
    )
