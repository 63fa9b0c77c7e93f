"""Recognising a request refused as longer than the model's context window.

Servers say it in their own words, with an HTTP 400 (llama.cpp's server, vLLM, OpenAI,
Anthropic). Sent again, the same request is refused again, so it is its own failure kind,
``context_length``, never retried, carrying the request's and the context's token counts when
the server gives them and what to do about it.

Example:
    >>> body = (b'{"error": {"code": 400, "message": "request (2300 tokens) exceeds the '
    ...         b'available context size (2048 tokens), try increasing it"}}')
    >>> overflow = context_overflow(400, body)
    >>> overflow.request_tokens, overflow.context_tokens
    (2300, 2048)
    >>> context_overflow(400, b'{"error": {"message": "unknown field foo"}}') is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

# (pattern, which count it holds), each matched on the error text, lowercased
_COUNTS = (
    # llama.cpp: "request (2300 tokens) exceeds the available context size (2048 tokens)"
    (
        re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)"),
        ("request", "context"),
    ),
    # vLLM and OpenAI: "This model's maximum context length is 2048 tokens. However, you
    # requested 2300 tokens (...)" / "... your messages resulted in 130000 tokens"
    (re.compile(r"maximum context length is (\d+) tokens"), ("context",)),
    (re.compile(r"(?:you requested|resulted in) (\d+) tokens"), ("request",)),
    # newer vLLM, when the prompt fits but not with max_tokens: "'max_tokens' or
    # 'max_completion_tokens' is too large: 1024. This model's maximum context length is 2048
    # tokens and your request has 1500 input tokens (1024 > 2048 - 1500)"
    (re.compile(r"your request has (\d+) input tokens"), ("prompt",)),
    (re.compile(r"is too large: (\d+)"), ("completion",)),
    # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum"), ("request", "context")),
)
# words that only a context overflow uses: one of them must be there
_MARKERS = (
    "context_length_exceeded",
    "exceed_context_size",
    "exceeds the available context",
    "maximum context length",
    "prompt is too long",
    "context window",
)
# llama.cpp's newer error body carries the counts as fields
_FIELDS = {"n_prompt_tokens": "request", "n_ctx": "context"}


@dataclass(frozen=True, slots=True)
class ContextOverflow:
    """A refused request's token count and the server's context size (None when not given)."""

    request_tokens: int | None = None
    context_tokens: int | None = None
    completion_tokens: int | None = None  # the request's max_tokens, when the server names it

    def message(self, stage: str) -> str:
        """What happened to the call of ``stage`` and what to do about it."""
        of_them = (
            f", {self.completion_tokens:,} of them the completion budget"
            if self.completion_tokens is not None
            else ""
        )
        counts = (
            f"the request ({self.request_tokens:,} tokens{of_them}) does not fit"
            if self.request_tokens is not None
            else "the request does not fit"
        )
        window = (
            f" the model's context ({self.context_tokens:,} tokens)"
            if self.context_tokens is not None
            else " the model's context"
        )
        return (
            f"{stage}: {counts}{window}; not retried. Serve the model with a larger "
            "context (llama-server -c, vLLM --max-model-len), set a smaller max_tokens in the "
            "judge's config, or send shorter prompts (assay generate --evidence-tokens, "
            "assay rag grade --context-tokens)"
        )


def context_overflow(status: int, body: bytes) -> ContextOverflow | None:
    """The overflow an error reply reports, or None if it reports something else."""
    if status not in (400, 413, 422):
        return None
    text = body.decode("utf-8", "replace").lower()
    if not any(marker in text for marker in _MARKERS):  # "is too large: 5" alone is not one
        return None
    counts: dict[str, int] = {}
    for pattern, names in _COUNTS:
        match = pattern.search(text)
        if match is not None:
            for name, value in zip(names, match.groups()):
                counts.setdefault(name, int(value))
    counts.update(
        {name: value for name, value in _error_fields(body).items() if name not in counts}
    )
    if "request" not in counts and "prompt" in counts:
        counts["request"] = counts["prompt"] + counts.get("completion", 0)
    return ContextOverflow(counts.get("request"), counts.get("context"), counts.get("completion"))


def _error_fields(body: bytes) -> dict[str, int]:
    """llama.cpp's ``n_prompt_tokens`` and ``n_ctx`` from a JSON error body, when there."""
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return {}
    return {
        name: error[key]
        for key, name in _FIELDS.items()
        if isinstance(error.get(key), int) and not isinstance(error.get(key), bool)
    }
