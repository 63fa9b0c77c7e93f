"""The HTTP 400 bodies real servers send for a request longer than the model's context.

Faults ``context_overflow`` (llama.cpp's server), ``context_overflow_vllm`` and
``context_overflow_openai`` answer with them, word for word as those servers write them, so the
client's classification (:mod:`assay.judges.context_overflow`) is tested against each wording.

Example:
    >>> status, body = overflow_reply("context_overflow")
    >>> status, body["error"]["n_ctx"]
    (400, 2048)
"""

from __future__ import annotations

from typing import Any

REQUEST_TOKENS = 2300
CONTEXT_TOKENS = 2048

_BODIES: dict[str, dict[str, Any]] = {
    "context_overflow": {
        "error": {
            "code": 400,
            "type": "exceed_context_size_error",
            "message": f"request ({REQUEST_TOKENS} tokens) exceeds the available context size "
            f"({CONTEXT_TOKENS} tokens), try increasing it",
            "n_prompt_tokens": REQUEST_TOKENS,
            "n_ctx": CONTEXT_TOKENS,
        }
    },
    "context_overflow_vllm": {
        "object": "error",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
        "message": f"This model's maximum context length is {CONTEXT_TOKENS} tokens. However, "
        f"you requested {REQUEST_TOKENS} tokens ({REQUEST_TOKENS - 1024} in the "
        "messages, 1024 in the completion). Please reduce the length of the "
        "messages or completion.",
    },
    "context_overflow_openai": {
        "error": {
            "message": f"This model's maximum context length is {CONTEXT_TOKENS} tokens. However, "
            f"your messages resulted in {REQUEST_TOKENS} tokens. Please reduce the "
            "length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
}
OVERFLOW_FAULTS = tuple(_BODIES)


def overflow_reply(fault: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of a context-overflow fault."""
    return 400, _BODIES[fault]
