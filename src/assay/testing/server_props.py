"""The fake server telling what it is, as local servers do: llama.cpp's ``GET /props``,
vLLM's ``max_model_len`` in ``GET /v1/models``, Ollama's ``GET /api/ps`` and ``POST
/api/show``, LM Studio's ``GET /api/v1/models`` (the shapes their documentation gives, quoted
in ``tests/data/provider_docs/local_servers.md``).

``FakeJudgeServer(server=llama_cpp(n_ctx=2048, slots=4))`` answers ``/props`` as a
``llama-server --ctx-size 8192 --parallel 4`` would (only the fields Assay reads, and a few
others); ``FakeJudgeServer(server=vllm(max_model_len=32768))`` lists that length with its
models; ``ollama(context_length=4096)`` lists a model in ``/api/ps`` once a request has named
it (Ollama loads a model on its first request), and ``/api/show`` gives its parameters;
``lm_studio(context_length=4096)`` lists each model requests have named (or ``fake``) with a
loaded instance of that context. By default it
says none of these (``/props`` is a 404), as a hosted API.

Example:
    >>> llama_cpp(n_ctx=2048, slots=4).props["total_slots"]
    4
    >>> vllm(max_model_len=4096).model_entry("m")
    {'id': 'm', 'object': 'model', 'owned_by': 'vllm', 'max_model_len': 4096}
    >>> ollama(context_length=4096).ollama_ps({"qwen3:8b"})["models"][0]["context_length"]
    4096
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OllamaModel:
    """Ollama's models: the context they load with, the ``num_ctx`` of their parameters (None:
    not set), and the one loaded before any request (None: none)."""

    context_length: int = 4096
    num_ctx: int | None = None
    loaded: str | None = None


@dataclass(frozen=True)
class ServerProfile:
    """What the fake server says about itself: ``/props`` (None: 404), the extra fields of
    each ``/v1/models`` entry, Ollama's and LM Studio's native listings (None: 404)."""

    props: dict[str, Any] | None = None
    model_fields: tuple[tuple[str, Any], ...] = ()
    owned_by: str = "fake"
    ollama_model: OllamaModel | None = None
    lm_studio_context: int | None = None

    def model_entry(self, model: str) -> dict[str, Any]:
        return {
            "id": model,
            "object": "model",
            "owned_by": self.owned_by,
            **dict(self.model_fields),
        }

    def ollama_ps(self, asked: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
        """``GET /api/ps``: the models loaded (Ollama loads a model on its first request:
        ``asked`` are the models requests have named)."""
        state = self.ollama_model
        if state is None:
            return {"models": []}
        loaded = sorted(set(asked) | ({state.loaded} if state.loaded else set()))
        return {"models": [self._ollama_running(model, state) for model in loaded]}

    @staticmethod
    def _ollama_running(model: str, state: OllamaModel) -> dict[str, Any]:
        return {
            "name": model, "model": model, "size": 6591830464,
            "digest": "c6eb396dbd5992bbe3f5cdb947e8bbc0ee413d7c17e2beaae69f5d569cf982eb",
            "details": {"parent_model": "", "format": "gguf", "family": "fake",
                        "families": ["fake"], "parameter_size": "8.0B",
                        "quantization_level": "Q4_K_M"},
            "expires_at": "2025-10-17T16:47:07.93355-07:00", "size_vram": 5333539264,
            "context_length": state.context_length}

    def ollama_show(self) -> dict[str, Any]:
        """``POST /api/show``: the model's parameters and metadata."""
        state = self.ollama_model or OllamaModel()
        parameters = "temperature 0.7" + (f"\nnum_ctx {state.num_ctx}" if state.num_ctx else "")
        return {"parameters": parameters, "license": "fake", "capabilities": ["completion"],
                "modified_at": "2025-08-14T15:49:43.634137516-07:00",
                "details": {"parent_model": "", "format": "gguf", "family": "fake"},
                "model_info": {"fake.context_length": 131072,
                               "general.architecture": "fake"}}

    def lm_studio_models(self, models: list[str]) -> dict[str, Any]:
        """``GET /api/v1/models``: each of ``models`` with one loaded instance."""
        return {"models": [self._lm_studio_entry(model) for model in models]}

    def _lm_studio_entry(self, model: str) -> dict[str, Any]:
        return {
            "type": "llm", "publisher": "fake", "key": model, "display_name": model,
            "architecture": "fake", "quantization": {"name": "Q4_0", "bits_per_weight": 4},
            "size_bytes": 241410208, "params_string": "270M",
            "loaded_instances": [{"id": model,
                                  "config": {"context_length": self.lm_studio_context}}],
            "max_context_length": 32768, "format": "gguf",
            "capabilities": {"vision": False, "trained_for_tool_use": False},
            "description": None}


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


def ollama(context_length: int = 4096, num_ctx: int | None = None,
           loaded: str | None = None) -> ServerProfile:
    """Ollama: a model loads with ``context_length`` on its first request (``loaded``: the
    model loaded already), and its parameters set ``num_ctx`` (None: not set)."""
    return ServerProfile(owned_by="library",
                         ollama_model=OllamaModel(context_length, num_ctx, loaded))


def lm_studio(context_length: int = 4096) -> ServerProfile:
    """LM Studio: the model loaded with ``context_length`` tokens of context."""
    return ServerProfile(owned_by="organization_owner", lm_studio_context=context_length)
