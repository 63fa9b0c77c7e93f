"""``assay serve`` under hostile load: stalled uploads, a huge request beside small ones, and
every refusal checked for its status (the load test of issue 41).

The fake judge (``assay fake-judge``) and ``assay serve`` (with a token, sent with a lower-case
``bearer`` scheme) run in their own processes; this process is every client, all from
127.0.0.1, so they are one client to the per-client caps. A good request is one completion
graded on K criteria (K judge calls).

1. **Slow bodies**: a client keeps C good requests in flight for ``--quiet-s`` (quiet), then for
   ``--attack-s`` while 50 connections (``--slow``) send headers promising 100,000 bytes and then
   one byte and nothing more (half of them), or a byte every 0.5 s (the other half); each one
   answered 408 reconnects at once. Target: every good request 200, p99 within 2x of quiet.
2. **One big request**: 1-item requests every 100 ms for ``--small-s`` alone, then a
   ``--big``-item request (K calls each) with 1-item requests every 100 ms until it is
   answered (``--big-rounds`` times). Target: the small ones' p99 within 3x of alone. The
   server's peak RSS (VmHWM) is read in each phase (reset between phases).
3. **What a client sees**: over-limit requests (``--huge`` items, with the server's peak RSS;
   criteria; judge calls: each a 413), a criterion
   the template cannot grade (400), an oversized sample to ``/get_reward`` (200, flagged), a
   client gone mid-body (counted as aborted, no 500), printed as checks.

    .venv/bin/python benchmarks/serve_hostile_load.py                 # 30 s attack, 1,000 items
    .venv/bin/python benchmarks/serve_hostile_load.py --attack-s 10 --big 500   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from reward_server import CRITERIA, process_cpu, spawn

from assay.rubric import Rubric

TOKEN = "bench-token-0123456789"
HEADERS = {"Content-Type": "application/json", "Authorization": f"bearer {TOKEN}"}
PROMPT = "I have had a cold for {} days. What should I do? (#{})"


def item(i: int) -> dict:
    return {"prompt": PROMPT.format(i % 9 + 2, i),
            "completion": f"<think>r{i}</think>Rest, drink fluids, see a doctor if it lasts. {i}"}


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def p50(latencies: list[float]) -> float:
    return 1000 * statistics.median(latencies)


def peak_rss_mib(pid: int, reset: bool = False) -> float:
    """The process's peak resident set (VmHWM, MiB); ``reset`` starts a new peak from now."""
    status = Path(f"/proc/{pid}/status").read_text()
    peak = int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmHWM:"))) / 1024
    if reset:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    return peak


class Client:
    def __init__(self, url: str, http: aiohttp.ClientSession):
        self.url, self.http = url, http
        self.counter = 0

    async def post(self, path: str, body: object) -> tuple[int, dict, float]:
        started = time.perf_counter()
        async with self.http.post(self.url + path, data=orjson.dumps(body),
                                  headers=HEADERS) as response:
            reply = orjson.loads(await response.read())
            return response.status, reply, time.perf_counter() - started

    async def metrics(self) -> str:
        async with self.http.get(self.url + "/metrics", headers=HEADERS) as response:
            return await response.text()

    async def good(self, n: int = 1) -> tuple[bool, float]:
        """One good request of ``n`` items: (every reward came back, seconds)."""
        self.counter += n
        status, reply, seconds = await self.post(
            "/v1/rewards", {"items": [item(self.counter - k) for k in range(n)]})
        ok = status == 200 and None not in reply.get("rewards", [None])
        return ok, seconds

    async def closed_loop(self, seconds: float, in_flight: int) -> tuple[list[float], int]:
        """``in_flight`` workers sending good requests back to back for ``seconds``."""
        latencies: list[float] = []
        failed = 0
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal failed
            while time.perf_counter() < deadline:
                ok, spent = await self.good()
                latencies.append(spent)
                failed += not ok

        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return latencies, failed

    async def every(self, period: float, until: asyncio.Future | float) -> tuple[list[float], int]:
        """A 1-item request every ``period`` s (each on its own) until ``until`` is done, or
        for ``until`` seconds."""
        tasks = []
        deadline = time.perf_counter() + until if isinstance(until, float) else None
        while (not until.done()) if deadline is None else time.perf_counter() < deadline:
            tasks.append(asyncio.create_task(self.good()))
            await asyncio.sleep(period)
        results = await asyncio.gather(*tasks)
        return [spent for _, spent in results], sum(not ok for ok, _ in results)


async def slow_body(port: int, stop: asyncio.Event, trickle: bool, answers: list[bytes]) -> None:
    """One hostile connection at a time, until ``stop``: headers promising 100,000 bytes, one
    byte, then nothing (or a byte every 0.5 s); reconnect when answered."""
    while not stop.is_set():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /v1/rewards HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     f"application/json\r\nAuthorization: {HEADERS['Authorization']}\r\n"
                     "Content-Length: "
                     "100000\r\n\r\n{".encode())
        reply = asyncio.create_task(reader.read(200))
        while not stop.is_set() and not reply.done():
            await asyncio.wait([reply, asyncio.create_task(stop.wait())], timeout=0.5,
                               return_when=asyncio.FIRST_COMPLETED)
            if trickle and not reply.done() and not writer.is_closing():
                try:
                    writer.write(b" ")
                except (ConnectionError, RuntimeError):
                    break
        if reply.done() and not reply.cancelled() and reply.exception() is None:
            answers.append(reply.result()[:12])
        else:
            reply.cancel()
        writer.close()


async def slow_bodies(client: Client, port: int, args) -> dict:
    quiet, quiet_failed = await client.closed_loop(args.quiet_s, args.in_flight)
    stop = asyncio.Event()
    answers: list[bytes] = []
    attackers = [asyncio.create_task(slow_body(port, stop, n % 2 == 1, answers))
                 for n in range(args.slow)]
    await asyncio.sleep(1.0)  # all of them connected and stalled
    attacked, attacked_failed = await client.closed_loop(args.attack_s, args.in_flight)
    stop.set()
    await asyncio.gather(*attackers, return_exceptions=True)
    after, after_failed = await client.closed_loop(args.quiet_s, args.in_flight)
    return {"quiet": quiet, "attacked": attacked, "after": after,
            "failed": (quiet_failed, attacked_failed, after_failed),
            "408s": sum(a.startswith(b"HTTP/1.1 408") for a in answers), "answers": len(answers)}


async def big_request(client: Client, pid: int, judge_pid: int, args) -> dict:
    peak_rss_mib(pid, reset=True)
    alone, alone_failed = await client.every(0.1, float(args.small_s))
    alone_peak = peak_rss_mib(pid, reset=True)
    beside: list[float] = []
    beside_failed, big_seconds, big_ok = 0, [], True
    cpu = [process_cpu(pid), process_cpu(judge_pid), time.process_time(), time.perf_counter()]
    for _ in range(args.big_rounds):
        big = asyncio.ensure_future(client.good(args.big))
        latencies, failed = await client.every(0.1, big)
        ok, spent = await big
        beside += latencies
        beside_failed += failed
        big_seconds.append(spent)
        big_ok &= ok
    wall = time.perf_counter() - cpu[3]
    busy = [(process_cpu(pid) - cpu[0]) / wall, (process_cpu(judge_pid) - cpu[1]) / wall,
            (time.process_time() - cpu[2]) / wall]
    return {"alone": alone, "beside": beside, "failed": (alone_failed, beside_failed),
            "big_seconds": big_seconds, "big_ok": big_ok, "alone_rss": alone_peak,
            "big_rss": peak_rss_mib(pid), "busy": busy}


async def checks(client: Client, port: int, pid: int, args) -> list[tuple[str, str, str]]:
    """(what, expected, got) for each refusal the issue names."""
    rows = []
    idle = peak_rss_mib(pid, reset=True)
    status, reply, _ = await client.post("/v1/rewards", {"items": [
        item(i) for i in range(args.huge)]})
    named = "--max-items" in reply.get("error", "")
    rows.append((f"{args.huge:,} items in one request", "413 naming --max-items",
                 f"{status} {named}, peak RSS {peak_rss_mib(pid):.0f} MiB (idle {idle:.0f})"))
    own = [{"id": f"c{k}", "text": f"Says {k}."} for k in range(129)]
    status, reply, _ = await client.post("/v1/rewards", {"items": [{**item(0), "criteria": own}]})
    rows.append(("129 criteria on an item", "413 naming --max-criteria",
                 f"{status} {'--max-criteria' in reply.get('error', '')}"))
    many = [{"id": f"c{k}", "text": f"Says {k}."} for k in range(100)]
    status, reply, _ = await client.post("/v1/rewards", {"items": [
        {**item(i), "criteria": many} for i in range(400)]})
    rows.append(("400 items x 100 criteria", "413 naming --max-judge-calls",
                 f"{status} {'--max-judge-calls' in reply.get('error', '')}"))
    nominal = {"id": "tone", "text": "Tone.", "options": [{"label": "warm", "value": 1},
                                                          {"label": "cold", "value": 0}]}
    status, reply, _ = await client.post("/v1/rewards", {"items": [{**item(0),
                                                                    "criteria": [nominal]}]})
    rows.append(("a multi-choice criterion (healthbench template)", "400 naming 'tone'",
                 f"{status} {'tone' in reply.get('error', '')}"))
    prompt = "Q: my knee hurts?\nA: "
    status, reply, _ = await client.post("/get_reward", {
        "query": [prompt + "See a doctor.", prompt + "x" * 200_001], "prompts": [prompt] * 2})
    rows.append(("/get_reward, one sample over the size limit", "200, oversized [0, 1]",
                 f"{status}, oversized {reply.get('extra_logs', {}).get('oversized')}"))
    aborted_before = aborted_uploads(await client.metrics())
    for _ in range(3):  # three clients gone mid-body
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /v1/rewards HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                     f"{HEADERS['Authorization']}\r\nContent-Type: application/json\r\n"
                     'Content-Length: 1000\r\n\r\n{"items": ['.encode())
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()
    await asyncio.sleep(0.5)
    metrics = await client.metrics()
    aborted = aborted_uploads(metrics)
    errors = sum(int(line.split()[-1]) for line in metrics.splitlines()
                 if line.startswith("assay_requests_total") and 'status="5' in line)
    rows.append(("3 clients gone mid-body", "aborted 3, no 5xx (all phases)",
                 f"aborted {aborted - aborted_before if aborted >= 0 else '?'}, 5xx {errors}"))
    return rows


def aborted_uploads(metrics: str) -> int:
    """assay_aborted_total{stage="upload"} (-1 for a server that does not count them)."""
    return next((int(line.split()[-1]) for line in metrics.splitlines()
                 if line.startswith('assay_aborted_total{stage="upload"}')), -1)


async def run(url: str, port: int, pid: int, judge_pid: int, args
              ) -> tuple[dict | None, dict | None, list]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        client = Client(url, http)
        await client.closed_loop(2.0, args.in_flight)  # warm up
        slow = await slow_bodies(client, port, args) if "1" in args.phases else None
        big = await big_request(client, pid, judge_pid, args) if "2" in args.phases else None
        rows = await checks(client, port, pid, args) if "3" in args.phases else []
    return slow, big, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-k", "--criteria", type=int, default=4, choices=range(1, 9))
    parser.add_argument("-l", "--latency-ms", type=float, default=50.0)
    parser.add_argument("-c", "--in-flight", type=int, default=4,
                        help="the good client's requests in flight (phase 1)")
    parser.add_argument("--slow", type=int, default=50, help="slow-body connections")
    parser.add_argument("--quiet-s", type=float, default=10.0)
    parser.add_argument("--attack-s", type=float, default=30.0)
    parser.add_argument("--small-s", type=float, default=10.0)
    parser.add_argument("--big", type=int, default=1000, help="items of the big request")
    parser.add_argument("--big-rounds", type=int, default=3)
    parser.add_argument("-j", "--judge-concurrency", type=int, default=None,
                        help="the judge's requests in flight (assay serve --concurrency; "
                        "default: its default, 64)")
    parser.add_argument("--max-items", type=int, default=1024)
    parser.add_argument("--huge", type=int, default=100_000,
                        help="items of the request over --max-items (phase 3)")
    parser.add_argument("--scheme", default="bearer", help="the Authorization scheme sent "
                        "(Bearer for a server from before lower-case was accepted)")
    parser.add_argument("--phases", default="123", help="which phases to run (e.g. 2)")
    args = parser.parse_args()
    HEADERS["Authorization"] = f"{args.scheme} {TOKEN}"
    rubric = Rubric(id="bench", criteria=CRITERIA[: args.criteria])
    judge_process, judge_url = spawn(["fake-judge", "--port", "0", "--latency-ms",
                                      str(args.latency_ms), "--policy", "MET"],
                                     r"(http://127\.0\.0\.1:\d+/v1)")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "bank.json"
        bank.write_text(rubric.model_dump_json())
        server_process, url = spawn(
            ["serve", "--judge", f"openai-compatible:fake@{judge_url}", "--bank", str(bank),
             "--port", "0", "--store", str(Path(tmp) / "s"),
             *(["--max-items", str(args.max_items)] if args.max_items != 1024 else []),
             *(["--concurrency", str(args.judge_concurrency)] if args.judge_concurrency else [])],
            r"(http://127\.0\.0\.1:\d+)", env={**os.environ, "ASSAY_SERVE_TOKEN": TOKEN})
        try:
            port = int(url.rsplit(":", 1)[1])
            idle_rss = peak_rss_mib(server_process.pid)
            slow, big, rows = asyncio.run(run(url, port, server_process.pid, judge_process.pid,
                                              args))
        finally:
            for process in (server_process, judge_process):
                process.terminate()
                process.wait(timeout=30)
    load = f"{load[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"\nassay serve under hostile load: K={args.criteria} criteria (judge calls) per item, "
          f"fake judge L={args.latency_ms:g} ms, judge requests in flight "
          f"{args.judge_concurrency or 64}; load average {load}; server RSS idle "
          f"{idle_rss:.0f} MiB\n")
    if slow is not None:
        print_slow_bodies(slow, args)
    if big is not None:
        print_big_request(big, args)
    if rows:
        print("3. what a client sees")
        for what, expected, got in rows:
            print(f"   {what:48} expected {expected:32} got {got}")


def print_slow_bodies(slow: dict, args) -> None:
    print(f"1. {args.slow} slow-body connections for {args.attack_s:g} s, {args.in_flight} good "
          "requests in flight")
    print(f"{'phase':28} {'good':>6} {'not 200':>8} {'p50 ms':>7} {'p99 ms':>7}")
    for (label, key), failed in zip((("quiet", "quiet"), ("under attack", "attacked"),
                                     ("quiet again", "after")), slow["failed"]):
        latencies = slow[key]
        print(f"{label:28} {len(latencies):6d} {failed:8d} {p50(latencies):7.1f} "
              f"{p99(latencies):7.1f}")
    quiet_p99 = max(p99(slow["quiet"]), p99(slow["after"]))
    print(f"p99 under attack / quiet (the larger of the two quiet phases): "
          f"{p99(slow['attacked']) / quiet_p99:.2f}x (target 2x); slow connections answered "
          f"408: {slow['408s']} of {slow['answers']} answered\n")


def print_big_request(big: dict, args) -> None:
    print(f"2. a {args.big:,}-item request ({args.big * args.criteria:,} judge calls) and 1-item "
          "requests every 100 ms")
    print(f"{'phase':28} {'small':>6} {'not 200':>8} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'peak RSS MiB':>13}")
    print(f"{'small alone':28} {len(big['alone']):6d} {big['failed'][0]:8d} "
          f"{p50(big['alone']):7.1f} {p99(big['alone']):7.1f} {big['alone_rss']:13.0f}")
    print(f"{'small beside the big one':28} {len(big['beside']):6d} {big['failed'][1]:8d} "
          f"{p50(big['beside']):7.1f} {p99(big['beside']):7.1f} {big['big_rss']:13.0f}")
    print(f"small p99 beside / alone: {p99(big['beside']) / p99(big['alone']):.2f}x (target 3x); "
          f"the big request took {', '.join(f'{s:.1f}' for s in big['big_seconds'])} s "
          f"({'every reward' if big['big_ok'] else 'NOT every reward'}); CPU meanwhile (share of "
          "one core): server {:.0%}, fake judge {:.0%}, clients {:.0%}\n".format(*big["busy"]))


if __name__ == "__main__":
    main()
