"""Scripted trouble for the fake judge: latency distributions and injected faults.

Faults come from ``at`` (faults for the requests of fixed calls, whatever the order calls
arrive in: see below), then a ``script`` (one entry per request, in arrival order; ``None`` or
``"ok"`` means a normal reply) and, after the script runs out, from per-request probabilities
drawn from the server's seeded generator.

``at`` maps a substring of a request's prompt text (or a tuple of substrings that must all
occur) to the faults of the requests that contain it, in turn; the first key that matches
takes the request. The attempts of one call (its retries, its re-asks, which repeat the
prompt) arrive one after another, so a key that names one call faults exactly its first
attempts, however many calls run concurrently: a test can fault fixed calls of a concurrent
job and get the same outcome every time.

Fault names:
``rate_limit`` (429 with Retry-After), ``server_error`` (500), ``timeout`` (no reply until the
client gives up), ``malformed`` (the reply text is broken JSON), ``truncated`` (cut short,
``finish_reason: length``), ``fenced`` (valid JSON inside code fences with chatter around it),
``schema_mismatch`` (valid JSON with the wrong fields), ``refusal`` (the model refuses),
``bad_envelope`` (HTTP 200 whose body is not JSON), ``context_overflow``,
``context_overflow_vllm``, ``context_overflow_openai`` (HTTP 400: the request is longer than
the model's context, in llama.cpp's, vLLM's and OpenAI's words; see
:mod:`assay.testing.context_errors`).

Example:
    >>> import random
    >>> faults = Faults(script=["rate_limit", None], server_error=1.0)
    >>> rng = random.Random(0)
    >>> [faults.next(rng) for _ in range(3)]
    ['rate_limit', None, 'server_error']
    >>> Latency.uniform(0.01, 0.02).sample(rng) <= 0.02
    True
    >>> fixed = Faults(at={("route", "bee"): ["server_error", "malformed"]})
    >>> [fixed.next(rng, t) for t in ("route: bee", "draft: bee", "route: bee", "route: bee")]
    ['server_error', None, 'malformed', None]
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from assay.testing.context_errors import OVERFLOW_FAULTS

FAULTS = ("rate_limit", "server_error", "timeout", "malformed", "truncated", "fenced",
          "schema_mismatch", "refusal", "bad_envelope")
SCRIPTED_ONLY = OVERFLOW_FAULTS  # named in a script or ``at``; no rate of their own


@dataclass
class Faults:
    script: Sequence[str | None] = ()
    rate_limit: float = 0.0
    server_error: float = 0.0
    timeout: float = 0.0
    malformed: float = 0.0
    truncated: float = 0.0
    fenced: float = 0.0
    schema_mismatch: float = 0.0
    refusal: float = 0.0
    bad_envelope: float = 0.0
    retry_after: float | None = 1.0
    retry_after_ms: bool = False
    hang_s: float = 30.0
    at: Mapping[str | tuple[str, ...], Sequence[str | None]] = field(default_factory=dict)
    _position: int = field(default=0, repr=False)
    _at_positions: dict[str | tuple[str, ...], int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for name in [*self.script, *(n for names in self.at.values() for n in names)]:
            if name not in (None, "ok") and name not in FAULTS + SCRIPTED_ONLY:
                raise ValueError(f"unknown fault {name!r}; known: "
                                 f"{', '.join(FAULTS + SCRIPTED_ONLY)}")

    def next(self, rng: random.Random, text: str = "") -> str | None:
        """The fault of the next request (``text``: its prompt, which ``at`` is matched on)."""
        for key, names in self.at.items():
            if all(part in text for part in ((key,) if isinstance(key, str) else key)):
                position = self._at_positions.get(key, 0)
                if position < len(names):
                    self._at_positions[key] = position + 1
                    name = names[position]
                    return None if name == "ok" else name
                break  # this call's faults are spent: it gets the others' (none, usually)
        if self._position < len(self.script):
            name = self.script[self._position]
            self._position += 1
            return None if name == "ok" else name
        if not any(getattr(self, name) for name in FAULTS):
            return None
        draw = rng.random()
        for name in FAULTS:
            rate = getattr(self, name)
            if draw < rate:
                return name
            draw -= rate
        return None


@dataclass(frozen=True)
class Latency:
    """Time the fake model takes to answer: fixed, uniform, lognormal, any function, or
    ``by_question``: a function of the request's prompt too (the same question is as slow on
    every attempt, as a long reasoning answer is)."""

    sampler: Callable[[random.Random], float]
    by_question: Callable[[random.Random, str], float] | None = None

    @classmethod
    def fixed(cls, seconds: float) -> Latency:
        return cls(lambda rng: seconds)

    @classmethod
    def uniform(cls, low: float, high: float) -> Latency:
        return cls(lambda rng: rng.uniform(low, high))

    @classmethod
    def lognormal(cls, median: float, sigma: float = 0.5) -> Latency:
        import math

        return cls(lambda rng: rng.lognormvariate(math.log(median), sigma))

    @classmethod
    def heavy_tail(cls, median: float, share: float = 0.01, factor: float = 40.0,
                   seed: int = 0) -> Latency:
        """``median`` seconds, but ``factor`` times that for a fixed ``share`` of the questions
        (chosen by a hash of the prompt and ``seed``): a heavy-tailed endpoint, where a few
        questions take a long reasoning answer on every attempt.

        >>> tail = Latency.heavy_tail(0.05, share=0.5)
        >>> sorted({tail.sample(random.Random(), f"question {i}") for i in range(20)})
        [0.05, 2.0]
        """
        def seconds(rng: random.Random, text: str) -> float:
            digest = hashlib.sha256(f"{seed}\x00{text}".encode()).digest()
            slow = int.from_bytes(digest[:8], "big") < share * 2**64
            return median * factor if slow else median

        return cls(lambda rng: median, seconds)

    def sample(self, rng: random.Random, text: str = "") -> float:
        """Seconds for a request whose prompt is ``text``."""
        if self.by_question is not None:
            return max(0.0, self.by_question(rng, text))
        return max(0.0, self.sampler(rng))


def as_latency(latency: float | tuple[float, float] | Latency | None) -> Latency:
    if latency is None:
        return Latency.fixed(0.0)
    if isinstance(latency, Latency):
        return latency
    if isinstance(latency, tuple):
        return Latency.uniform(*latency)
    return Latency.fixed(float(latency))
