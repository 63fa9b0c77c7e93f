"""What a model server says about itself: its context size and its parallel slots.

* llama.cpp's ``llama-server`` answers ``GET /props`` (at the server's root, beside ``/v1``)
  with ``default_generation_settings.n_ctx`` (the context a request may fill) and
  ``total_slots`` (the requests it decodes at once; it queues the others and never answers
  429, so more requests in flight than slots only wait in its queue, on Assay's clock);
* vLLM lists ``max_model_len`` with each model of ``GET /v1/models``.

Other servers say neither, and nothing is assumed. ``assay judges check`` prints what is found;
a local preset's judge follows the slots (:meth:`assay.judges.Judge.discover_server`).

Example:
    >>> from_props({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 4})
    ServerInfo(context_size=2048, slots=4, source='/props')
    >>> from_models({"data": [{"id": "m", "max_model_len": 32768}]}, "m").describe()
    'context 32,768 tokens (/models)'
    >>> from_models({"data": [{"id": "other"}]}, "m") is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from assay.judges.transport import HttpResult, Transport

PROBE_TIMEOUT_S = 5.0  # a server that does not answer these at once does not have them


@dataclass(frozen=True)
class ServerInfo:
    """What the server said: tokens of context per request, parallel slots, and where."""

    context_size: int | None
    slots: int | None
    source: str

    def describe(self) -> str:
        parts = []
        if self.context_size is not None:
            parts.append(f"context {self.context_size:,} tokens")
        if self.slots is not None:
            parts.append(f"{self.slots} parallel slot{'s' if self.slots != 1 else ''}")
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


async def discover(transport: Transport, model: str) -> ServerInfo | None:
    """Ask the server behind ``transport`` (a judge's) what it says about itself; None if it
    says nothing. Never raises for network trouble: a server without these paths is usual."""
    root = transport.base_url.removesuffix("/v1")
    at_root = transport.sibling(root) if root != transport.base_url else transport
    try:
        found = from_props(_json(await at_root.get("/props", PROBE_TIMEOUT_S)))
    finally:
        if at_root is not transport:
            await at_root.aclose()
    if found is None:
        found = from_models(_json(await transport.get("/models", PROBE_TIMEOUT_S)), model)
    return found


def _json(result: Any) -> Any:
    if not isinstance(result, HttpResult) or result.status != 200:
        return None
    try:
        return orjson.loads(result.body)
    except orjson.JSONDecodeError:
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
