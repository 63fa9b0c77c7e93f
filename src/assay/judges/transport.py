"""The HTTP transport: one pooled aiohttp session per endpoint, JSON in and out with orjson.

Failures are turned into :class:`~assay.judges.types.Failure` values with secrets redacted; the
transport itself never raises for network trouble.

Example:
    >>> t = Transport("http://127.0.0.1:9/v1", headers={}, timeout_s=1.0)
    >>> t.url("/chat/completions")
    'http://127.0.0.1:9/v1/chat/completions'
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from assay.judges.secrets import Secret, redact
from assay.judges.types import Failure, FailureKind

if TYPE_CHECKING:  # aiohttp (and the TLS stack under it) loads with the first request: a run
    import aiohttp  # served wholly from the response cache never pays for it

_JSON = {"Content-Type": "application/json", "Accept": "application/json"}


@dataclass(slots=True)
class HttpResult:
    status: int
    headers: Mapping[str, str]  # the response's own (case-insensitive) headers: not copied
    body: bytes


class Transport:
    """A lazily opened, connection-reusing aiohttp session for one base URL."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        timeout_s: float | None,
        *,
        secret_headers: dict[str, Secret] | None = None,
        max_connections: int = 0,
    ):
        self.base_url = base_url.rstrip("/")
        self._headers = {**_JSON, **headers}
        self._secret_headers = secret_headers or {}
        self._timeout_s = timeout_s  # None: the caller bounds each request
        self._last_timeout: aiohttp.ClientTimeout | None = None
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"Transport({self.base_url!r})"

    def url(self, path: str) -> str:
        return self.base_url + path

    def _open(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            import aiohttp

            headers = dict(self._headers)
            headers.update({k: v.reveal() for k, v in self._secret_headers.items()})
            connector = aiohttp.TCPConnector(
                limit=self._max_connections, ttl_dns_cache=300, keepalive_timeout=30
            )
            self._session = aiohttp.ClientSession(
                headers=headers, timeout=aiohttp.ClientTimeout(total=self._timeout_s),
                connector=connector, trust_env=False
            )
            self._loop = loop
        return self._session

    async def post_json(self, path: str, body: dict[str, Any],
                        timeout_s: float | None = None) -> HttpResult | Failure:
        """POST ``body`` as JSON; an :class:`HttpResult` for any HTTP status, a Failure if none."""
        session = self._open()
        import aiohttp  # loaded by _open: a lookup in sys.modules

        timeout = None
        if timeout_s is not None:
            timeout = self._last_timeout
            if timeout is None or timeout.total != timeout_s:
                timeout = self._last_timeout = aiohttp.ClientTimeout(total=timeout_s)
        try:
            url, data = self.base_url + path, orjson.dumps(body)
            # No timeout argument at all keeps the session's own (None would disable it).
            request = (session.post(url, data=data, timeout=timeout) if timeout is not None
                       else session.post(url, data=data))
            async with request as response:
                payload = await response.read()
                return HttpResult(response.status, response.headers, payload)
        except TimeoutError:
            total = timeout_s if timeout_s is not None else self._timeout_s
            return Failure(FailureKind.TIMEOUT, f"no reply within {total:g} s" if total
                           else "the request timed out")
        except aiohttp.ClientError as exc:
            return Failure(FailureKind.TRANSPORT, redact(f"{type(exc).__name__}: {exc}"))
        except OSError as exc:
            return Failure(FailureKind.TRANSPORT, redact(f"{type(exc).__name__}: {exc}"))

    async def get(self, path: str, timeout_s: float = 5.0) -> HttpResult | Failure:
        session = self._open()
        import aiohttp  # loaded by _open
        try:
            async with session.get(
                self.base_url + path, timeout=aiohttp.ClientTimeout(total=timeout_s)
            ) as response:
                return HttpResult(response.status, dict(response.headers), await response.read())
        except TimeoutError:
            return Failure(FailureKind.TIMEOUT, f"no reply within {timeout_s:g} s")
        except (aiohttp.ClientError, OSError) as exc:
            return Failure(FailureKind.TRANSPORT, redact(f"{type(exc).__name__}: {exc}"))

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
