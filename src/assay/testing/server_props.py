"""The fake server telling what it is, as local servers do: llama.cpp's ``GET /props`` and
vLLM's ``max_model_len`` in ``GET /v1/models``.

``FakeJudgeServer(server=llama_cpp(n_ctx=2048, slots=4))`` answers ``/props`` as a
``llama-server --ctx-size 8192 --parallel 4`` would (only the fields Assay reads, and a few
others); ``FakeJudgeServer(server=vllm(max_model_len=32768))`` lists that length with its
models. By default it says neither (``/props`` is a 404), as a hosted API does.

Example:
    >>> llama_cpp(n_ctx=2048, slots=4).props["total_slots"]
    4
    >>> vllm(max_model_len=4096).model_entry("m")
    {'id': 'm', 'object': 'model', 'owned_by': 'vllm', 'max_model_len': 4096}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerProfile:
    """What the fake server says about itself: ``/props`` (None: 404) and the extra fields of
    each ``/v1/models`` entry."""

    props: dict[str, Any] | None = None
    model_fields: tuple[tuple[str, Any], ...] = ()
    owned_by: str = "fake"

    def model_entry(self, model: str) -> dict[str, Any]:
        return {
            "id": model,
            "object": "model",
            "owned_by": self.owned_by,
            **dict(self.model_fields),
        }


def llama_cpp(n_ctx: int = 2048, slots: int = 1) -> ServerProfile:
    """llama.cpp's ``llama-server``: ``n_ctx`` tokens per slot, ``slots`` parallel slots."""
    return ServerProfile(
        props={
            "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
            "total_slots": slots,
            "model_path": "fake.gguf",
            "build_info": "fake",
        },
        owned_by="llamacpp",
    )


def vllm(max_model_len: int = 4096) -> ServerProfile:
    """vLLM's OpenAI server: each listed model carries ``max_model_len``."""
    return ServerProfile(model_fields=(("max_model_len", max_model_len),), owned_by="vllm")
