"""The plain records the judges layer speaks: requests, replies, usage and failures.

They are frozen dataclasses (no per-call validation cost on the hot path).

Example:
    >>> req = JudgeRequest(messages=({"role": "user", "content": "Is 2+2=4?"},),
    ...                    schema={"type": "object", "required": ["verdict"],
    ...                            "properties": {"verdict": {"type": "string"}}})
    >>> req.schema_name
    'verdict'
    >>> (Usage(prompt_tokens=10, completion_tokens=2) + Usage(prompt_tokens=5)).prompt_tokens
    15
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from assay.judges.completion import CompletionBudget


class FailureKind(StrEnum):
    """Why a judge call produced no usable reply. A failure is never a verdict."""

    TRANSPORT = "transport"
    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    REFUSAL = "refusal"
    UNPARSEABLE = "unparseable"
    SCHEMA_MISMATCH = "schema_mismatch"
    BUDGET = "budget"
    EMPTY = "empty"
    """A free-text request answered with no visible text (e.g. a reasoning model that spent its
    whole token budget thinking): never an empty answer to grade."""
    TRUNCATED = "truncated"
    """A structured reply cut at its completion budget (finish reason ``length``), also after
    the one retry with the stage's cap: never parsed, never a verdict."""
    CONTEXT_LENGTH = "context_length"
    """The endpoint refused the request as longer than its context window (HTTP 400): sending
    it again cannot help, a larger context or a shorter prompt can."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens used by one call (or a sum of calls); ``a + b`` adds field by field.

    ``prompt_tokens`` includes ``cached_tokens`` and ``cache_write_tokens``;
    ``completion_tokens`` includes ``reasoning_tokens`` (the OpenAI convention; Anthropic usage
    is converted to it). ``cache_write_tokens``: prompt tokens written to a provider's prompt
    cache (Anthropic bills them above the input price: 1.25x for its 5-minute cache, 2x for
    ``cache_write_1h_tokens``, the part written to its 1-hour cache).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0  # of cache_write_tokens, those written for 1 hour (billed 2x)

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_write_1h_tokens": self.cache_write_1h_tokens,
        }


@dataclass(frozen=True, slots=True)
class Failure:
    """What went wrong: the class of failure, a readable message (secrets redacted), HTTP status."""

    kind: FailureKind
    message: str
    status: int | None = None

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind.value}{status}: {self.message}"


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One question to a judge.

    ``messages`` are OpenAI-style ``{"role", "content"}`` dicts (a leading ``system`` message is
    moved to Anthropic's ``system`` field automatically). ``schema`` is the JSON Schema the
    reply object must satisfy (None: any JSON object). ``template_version`` is part of the
    cache key, so changing a prompt template invalidates old cached replies.

    ``text=True`` asks for a free-text answer (the model under test, not a judge): no reply
    format is requested and nothing is parsed; the reply's ``data`` is
    ``{"text", "finish_reason", "reasoning"}``. ``sample`` numbers repeated samples of one
    prompt: sample ``k > 0`` has its own cache key and, when the config sets a seed, is sent
    with ``seed + k``, so K samples are K draws, not one answer repeated. ``cache_prefix``:
    how many characters at the start of the user message are shared with other requests (an
    Anthropic judge marks them for prompt caching). ``budget``: the completion tokens the reply
    needs and the cap of a retry when it is cut (:mod:`assay.judges.completion`); a structured
    request without one gets :data:`~assay.judges.completion.DEFAULT_BUDGET`, a free-text one
    none (the model under test answers at the length the sampling settings allow).
    ``bool_field``: a field that the reply must hold as ``true`` or ``false``; a reply without
    one is sent again as it was, quoting nothing (as simple-evals re-asks HealthBench's grader
    when ``criteria_met`` is not a boolean), up to the judge's ``max_reasks``.
    """

    messages: tuple[dict[str, Any], ...]
    schema: dict[str, Any] | None = None
    schema_name: str = "verdict"
    template_version: str = ""
    text: bool = False
    sample: int = 0
    # characters at the start of the (first) user message that other requests share: an
    # Anthropic judge marks them with cache_control when they are long enough for the model to
    # cache (assay.judges.prompt_caching); not part of the cache key (same text)
    cache_prefix: int = 0
    # the lifetime the mark asks for: "5m" (Anthropic's default) or "1h"
    cache_ttl: str = "5m"
    # not part of the cache key: a reply that fits its budget is the same reply under a larger
    # one, and a reply cut at its budget is never stored
    budget: CompletionBudget | None = None
    # a field the reply must hold as a JSON boolean, else the same request is sent again,
    # quoting nothing: simple-evals' rule for HealthBench's "criteria_met"
    bool_field: str | None = None
    # (judge, cache key) once Judge.cached() has looked the request up and found nothing
    looked_up: tuple[Any, str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))

    def with_cache(self, prefix: int, ttl: str = "5m") -> JudgeRequest:
        """This request with its head marked for caching as ``prefix`` characters and ``ttl``
        (``prefix=0``: not marked), keeping what a cache lookup found (the same request).

        >>> JudgeRequest(messages=({"role": "user", "content": "hi"},), cache_prefix=2
        ...              ).with_cache(0).cache_prefix
        0
        """
        changed = replace(self, cache_prefix=prefix, cache_ttl=ttl)
        object.__setattr__(changed, "looked_up", self.looked_up)
        return changed


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """What a judge call produced.

    ``data`` is the parsed, schema-valid JSON object, or None when ``failure`` is set; ``raw``
    is the raw text of the last attempt (kept for the record, also on failure).
    ``cost_usd`` includes ``estimated_usd``: the estimate of the ``abandoned`` attempts, sent
    and given up on their timeout, which a provider bills all the same (the model generated
    their replies) but whose usage no reply reported.
    """

    judge: str
    data: dict[str, Any] | None
    raw: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0
    failure: Failure | None = None
    estimated_usd: float = 0.0
    abandoned: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None and self.data is not None
