"""How long web evidence with page text takes when pages are slow: an item's search queries
with 2 hits each, every page answering after ``--delay`` seconds, on loopback.

Run from the repository root::

    .venv/bin/python benchmarks/web_pages.py
    .venv/bin/python benchmarks/web_pages.py --queries 5 --delay 2

Two rows, measured in the same sitting:

* ``one search query at a time``: each query's pages fetched together, then the next query's
  (what ``assay generate --search`` did before issue 43: 2 pages in flight, never 4);
* ``assay generate``: the whole pipeline against the fake judge and fake search server, where
  all of an item's pages are fetched together, 4 at a time.

With Q queries and delay D the first takes about Q·D, the second about ceil(2Q/4)·D plus the
pipeline's own calls.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


async def run(queries: int, delay: float) -> list[tuple[str, float]]:
    import yaml
    from aiohttp import web

    from assay.evidence import TavilySearch
    from assay.evidence.pages import fetch_pages
    from assay.generate import agenerate
    from assay.testing import FakeJudgeServer, FakeSearchServer

    async def page(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        name = request.match_info["name"]
        return web.Response(text=f"<html><body><article><h1>Fever {name}</h1><p>Give 15 mg/kg "
                                 f"of paracetamol every 6 hours ({name}).</p></article></body>"
                                 "</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{name}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    urls = [[f"{base}/p/q{i}-{j}" for j in range(2)] for i in range(queries)]
    rows = []
    try:
        started = time.perf_counter()
        for query_urls in urls:
            await fetch_pages(query_urls)
        rows.append(("one search query at a time (before)", time.perf_counter() - started))

        stages = yaml.safe_load((ROOT / "examples" / "generate" / "stages.yaml").read_text())
        stages["route"]["by_prompt"][0][1] = {"intent": "Safety", "queries": [
            f"fever infant question {i}" for i in range(queries)]}

        def hits(body):
            i = int(body["query"].rsplit(" ", 1)[-1])
            return [{"title": f"Fever {i}-{j}", "url": f"{base}/p/r{i}-{j}", "content": "fever"}
                    for j in range(2)]

        judge = await FakeJudgeServer(stages=stages).start()
        try:
            async with FakeSearchServer(results=hits) as search:
                web_search = TavilySearch(api_key=search.key, base_url=search.base_url)
                with tempfile.TemporaryDirectory() as folder:
                    started = time.perf_counter()
                    result = await agenerate(
                        "My 2-month-old has a fever of 38.2. What should I do?",
                        model=f"openai-compatible:fake@{judge.base_url}", search=web_search,
                        out=Path(folder) / "o.jsonl")
                    rows.append(("assay generate (pages together, 4 at a time)",
                                 time.perf_counter() - started))
                    assert result.status == "complete"
        finally:
            await judge.stop()
    finally:
        await runner.cleanup()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--delay", type=float, default=2.0)
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = asyncio.run(run(args.queries, args.delay))
    print(f"{args.queries} search queries x 2 pages, each page {args.delay:g} s; load average "
          f"{load:.1f}\n")
    print("| pattern | wall |")
    print("|---|---:|")
    for name, wall in rows:
        print(f"| {name} | {wall:.1f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
