"""Judge configuration: :class:`JudgeConfig` and its parts, validated once at the boundary.

A config is usually built from a spec string (:func:`assay.judges.specs.parse_spec`) or a
``[judges.NAME]`` table of ``assay.toml`` (:func:`assay.judges.specs.load_judge_configs`).

Example:
    >>> cfg = JudgeConfig(spec="openai:gpt-4.1-mini", model="gpt-4.1-mini",
    ...                   base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY")
    >>> cfg.limits.max_in_flight, cfg.retry.max_retries
    (64, 4)
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

Wire = Literal["openai", "anthropic", "openai-responses"]  # responses: assay.judges.responses_wire
AuthStyle = Literal["bearer", "api-key", "x-api-key", "none"]
StructuredMode = Literal["auto", "json_schema", "json_mode", "prompt",
                         # a local server's own option ("native" picks the provider's; see
                         # assay.judges.local_servers)
                         "structured_outputs", "guided_json", "json_object_schema",
                         # openai/simple-evals' HealthBench grader request, exactly (see
                         # assay.judges.simple_evals)
                         "simple-evals"]

MAX_REASKS = 10  # the most re-asks a judge may be set to make for one call

DEFAULT_MAX_IN_FLIGHT = 64  # a local preset's judge follows the server's slots instead, if
# it says (assay.judges.server_info); any other value is the user's and is kept

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0"})


class Limits(BaseModel):
    """Per-endpoint limits: requests in flight, requests per minute, tokens per minute.

    ``slow_down`` halves the allowed in-flight requests after repeated 429s and restores them
    gradually as calls succeed. ``max_in_flight`` left at its default (64) follows a local
    server's parallel slots where the server says them (llama.cpp's ``/props``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_in_flight: int = Field(DEFAULT_MAX_IN_FLIGHT, ge=1)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    slow_down: bool = True


class RetryPolicy(BaseModel):
    """Exponential backoff with full jitter, honouring ``Retry-After`` up to a ceiling.

    Retried: transport errors, timeouts, 429 and 5xx. ``max_retries`` counts retries after
    the first attempt. The backoff's exponent counts the call's retries that backed off (one
    that waited the server's ``Retry-After`` does not), and applies only while the endpoint is
    in trouble (:class:`assay.judges.retry.EndpointHealth`); otherwise a retry waits
    ``base_delay_s`` (jittered).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_retries: int = Field(4, ge=0)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(30.0, ge=0)
    max_retry_after_s: float = Field(120.0, ge=0)
    jitter: bool = True


class ModelPrice(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)


class JudgeConfig(BaseModel):
    """Everything needed to talk to one judge endpoint. Keys are never stored here in clear:
    ``api_key_env`` names an environment variable, ``api_key`` (from a config file) is a
    :class:`pydantic.SecretStr`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str
    model: str = Field(min_length=1)
    base_url: str
    wire: Wire = "openai"
    id: str | None = None
    provider: str = "openai-compatible"
    api_key_env: str | None = None
    api_key: SecretStr | None = None
    auth: AuthStyle = "bearer"
    key_required: bool | None = None  # None: required unless the endpoint is on loopback
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = Field(None, ge=1)
    timeout_s: float | None = Field(None, gt=0)  # None: fitted (assay.judges.timeouts) ...
    # ... up to this ceiling, which is also the first attempts' timeout. None: the preset's
    # (assay.judges.local_servers.timeout_ceiling: 60 s, 600 s for a local server)
    timeout_ceiling_s: float | None = Field(None, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    structured: StructuredMode = "auto"
    reask: bool = True  # False: no re-ask at all, whatever max_reasks says
    # False: never mark a prompt head for caching nor hold calls back so that they read one
    # (assay.judges.prompt_caching); True caches only where the provider's rules make it pay
    prompt_caching: bool = True
    max_reasks: int = Field(2, ge=0, le=MAX_REASKS)  # re-asks of a reply that does not parse
    limits: Limits = Field(default_factory=Limits)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    price: ModelPrice | None = None
    # fields the user left unset and something else set, with what and how to change it (a
    # template's sampling settings): not a setting, so neither stored nor hashed
    _set_by: dict[str, str] = PrivateAttr(default_factory=dict)

    def with_defaults(self, values: dict[str, Any], origins: dict[str, str]) -> JudgeConfig:
        """This config with ``values`` for fields the user left unset, ``origins`` saying
        where each came from (:meth:`set_by`).

        >>> cfg = JudgeConfig(spec="s", model="m", base_url="http://127.0.0.1:1/v1")
        >>> cfg.with_defaults({"max_tokens": 2048}, {"max_tokens": "the T template"}).set_by("max_tokens")
        'the T template'
        """
        copied = self.model_copy(update=values)
        copied._set_by = {**self._set_by, **origins}
        return copied

    def set_by(self, field: str) -> str | None:
        """What set ``field`` when the user did not (None: the user, or nothing)."""
        return self._set_by.get(field)

    @model_validator(mode="before")
    @classmethod
    def _native_structured(cls, data: Any) -> Any:
        """``structured = "native"``: the provider's own structured-output option."""
        if isinstance(data, dict) and data.get("structured") == "native":
            from assay.judges.local_servers import resolve_native

            provider = data.get("provider") or "openai-compatible"
            data = {**data, "structured": resolve_native(provider, "native")}
        return data

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"expected an http(s) URL, got {value!r}")
        return value.rstrip("/")

    def model_post_init(self, context: Any) -> None:
        from assay.judges.secrets import register_config_secrets

        key = self.api_key.get_secret_value() if self.api_key is not None else None
        register_config_secrets(key, self.headers, self.base_url)

    @property
    def judge_id(self) -> str:
        """The id a run stores verdicts under (secrets in a spec's URL are redacted)."""
        from assay.judges.secrets import redact

        return redact(self.id or self.spec)

    def public_settings(self) -> dict[str, Any]:
        """The settings as JSON with every secret redacted: what manifests and stores keep.

        >>> cfg = JudgeConfig(spec="openai-compatible:m@http://me:pa55word@host/v1", model="m",
        ...                   base_url="http://me:pa55word@host/v1", headers={"X-Api-Key": "k-123456"})
        >>> s = cfg.public_settings()
        >>> "pa55word" in str(s) or "k-123456" in str(s)
        False
        """
        from assay.judges.secrets import redact_data, redact_headers

        settings = self.model_dump(mode="json", exclude={"api_key"})
        settings["headers"] = redact_headers(self.headers)
        return redact_data(settings)

    @property
    def has_secrets(self) -> bool:
        """True if :meth:`public_settings` hides something needed to call the endpoint."""
        return self.model_dump(mode="json", exclude={"api_key"}) != self.public_settings()

    @property
    def is_loopback(self) -> bool:
        return (urlparse(self.base_url).hostname or "") in LOOPBACK_HOSTS

    @property
    def needs_key(self) -> bool:
        if self.key_required is not None:
            return self.key_required
        return self.auth != "none" and not self.is_loopback and self.api_key_env is not None

    def request_params(self) -> dict[str, Any]:
        """The settings that change a reply (part of the cache key)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "reasoning_effort": self.reasoning_effort,
            "thinking_budget": self.thinking_budget,
            "extra_body": self.extra_body,
            "structured": self.structured,
        }
