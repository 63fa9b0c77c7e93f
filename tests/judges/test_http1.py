"""The HTTP/1.1 client under the transport, over real loopback sockets: the fake judge and small
raw asyncio servers that answer exactly the bytes each edge case needs."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import ssl
import zlib

import orjson
import pytest

from assay.judges.http1 import Origin, Pool, request_head, with_body
from assay.judges.retry import parse_retry_after
from assay.judges.secrets import Secret
from assay.judges.transport import HttpResult, Transport
from assay.judges.types import Failure, FailureKind
from assay.testing import Faults

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
KEY = "sk-test-http1-secret-123456"


class Raw:
    """A raw HTTP server: ``answer(n, request)`` gives the bytes to send for the n-th request
    (n counts from 0 over all connections), ``None`` to close the connection without a reply,
    ``...`` to hang. It counts connections, the most open at once, and requests."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = self.open = self.most_open = self.closed_by_client = 0
        self.close_after = False  # close every connection after its first reply

    async def start(self, ssl_context: ssl.SSLContext | None = None) -> Raw:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=ssl_context)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    self.closed_by_client += 1
                    return
                self.requests.append(request)
                reply = self.answer(len(self.requests) - 1, request)
                if asyncio.iscoroutine(reply):
                    reply = await reply
                if reply is ...:
                    if await reader.read() == b"":  # hang until the client gives up
                        self.closed_by_client += 1
                    return
                if reply is None:
                    return
                writer.write(reply)
                await writer.drain()
                if self.close_after or b"Connection: close" in reply or reply.startswith(b"HTTP/1.0"):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed_by_client += 1
        finally:
            self.open -= 1
            writer.close()

    async def stop(self) -> None:
        self.server.close()


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


@pytest.fixture
async def raw():
    servers: list[Raw] = []

    async def start(answer, ssl_context=None) -> Raw:
        server = await Raw(answer).start(ssl_context)
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


def transport(url: str, **kw) -> Transport:
    return Transport(url, headers={}, timeout_s=kw.pop("timeout_s", 5.0), **kw)


async def test_a_chat_completion_from_the_fake_judge_over_kept_alive_connections(serve):
    server = await serve(latency=0.002)
    t = transport(server.base_url)
    results = await asyncio.gather(*(t.post_json("/chat/completions", BODY) for _ in range(20)))
    models = await t.get("/models")
    await t.aclose()
    assert all(isinstance(r, HttpResult) and r.status == 200 for r in results)
    assert orjson.loads(results[0].body)["choices"][0]["message"]["role"] == "assistant"
    assert results[0].headers["content-type"].startswith("application/json")
    assert models.status == 200 and len(server.requests) == 20


async def test_a_429_from_the_fake_judge_carries_its_retry_after(serve):
    server = await serve(faults=Faults(rate_limit=1.0, retry_after=2.5))
    t = transport(server.base_url)
    result = await t.post_json("/chat/completions", BODY)
    await t.aclose()
    assert result.status == 429 and parse_retry_after(result.headers) == 2.5


async def test_the_request_bytes_carry_prefix_host_length_and_headers(raw):
    server = await raw(lambda n, r: OK)
    t = Transport(server.url(), headers={"X-Extra": "1"}, timeout_s=5.0,
                  secret_headers={"Authorization": Secret("Bearer " + KEY)})
    await t.post_json("/chat/completions", {"a": 1})
    await t.aclose()
    head, body = server.requests[0].split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1" and body == b'{"a":1}'
    assert {f"Host: 127.0.0.1:{server.port}", "Content-Length: 7", "X-Extra: 1",
            f"Authorization: Bearer {KEY}", "Content-Type: application/json",
            "Accept-Encoding: identity"} <= set(lines)
    assert KEY not in repr(t)


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
    b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%b" % (
        len(gzip.compress(b"hello world")), gzip.compress(b"hello world")),
    b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%b" % (
        len(zlib.compress(b"hello world")), zlib.compress(b"hello world")),
], ids=["content-length", "chunked", "1xx-first", "gzip", "deflate"])
async def test_bodies_of_every_framing_are_read_and_the_connection_kept(raw, reply):
    server = await raw(lambda n, r: reply)
    t = transport(server.url())
    first = await t.post_json("/x", BODY)
    second = await t.post_json("/x", BODY)
    await t.aclose()
    assert first.status == second.status == 200 and first.body == second.body == b"hello world"
    assert server.connections == 1


async def test_a_body_read_to_eof_ends_with_the_connection(raw):
    server = await raw(lambda n, r: b"HTTP/1.0 200 OK\r\n\r\nuntil the end")
    t = transport(server.url())
    results = [await t.post_json("/x", BODY) for _ in range(2)]
    await t.aclose()
    assert [r.body for r in results] == [b"until the end"] * 2 and server.connections == 2


async def test_connection_close_is_never_reused(raw):
    server = await raw(lambda n, r: b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
    t = transport(server.url())
    results = [await t.post_json("/x", BODY) for _ in range(3)]
    await t.aclose()
    assert all(r.body == b"ok" for r in results) and server.connections == 3


async def test_an_idle_connection_the_server_dropped_is_retried_once_on_a_fresh_one(raw):
    # the second request arrives on the kept connection and the server closes it unanswered,
    # as a server does when its idle timeout strikes just as the request is sent
    server = await raw(lambda n, r: None if n == 1 else OK)
    t = transport(server.url())
    first = await t.post_json("/x", BODY)
    second = await t.post_json("/x", BODY)
    await t.aclose()
    assert first.body == second.body == b"ok"
    assert server.connections == 2 and len(server.requests) == 3


async def test_a_fresh_connection_closed_unanswered_is_a_failure_not_a_retry(raw):
    server = await raw(lambda n, r: None)
    t = transport(server.url())
    result = await t.post_json("/x", BODY)
    await t.aclose()
    assert result.kind is FailureKind.TRANSPORT and len(server.requests) == 1


async def test_a_hung_server_times_out_and_its_connection_is_closed(raw):
    server = await raw(lambda n, r: ... if n == 1 else OK)
    t = transport(server.url(), timeout_s=0.2)
    assert (await t.post_json("/x", BODY)).body == b"ok"
    hung = await t.post_json("/x", BODY)
    after = await t.post_json("/x", BODY, timeout_s=2.0)
    await t.aclose()
    await asyncio.sleep(0.05)
    assert hung.kind is FailureKind.TIMEOUT and "0.2 s" in hung.message
    assert after.body == b"ok" and server.connections == 2 and server.closed_by_client >= 1


async def test_a_cancelled_request_closes_its_connection(raw):
    server = await raw(lambda n, r: ...)
    t = transport(server.url())
    task = asyncio.create_task(t.post_json("/x", BODY))
    while not server.requests:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.05)
    assert server.closed_by_client == 1 and t._session._count == 0
    await t.aclose()


async def test_a_refused_port_is_a_transport_failure():
    sock = __import__("socket").socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    t = Transport(f"http://127.0.0.1:{port}/v1", headers={}, timeout_s=5.0,
                  secret_headers={"Authorization": Secret("Bearer " + KEY)})
    result = await t.post_json("/x", BODY)
    await t.aclose()
    assert result.kind is FailureKind.TRANSPORT and "Connect" in result.message
    assert KEY not in result.message


@pytest.mark.parametrize("reply", [b"HTPP/1.1 200 OK\r\n\r\n", b"HTTP/1.1 2x0 OK\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort"],
                         ids=["status-line", "status-code", "cut-body"])
async def test_a_malformed_or_cut_reply_is_a_transport_failure(raw, reply):
    server = await raw(lambda n, r: reply)
    server.close_after = True
    t = Transport(server.url(), headers={}, timeout_s=5.0,
                  secret_headers={"Authorization": Secret("Bearer " + KEY)})
    result = await t.post_json("/x", BODY)
    await t.aclose()
    assert isinstance(result, Failure) and result.kind is FailureKind.TRANSPORT
    assert KEY not in result.message and result.message


async def test_retry_after_is_read_case_insensitively(raw):
    server = await raw(lambda n, r: b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\n"
                                    b"Content-Length: 0\r\n\r\n")
    t = transport(server.url())
    result = await t.post_json("/x", BODY)
    await t.aclose()
    assert result.status == 429 and result.headers["Retry-After"] == "3"
    assert parse_retry_after(result.headers) == 3.0


async def test_max_connections_makes_callers_wait_for_a_free_one(raw):
    async def slow(n, r):
        await asyncio.sleep(0.02)
        return OK

    server = await raw(slow)
    t = transport(server.url(), max_connections=3)
    results = await asyncio.gather(*(t.post_json("/x", BODY) for _ in range(12)))
    await t.aclose()
    assert all(r.body == b"ok" for r in results)
    assert server.most_open == 3 and server.connections == 3


async def test_an_idle_connection_older_than_the_idle_limit_is_not_reused(raw):
    server = await raw(lambda n, r: OK)
    origin = Origin.parse(server.url())
    pool = Pool(origin, idle_s=0.0)
    request = with_body(request_head("GET", origin.target("/x"), origin.host_header, b""), None)
    replies = [await pool.request(request) for _ in range(2)]
    await pool.aclose()
    assert [r[2] for r in replies] == [b"ok", b"ok"] and server.connections == 2


def test_a_transport_used_from_a_new_event_loop_reopens():
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread() as server:
        t = transport(server.base_url)
        first = asyncio.run(t.post_json("/chat/completions", BODY))
        second = asyncio.run(t.post_json("/chat/completions", BODY))
        asyncio.run(t.aclose())
    assert first.status == second.status == 200


def _self_signed(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


async def test_https_verifies_the_server_and_keeps_the_connection(raw, tmp_path, monkeypatch):
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = await raw(lambda n, r: OK, ssl_context=context)

    untrusted = transport(server.url("https"))
    refused = await untrusted.post_json("/x", BODY)
    await untrusted.aclose()
    assert refused.kind is FailureKind.TRANSPORT and "CERTIFICATE_VERIFY_FAILED" in refused.message

    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the default context now trusts it
    trusted = transport(server.url("https"))
    results = [await trusted.post_json("/x", BODY) for _ in range(3)]
    context = trusted._ssl_context
    await trusted.aclose()
    results.append(await trusted.post_json("/x", BODY))  # reopened after aclose: same context
    await trusted.aclose()
    assert [r.body for r in results] == [b"ok"] * 4 and trusted._ssl_context is context
    # the refused handshake never reached the handler; one connection kept alive, one after aclose
    assert server.connections == 2


def test_origins_keep_the_prefix_default_ports_and_ipv6_literals():
    assert Origin.parse("https://api.example.com/v1/") == Origin("https", "api.example.com", 443, "/v1")
    assert Origin.parse("http://[::1]:8000").host_header == "[::1]:8000"
    assert Origin.parse("http://[::1]/v1").target("/chat") == "/v1/chat"
    assert Origin.parse("https://h:443/x").host_header == "h"
    with pytest.raises(ValueError):
        Origin.parse("ftp://h/x")


async def test_a_header_with_a_line_break_is_refused_without_showing_its_value(raw):
    server = await raw(lambda n, r: OK)
    t = Transport(server.url(), headers={}, timeout_s=5.0,
                  secret_headers={"Authorization": Secret(f"Bearer {KEY}\r\nX-Evil: 1")})
    result = await t.post_json("/x", BODY)
    await t.aclose()
    assert result.kind is FailureKind.TRANSPORT and "Authorization" in result.message
    assert KEY not in result.message and not server.requests


async def test_closing_the_transport_fails_callers_waiting_for_a_connection(raw):
    async def slow(n, r):
        await asyncio.sleep(0.05)
        return OK

    server = await raw(slow)
    t = transport(server.url(), max_connections=1)
    calls = [asyncio.create_task(t.post_json("/x", BODY)) for _ in range(3)]
    while not server.requests:
        await asyncio.sleep(0.005)
    await t.aclose()
    results = await asyncio.gather(*calls)
    assert results[0].body == b"ok"
    assert [r.kind for r in results[1:]] == [FailureKind.TRANSPORT] * 2
