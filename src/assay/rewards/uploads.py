"""Reading a request body that may never arrive: a read timeout and a minimum rate.

A client that sends its headers and then its body slowly, or not at all (a stalled upload, a
trainer whose connection dropped half-open, a hostile client), would hold its request open for
ever. :func:`read_body` waits at most ``timeout_s`` for each part of the body, and after that
first ``timeout_s`` wants the body to keep arriving at ``min_rate`` bytes a second on average:
``N`` bytes must be in by ``timeout_s + N / min_rate`` seconds after the request's headers. A
body that is late raises :class:`BodyTimeout` (``assay serve`` answers 408 and closes the
connection), one over ``max_bytes`` raises :class:`BodyTooLarge` (413) without being read
further, and a client that goes away mid-body raises :class:`ClientGone`.

Example:
    >>> import asyncio
    >>> class Parts:  # what a body is read from (aiohttp's request.content): here two parts
    ...     def __init__(self, *parts): self.parts = list(parts)
    ...     async def readany(self): return self.parts.pop(0) if self.parts else b""
    >>> asyncio.run(read_body(Parts(b'{"items"', b': []}'), UploadLimits(max_bytes=100)))
    b'{"items": []}'
    >>> asyncio.run(read_body(Parts(b"x" * 60, b"x" * 60), UploadLimits(max_bytes=100)))
    Traceback (most recent call last):
    ...
    assay.rewards.uploads.BodyTooLarge: the request body is over the server's limit of 100 bytes (assay serve --max-body-bytes)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from aiohttp.web_protocol import RequestPayloadError

from assay.errors import ConfigError

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MIN_RATE = 16 * 1024  # bytes a second: a 64 MiB body may take 70 min, a 1 MB one 70 s


class Body(Protocol):
    """Where a body is read from (aiohttp's ``request.content``, an asyncio StreamReader)."""

    async def readany(self) -> bytes: ...


@dataclass(frozen=True)
class UploadLimits:
    """How large a body may be and how slowly it may arrive (see the module doc)."""

    max_bytes: int
    timeout_s: float = DEFAULT_TIMEOUT_S
    min_rate: float = DEFAULT_MIN_RATE

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ConfigError("max_body_bytes must be at least 1")
        if not self.timeout_s > 0:
            raise ConfigError("body_timeout_s must be above 0")
        if not self.min_rate > 0:
            raise ConfigError("min_body_rate must be above 0 bytes a second")

    def deadline(self, started: float, received: int) -> float:
        """When more than ``received`` bytes must have arrived, for a body whose headers came
        at ``started``.

        >>> UploadLimits(100, timeout_s=10, min_rate=1000).deadline(0.0, 5000)
        15.0
        """
        return started + self.timeout_s + received / self.min_rate


class BodyTimeout(Exception):
    def __init__(self, received: int, seconds: float, limits: UploadLimits):
        self.received, self.seconds = received, seconds
        super().__init__(
            f"the request body did not arrive in time: {received:,} bytes in {seconds:.1f} s "
            f"(a body must keep arriving: at most {limits.timeout_s:g} s between parts and "
            f"{limits.min_rate:,.0f} bytes a second after the first {limits.timeout_s:g} s; "
            "assay serve --body-timeout-s, --min-body-rate)")


class BodyTooLarge(Exception):
    def __init__(self, limits: UploadLimits):
        super().__init__(f"the request body is over the server's limit of {limits.max_bytes:,} "
                         "bytes (assay serve --max-body-bytes)")


class ClientGone(Exception):
    """The client closed its connection before its body was complete."""

    def __init__(self, received: int):
        self.received = received
        super().__init__(f"the client went away after {received:,} bytes of its body")


async def read_body(body: Body, limits: UploadLimits, *, declared: int | None = None) -> bytes:
    """The whole body, read within ``limits``; ``declared``: its Content-Length, if any (over
    the limit, nothing is read)."""
    if declared is not None and declared > limits.max_bytes:
        raise BodyTooLarge(limits)
    loop = asyncio.get_running_loop()
    started = loop.time()
    parts: list[bytes] = []
    received = 0
    while True:
        due = min(loop.time() + limits.timeout_s, limits.deadline(started, received))
        try:
            async with asyncio.timeout_at(due):
                part = await body.readany()
        except TimeoutError:
            raise BodyTimeout(received, loop.time() - started, limits) from None
        except (ConnectionError, RequestPayloadError):  # closed mid-body: reset, or cut short
            raise ClientGone(received) from None
        if not part:
            return b"".join(parts)
        received += len(part)
        if received > limits.max_bytes:
            raise BodyTooLarge(limits)
        parts.append(part)
