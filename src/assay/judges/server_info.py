"""What a model server says about itself: its context size and its parallel slots.

Each local server is asked in its own API (the passages are quoted in
``tests/data/provider_docs/local_servers.md``):

* llama.cpp's ``llama-server`` answers ``GET /props`` (at the server's root, beside ``/v1``)
  with ``default_generation_settings.n_ctx`` (the context a request may fill) and
  ``total_slots`` (the requests it decodes at once; it queues the others and never answers
  429, so more requests in flight than slots only wait in its queue, on Assay's clock);
* vLLM lists ``max_model_len`` with each model of ``GET /v1/models``;
* Ollama lists the context of each loaded model (``context_length``) in ``GET /api/ps``; a
  model not loaded yet has the ``num_ctx`` of its parameters (``POST /api/show``), else the
  context Ollama gives it when it loads (4k below 24 GiB of VRAM); Ollama's OpenAI endpoint
  cuts a longer prompt silently, so a judge refuses one before sending it
  (:mod:`assay.judges.context_fit`);
* LM Studio lists the context of each loaded instance of a model
  (``loaded_instances[].config.context_length``) in ``GET /api/v1/models``.

None of Ollama, LM Studio and vLLM says how many requests it serves at once: a local preset's
judge then finds it out from the replies' latency (:meth:`assay.judges.limits.Limiter.
follow_latency`). Other servers say nothing, and nothing is assumed. ``assay judges check``
prints what is found.

Example:
    >>> from_props({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 4})
    ServerInfo(context_size=2048, slots=4, source='/props', cuts_silently=False, note=None)
    >>> from_models({"data": [{"id": "m", "max_model_len": 32768}]}, "m").describe()
    'context 32,768 tokens (/models)'
    >>> from_models({"data": [{"id": "other"}]}, "m") is None
    True
    >>> from_ollama_ps({"models": [{"name": "qwen3:8b", "context_length": 4096}]}, "qwen3:8b").context_size
    4096
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from assay.judges.transport import HttpResult, Transport

PROBE_TIMEOUT_S = 5.0  # a server that does not answer these at once does not have them
OLLAMA_UNLOADED = ("not loaded yet: Ollama gives it its context when it loads (num_ctx, "
                   "OLLAMA_CONTEXT_LENGTH, else 4k below 24 GiB of VRAM) and cuts a longer "
                   "prompt silently")


@dataclass(frozen=True)
class ServerInfo:
    """What the server said: tokens of context per request, parallel slots, and where.
    ``cuts_silently``: the server answers a prompt longer than its context after cutting it
    (Ollama), rather than refusing it (llama.cpp, vLLM)."""

    context_size: int | None
    slots: int | None
    source: str
    cuts_silently: bool = False
    note: str | None = None

    def describe(self) -> str:
        parts = []
        if self.context_size is not None:
            parts.append(f"context {self.context_size:,} tokens")
        if self.slots is not None:
            parts.append(f"{self.slots} parallel slot{'s' if self.slots != 1 else ''}")
        if self.note:
            parts.append(self.note)
        return f"{', '.join(parts)} ({self.source})"


def from_props(props: Any) -> ServerInfo | None:
    """llama.cpp's ``/props`` reply, if it holds a context size or a slot count."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    context = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    slots = _positive(props.get("total_slots"))
    if context is None and slots is None:
        return None
    return ServerInfo(context, slots, "/props")


def from_models(listing: Any, model: str) -> ServerInfo | None:
    """vLLM's ``/v1/models`` reply: ``max_model_len`` of ``model`` (or of the only model)."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), None)
    if entry is None and len(entries) == 1:
        entry = entries[0]
    context = _positive(entry.get("max_model_len")) if entry is not None else None
    return ServerInfo(context, None, "/models") if context is not None else None


def from_ollama_ps(listing: Any, model: str) -> ServerInfo | None:
    """Ollama's ``/api/ps`` reply: the ``context_length`` ``model`` was loaded with."""
    entries = listing.get("models") if isinstance(listing, dict) else None
    wanted = _ollama_name(model)
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and wanted in (_ollama_name(str(entry.get("name", ""))),
                                                  _ollama_name(str(entry.get("model", "")))):
            context = _positive(entry.get("context_length"))
            if context is not None:
                return ServerInfo(context, None, "/api/ps", cuts_silently=True)
    return None


def from_ollama_show(show: Any) -> ServerInfo:
    """Ollama's ``/api/show`` reply for a model not loaded: the ``num_ctx`` of its parameters,
    else no context (it is decided when the model loads)."""
    parameters = show.get("parameters") if isinstance(show, dict) else None
    found = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE) if isinstance(
        parameters, str) else None
    if found is not None and int(found.group(1)) > 0:
        return ServerInfo(int(found.group(1)), None, "/api/show num_ctx", cuts_silently=True)
    return ServerInfo(None, None, "/api/ps, /api/show", cuts_silently=True, note=OLLAMA_UNLOADED)


def from_lm_studio(listing: Any, model: str) -> ServerInfo | None:
    """LM Studio's ``/api/v1/models`` reply: the context of ``model``'s loaded instance."""
    entries = listing.get("models") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or model not in (entry.get("key"), *(
                i.get("id") for i in entry.get("loaded_instances") or [] if isinstance(i, dict))):
            continue
        for instance in entry.get("loaded_instances") or []:
            config = instance.get("config") if isinstance(instance, dict) else None
            context = _positive(config.get("context_length")) if isinstance(config, dict) else None
            if context is not None:
                return ServerInfo(context, None, "/api/v1/models", cuts_silently=True)
    return None


async def discover(transport: Transport, model: str, provider: str = "") -> ServerInfo | None:
    """Ask the server behind ``transport`` (a judge's) what it says about itself, in the API of
    ``provider`` (a preset's name; any other: llama.cpp's ``/props``, then ``/v1/models``);
    None if it says nothing. Never raises for network trouble: a server without these paths
    is usual."""
    root = transport.base_url.removesuffix("/v1")
    at_root = transport.sibling(root) if root != transport.base_url else transport
    try:
        if provider == "ollama":
            found = from_ollama_ps(_json(await at_root.get("/api/ps", PROBE_TIMEOUT_S)), model)
            if found is None:
                found = from_ollama_show(_json(await at_root.post_json(
                    "/api/show", {"model": model}, PROBE_TIMEOUT_S)))
            return found
        if provider == "lmstudio":
            return from_lm_studio(_json(await at_root.get("/api/v1/models", PROBE_TIMEOUT_S)),
                                  model)
        found = from_props(_json(await at_root.get("/props", PROBE_TIMEOUT_S)))
    finally:
        if at_root is not transport:
            await at_root.aclose()
    if found is None:
        found = from_models(_json(await transport.get("/models", PROBE_TIMEOUT_S)), model)
    return found


def _ollama_name(name: str) -> str:
    """An Ollama model name with its tag (``qwen3`` is ``qwen3:latest``)."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _json(result: Any) -> Any:
    if not isinstance(result, HttpResult) or result.status != 200:
        return None
    try:
        return orjson.loads(result.body)
    except orjson.JSONDecodeError:
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
