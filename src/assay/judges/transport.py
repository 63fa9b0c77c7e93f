"""The HTTP transport: one pool of keep-alive HTTP/1.1 connections per endpoint
(:mod:`assay.judges.http1`), JSON in and out with orjson.

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

if TYPE_CHECKING:  # the client (and TLS) loads with the first request: a run served wholly
    import ssl  # from the response cache never pays for them

    from assay.judges.http1 import Pool

# identity: small JSON replies cost more CPU to inflate than they save (see assay.judges.http1)
_JSON = {"Content-Type": "application/json", "Accept": "application/json",
         "Accept-Encoding": "identity", "User-Agent": "assay"}


@dataclass(slots=True)
class HttpResult:
    status: int
    headers: Mapping[str, str]  # the response's own (case-insensitive) headers: not copied
    body: bytes


class Transport:
    """A lazily opened, connection-reusing HTTP/1.1 client for one base URL."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        timeout_s: float | None,
        *,
        secret_headers: dict[str, Secret] | None = None,
        max_connections: int = 0,
    ):
        merged = {k.lower(): (k, v) for k, v in {**_JSON, **headers}.items()}  # last one wins
        self._headers = dict(merged.values())
        self._secret_headers = secret_headers or {}
        self._timeout_s = timeout_s  # None: the caller bounds each request
        self._max_connections = max_connections
        self._session: Pool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ssl_context: ssl.SSLContext | None = None
        self._heads: dict[tuple[str, str], bytes] = {}  # (method, path) -> request head
        self.base_url = base_url

    @property
    def base_url(self) -> str:
        return self._base_url

    @base_url.setter
    def base_url(self, url: str) -> None:  # a new endpoint: new connections
        self._base_url = url.rstrip("/")
        self._heads.clear()
        if self._session is not None and self._loop is not None and not self._loop.is_closed():
            self._session.close()
        self._session = None

    def __repr__(self) -> str:
        return f"Transport({self.base_url!r})"

    def url(self, path: str) -> str:
        return self.base_url + path

    def _open(self) -> Pool:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            if self._session is not None and self._loop is loop:
                self._session.close()
            from assay.judges.http1 import Origin, Pool

            origin = Origin.parse(self.base_url)
            if origin.scheme == "https" and self._ssl_context is None:
                import ssl

                self._ssl_context = ssl.create_default_context()  # once per Transport
            self._session = Pool(origin, self._max_connections, ssl_context=self._ssl_context)
            self._loop = loop
        return self._session

    def _head(self, method: str, path: str, content_type: str | None = None) -> bytes:
        """The request line and every header but Content-Length, built once per path. Secret
        headers are revealed here, into the bytes on the wire, and nowhere else."""
        key = (method, path) if content_type is None else (method, path + "\0" + content_type)
        head = self._heads.get(key)
        if head is None:
            from assay.judges.http1 import Origin, header_lines, request_head

            origin = Origin.parse(self.base_url)
            headers = dict(self._headers)
            if content_type is not None:
                headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
                headers["Content-Type"] = content_type
            headers.update({k: v.reveal() for k, v in self._secret_headers.items()})
            head = request_head(method, origin.target(path), origin.host_header,
                                header_lines(headers))
            self._heads[key] = head
        return head

    async def _request(self, method: str, path: str, body: bytes | None,
                       timeout_s: float | None, content_type: str | None = None
                       ) -> HttpResult | Failure:
        try:
            pool = self._open()
            head = self._head(method, path, content_type)  # (http1.with_body, inline: once per call)
            data = head + b"\r\n" if body is None else b"%bContent-Length: %d\r\n\r\n%b" % (
                head, len(body), body)
            if timeout_s is None:
                status, headers, payload = await pool.request(data)
            else:
                async with asyncio.timeout(timeout_s):
                    status, headers, payload = await pool.request(data)
            return HttpResult(status, headers, payload)
        except TimeoutError:
            return Failure(FailureKind.TIMEOUT, f"no reply within {timeout_s:g} s" if timeout_s
                           else "the request timed out")
        except (OSError, ValueError) as exc:  # ValueError: a bad URL, header or reply
            return Failure(FailureKind.TRANSPORT, redact(f"{type(exc).__name__}: {exc}"))

    async def post_json(self, path: str, body: dict[str, Any],
                        timeout_s: float | None = None) -> HttpResult | Failure:
        """POST ``body`` as JSON; an :class:`HttpResult` for any HTTP status, a Failure if none."""
        return await self._request("POST", path, orjson.dumps(body),
                                   timeout_s if timeout_s is not None else self._timeout_s)

    async def post_bytes(self, path: str, body: bytes, content_type: str,
                         timeout_s: float | None = None) -> HttpResult | Failure:
        """POST ``body`` as it is, e.g. a multipart file upload."""
        return await self._request("POST", path, body, timeout_s, content_type)

    async def get(self, path: str, timeout_s: float = 5.0) -> HttpResult | Failure:
        return await self._request("GET", path, None, timeout_s)

    def sibling(self, base_url: str) -> Transport:
        """A transport to another base URL of the same server with the same headers (the
        key included), e.g. the server's root for llama.cpp's ``/props``; close it after use."""
        return Transport(base_url, self._headers, self._timeout_s,
                         secret_headers=self._secret_headers, max_connections=1)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        # a pool opened on another (now closed) event loop went with it: nothing to close
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.aclose()
