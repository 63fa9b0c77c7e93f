"""CPU per request of the judges' HTTP/1.1 client (``assay.judges.http1`` under ``Transport``)
against a bare aiohttp client, same bodies, same fake judge (its own process, L = 20 ms).

    .venv/bin/python benchmarks/http_client.py                 # 5,000 requests at C=64 and 256
    .venv/bin/python benchmarks/http_client.py --requests 20000

Only the client's process CPU (user + system) is counted: the floor a grading run pays per call.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import orjson
from fake_judge_process import start_fake_judge


def bodies(n: int) -> list[dict]:
    return [{"model": "fake", "messages": [{"role": "user", "content": f"case {k} " + "x" * 2000}],
             "response_format": {"type": "json_object"}} for k in range(n)]


async def bare_aiohttp(base_url: str, payloads: list[dict], concurrency: int) -> float:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def one(body: dict) -> None:
            async with sem, session.post(f"{base_url}/chat/completions", data=orjson.dumps(body),
                                         headers={"Content-Type": "application/json"}) as r:
                await r.read()

        cpu = time.process_time()
        await asyncio.gather(*(one(b) for b in payloads))
        return time.process_time() - cpu


async def assay_transport(base_url: str, payloads: list[dict], concurrency: int) -> float:
    from assay.judges.transport import Transport

    sem = asyncio.Semaphore(concurrency)
    transport = Transport(base_url, headers={}, timeout_s=60.0, max_connections=concurrency)

    async def one(body: dict) -> None:
        async with sem:
            result = await transport.post_json("/chat/completions", body)
            assert result.status == 200, result

    cpu = time.process_time()
    await asyncio.gather(*(one(b) for b in payloads))
    spent = time.process_time() - cpu
    await transport.aclose()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5000)
    n = parser.parse_args().requests
    process, base_url = start_fake_judge(20, "--policy", "MET")
    try:
        payloads = bodies(n)
        print(f"| client (CPU ms per request, {n:,} requests) | C=64 | C=256 |")
        print("|---|---:|---:|")
        for name, client in (("bare aiohttp", bare_aiohttp), ("assay Transport (http1)", assay_transport)):
            cells = [asyncio.run(client(base_url, payloads, c)) / n * 1000 for c in (64, 256)]
            print(f"| {name} | {cells[0]:.3f} | {cells[1]:.3f} |", flush=True)
    finally:
        process.kill()


if __name__ == "__main__":
    main()
