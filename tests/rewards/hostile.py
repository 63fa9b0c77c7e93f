"""Clients of ``assay serve`` that a library would not let us be: raw sockets that send headers
and then a body slowly, not at all, or only half of it before hanging up."""

from __future__ import annotations

import asyncio

import aiohttp

GOOD = {"prompt": "I have had a cold for three days. What should I do?",
        "completion": "Rest and see a doctor."}
REPLY_WITHIN_S = 10.0  # a reply the server owes: past this the test fails instead of hanging


async def until(condition, within_s: float = REPLY_WITHIN_S) -> None:
    """Wait (polling the server's own state) until ``condition()`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("the server never got there")
        await asyncio.sleep(0.005)


async def open_upload(port: int, sent: bytes = b"{", *, length: int = 100_000,
                      path: str = "/v1/rewards", headers: str = ""
                      ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST whose headers promise ``length`` bytes of body, of which ``sent`` is sent."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {length}\r\n{headers}\r\n".encode() + sent)
    await writer.drain()
    return reader, writer


async def reply_of(reader: asyncio.StreamReader, within_s: float = REPLY_WITHIN_S) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), within_s)


async def post(url: str, body: object, headers: dict[str, str] | None = None
               ) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as http, http.post(url, json=body,
                                                          headers=headers) as response:
        return response.status, await response.json()


async def metrics(base: str, headers: dict[str, str] | None = None) -> str:
    async with aiohttp.ClientSession() as http, http.get(f"{base}/metrics",
                                                         headers=headers) as response:
        return await response.text()
