"""``assay serve`` against uploads that never finish: a body that stops arriving, or arrives a
byte at a time, is a 408 that frees its place at once; uploads do not take the places of
requests being scored; a client that hangs up mid-body is one log line and a count."""

from __future__ import annotations

import asyncio
import json
import logging

from tests.rewards.hostile import GOOD, metrics, open_upload, post, reply_of, until


async def test_stalled_uploads_take_no_scoring_place_and_are_each_answered_408(serving):
    url, server, _ = await serving(max_per_client=2, body_timeout_s=0.5)
    stalled = [await open_upload(server.port) for _ in range(6)]  # headers and one byte
    await until(lambda: server.metrics.in_flight == 6)
    status, body = await post(f"{url}/v1/rewards", {"items": [GOOD]})
    assert status == 200 and body["rewards"] == [1.0]  # 6 uploads, a cap of 2: still scored
    replies = await asyncio.gather(*(reply_of(reader) for reader, _ in stalled))
    for reply in replies:  # each answered, then its connection closed (read to the end)
        assert reply.startswith(b"HTTP/1.1 408 ") and b"Connection: close" in reply
    assert b"did not arrive in time: 1 bytes in" in replies[0]
    assert server.metrics.in_flight == 0
    text = await metrics(url)
    assert 'assay_rejected_total{reason="body_timeout"} 6' in text
    assert 'assay_requests_total{route="/v1/rewards",status="408"} 6' in text


async def test_a_body_trickling_in_under_the_minimum_rate_is_a_408(serving):
    _, server, _ = await serving(body_timeout_s=0.5, min_body_rate=100)
    reader, writer = await open_upload(server.port, b"")

    async def trickle():  # a byte every 50 ms: never idle for 0.5 s, but 20 bytes a second
        for _ in range(400):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.05)

    sending = asyncio.create_task(trickle())
    loop = asyncio.get_running_loop()
    started = loop.time()
    reply = await reply_of(reader)
    sending.cancel()
    assert reply.startswith(b"HTTP/1.1 408 ") and b"100 bytes a second" in reply
    assert loop.time() - started < 5.0  # due at 0.5 s + (bytes in) / 100 B/s


async def test_uploads_count_against_the_larger_connection_cap_only(serving):
    url, server, _ = await serving(max_per_client=1, max_connections_per_client=3,
                                   body_timeout_s=60)
    uploads = [await open_upload(server.port) for _ in range(3)]
    await until(lambda: server.metrics.in_flight == 3)
    status, body = await post(f"{url}/v1/rewards", {"items": [GOOD]})
    assert status == 429 and "at most 3 requests open per client" in body["error"]
    for _, writer in uploads:
        writer.close()
    await until(lambda: server.metrics.in_flight == 0)
    assert (await post(f"{url}/v1/rewards", {"items": [GOOD]}))[0] == 200


async def test_a_complete_body_sent_slowly_but_within_the_bounds_is_scored(serving):
    _, server, _ = await serving(body_timeout_s=1.0)
    body = json.dumps({"items": [GOOD]}).encode()
    reader, writer = await open_upload(server.port, body[:10], length=len(body),
                                       headers="Connection: close\r\n")
    await until(lambda: server.metrics.in_flight == 1)
    writer.write(body[10:])
    reply = await reply_of(reader)
    assert reply.startswith(b"HTTP/1.1 200 ") and b'"rewards":[1.0]' in reply


async def test_a_client_gone_mid_body_is_one_log_line_and_an_aborted_count(serving, caplog):
    caplog.set_level(logging.DEBUG, logger="aiohttp")
    caplog.set_level(logging.INFO, logger="assay")
    url, server, judge_server = await serving()
    half = b'{"items": [{"prompt": "Hi", "completion'
    _, writer = await open_upload(server.port, half)
    await until(lambda: server.metrics.in_flight == 1)
    writer.close()
    await until(lambda: server.metrics.in_flight == 0)
    text = await metrics(url)
    assert 'assay_aborted_total{stage="upload"} 1' in text
    assert 'status="500"' not in text and judge_server.requests == []
    logged = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert [r.getMessage() for r in logged] == [
        f"POST /v1/rewards: the client went away after {len(half)} bytes of its body"]
    assert logged[0].exc_info is None


async def test_a_client_gone_while_its_request_is_scored_is_counted(serving):
    url, server, judge_server = await serving(judge_latency=0.2)
    body = json.dumps({"items": [GOOD]}).encode()
    _, writer = await open_upload(server.port, body, length=len(body))
    await until(lambda: judge_server.in_flight > 0)  # being scored
    writer.close()
    await until(lambda: server.metrics.in_flight == 0)
    assert 'assay_aborted_total{stage="scoring"} 1' in await metrics(url)
