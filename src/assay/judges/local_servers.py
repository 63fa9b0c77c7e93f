"""Local model servers' own structured-output options (vLLM, llama.cpp's server, Ollama).

Every one of them speaks OpenAI chat completions, and ``structured = "auto"`` (the default:
``response_format`` json_schema, then json_object, then a prompt) works with all three. Each
server also has an option of its own for schema-constrained decoding, chosen with
``structured = "native"`` (or by name) in a ``[judges.NAME]`` table:

==============  ======================  ======================================================
server          ``structured``          what the request body carries
==============  ======================  ======================================================
vLLM >= 0.10    ``structured_outputs``  ``"structured_outputs": {"json": SCHEMA}``
vLLM < 0.12     ``guided_json``         ``"guided_json": SCHEMA`` (removed in vLLM 0.12)
llama.cpp       ``json_object_schema``  ``"response_format": {"type": "json_object",
                                        "schema": SCHEMA}`` (grammar-constrained sampling)
Ollama          ``json_schema``         ``"response_format": {"type": "json_schema", ...}``;
                                        Ollama's OpenAI endpoint turns it into its ``format``
==============  ======================  ======================================================

A server that rejects the option (HTTP 400 naming it) is asked again in JSON mode, then with
the schema in the prompt, as for ``auto``.

The local presets (:data:`LOCAL_PRESETS`) also wait longer for a reply: a small model on a CPU
takes 20-60 s for an answer that a hosted one gives in 2, so until the attempt timeout has
replies to fit on (:mod:`assay.judges.timeouts`) an attempt waits up to
:data:`LOCAL_TIMEOUT_CEILING_S` instead of 60 s (``timeout_ceiling_s`` in a judge table sets
it for any judge). And where the server says how many requests it decodes at once (llama.cpp's
``/props``: :mod:`assay.judges.server_info`), that is the judge's default requests in flight;
where it says none (vLLM, Ollama, LM Studio), the judge starts at 2 and grows while the replies'
latency holds (:meth:`assay.judges.limits.Limiter.follow_latency`).

Example:
    >>> server_schema_fields("structured_outputs", {"type": "object"})
    {'structured_outputs': {'json': {'type': 'object'}}}
    >>> mode_chain("guided_json")
    ('guided_json', 'json_mode', 'prompt')
    >>> NATIVE["llamacpp"]
    'json_object_schema'
    >>> timeout_ceiling("ollama", None), timeout_ceiling("openai", None)
    (600.0, 60.0)
"""

from __future__ import annotations

from typing import Any

from assay.judges.timeouts import DEFAULT_TIMEOUT_S

SERVER_MODES = ("structured_outputs", "guided_json", "json_object_schema")

LOCAL_PRESETS = frozenset({"vllm", "llamacpp", "llama.cpp", "ollama", "lmstudio"})


def asks_server(provider: str, wire: str) -> bool:
    """Whether a judge asks its server about itself before its first request: a local preset
    on OpenAI's wire (its context and slots).

    >>> asks_server("llamacpp", "openai"), asks_server("openai", "openai")
    (True, False)
    """
    return provider in LOCAL_PRESETS and wire == "openai"
LOCAL_TIMEOUT_CEILING_S = 600.0  # the first attempts' timeout on a local preset

# The preset's own option for ``structured = "native"`` (by provider name of the spec).
NATIVE: dict[str, str] = {
    "vllm": "structured_outputs",
    "llamacpp": "json_object_schema",
    "llama.cpp": "json_object_schema",
    "ollama": "json_schema",
}


def server_schema_fields(mode: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request-body fields that ask a local server for ``schema``-constrained output."""
    if mode == "structured_outputs":
        return {"structured_outputs": {"json": schema}}
    if mode == "guided_json":
        return {"guided_json": schema}
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    raise ValueError(f"not a local server's structured mode: {mode!r}")


def mode_chain(mode: str) -> tuple[str, ...]:
    """The formats to try in turn, starting with the server's own."""
    return (mode, "json_mode", "prompt")


def start_mode(structured: str, modes: tuple[str, ...]) -> int:
    """Where in a wire's ``modes`` a judge starts for its ``structured`` setting (a local
    server's option name maps to the wire's own; ``auto``: the first)."""
    if structured == "auto":
        return 0
    aliases = {"json_schema": ("json_schema", "tool"), "json_mode": ("json_mode", "prompt"),
               "prompt": ("prompt",)}
    for alias in aliases.get(structured, ()):  # a local server's option: not this wire's
        if alias in modes:
            return modes.index(alias)
    return 0


def resolve_native(provider: str, structured: str) -> str:
    """``native`` as the provider's own option; any other value as it is."""
    if structured != "native":
        return structured
    return NATIVE.get(provider, "json_schema")


def timeout_ceiling(provider: str, configured: float | None) -> float:
    """The longest an attempt waits (when no fixed ``timeout_s`` is set): the judge's
    ``timeout_ceiling_s``, else :data:`LOCAL_TIMEOUT_CEILING_S` for a local preset, else 60 s."""
    if configured is not None:
        return configured
    return LOCAL_TIMEOUT_CEILING_S if provider in LOCAL_PRESETS else DEFAULT_TIMEOUT_S
