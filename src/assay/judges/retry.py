"""When to retry a call and how long to wait: exponential backoff with full jitter, and the
server's own ``Retry-After`` (seconds, HTTP date, or OpenAI's ``retry-after-ms``) when given.

The backoff grows with a call's retries only while its endpoint is in trouble
(:class:`EndpointHealth`): a 5xx or a timeout among mostly good answers is that request's bad
luck, and each of its retries waits the base backoff; when such failures are half of the recent
answers, the endpoint is down or overloaded and a call's retries wait ever longer.

Example:
    >>> from assay.judges.config import RetryPolicy
    >>> policy = RetryPolicy(base_delay_s=1.0, max_delay_s=10.0, jitter=False)
    >>> [backoff_delay(n, policy) for n in range(5)]
    [1.0, 2.0, 4.0, 8.0, 10.0]
    >>> parse_retry_after({"Retry-After": "3"})
    3.0
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from assay.judges.config import RetryPolicy
from assay.judges.types import Failure, FailureKind

HEALTH_WINDOW = 32  # answers an endpoint's health is judged on ...
HEALTH_MIN_ANSWERS = 8  # ... once it has given at least this many

RETRYABLE = frozenset(
    {FailureKind.TRANSPORT, FailureKind.TIMEOUT, FailureKind.RATE_LIMIT, FailureKind.SERVER_ERROR}
)


def classify_status(status: int) -> FailureKind | None:
    """The failure class of an HTTP status (None for success)."""
    if status < 400:
        return None
    if status == 429:
        return FailureKind.RATE_LIMIT
    if status == 408:
        return FailureKind.TIMEOUT
    if status >= 500:  # includes Anthropic's 529 "overloaded"
        return FailureKind.SERVER_ERROR
    return FailureKind.TRANSPORT  # other 4xx: bad request, auth, not found


def is_retryable(kind: FailureKind, status: int | None) -> bool:
    if kind is FailureKind.TRANSPORT and status is not None:
        return False  # a 4xx other than 408/429 will not fix itself
    return kind in RETRYABLE


def worth_asking_again(failure: Failure) -> bool:
    """Whether a call that ended in ``failure`` may succeed if asked again later: its retries
    ran out on a transient fault (a 429, a 5xx, a timeout, a dropped connection) or its reply
    did not parse after the re-asks. Not a refused, cut or over-long request, a 4xx, nor a
    spent budget: those would fail the same way.

    >>> worth_asking_again(Failure(FailureKind.UNPARSEABLE, "not JSON"))
    True
    >>> worth_asking_again(Failure(FailureKind.TRANSPORT, "HTTP 401", 401))
    False
    """
    return failure.kind in (FailureKind.UNPARSEABLE, FailureKind.SCHEMA_MISMATCH) or is_retryable(
        failure.kind, failure.status
    )


def backoff_delay(attempt: int, policy: RetryPolicy, rng: random.Random | None = None) -> float:
    """Delay before retry number ``attempt + 1``: base·2^attempt capped, fully jittered."""
    cap = min(policy.max_delay_s, policy.base_delay_s * (2**attempt))
    if not policy.jitter:
        return cap
    return (rng or random).uniform(0.0, cap)


def retry_delay(
    attempt: int, policy: RetryPolicy, retry_after: float | None, rng: random.Random | None = None
) -> float:
    """The server's Retry-After when given (capped), else the jittered backoff."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), policy.max_retry_after_s)
    return backoff_delay(attempt, policy, rng)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items() if k.lower().startswith("retry-after")}
    if "retry-after-ms" in lowered:
        try:
            return float(lowered["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class EndpointHealth:
    """An endpoint's recent answers: good (a reply) or failed (a 5xx, a timeout, a transport
    error; a 429 is paced by the limiter and its Retry-After, not here). It is in trouble while
    failures are at least half of the last :data:`HEALTH_WINDOW` answers, or before
    :data:`HEALTH_MIN_ANSWERS` of them were seen.

    >>> health = EndpointHealth()
    >>> health.troubled                        # nothing seen yet: assume the worst
    True
    >>> for ok in [True] * 9 + [False]: health.answered(ok)
    >>> health.troubled                        # one failure in ten
    False
    >>> for _ in range(10): health.answered(False)
    >>> health.troubled                        # half of the last twenty
    True
    """

    def __init__(self) -> None:
        self._recent: deque[bool] = deque(maxlen=HEALTH_WINDOW)  # True: a good answer

    def answered(self, ok: bool) -> None:
        self._recent.append(ok)

    @property
    def troubled(self) -> bool:
        seen = len(self._recent)
        return seen < HEALTH_MIN_ANSWERS or 2 * self._recent.count(False) >= seen
