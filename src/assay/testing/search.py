"""A fake web-search server speaking the Tavily Search API on loopback, for tests and demos.

``POST /search`` with ``Authorization: Bearer KEY`` and ``{query, max_results, ...}`` answers
``{"query", "results": [{title, url, content, score}], "response_time"}``. ``results`` maps a
substring of the query to its results (the first match wins; ``"*"`` matches anything), or is
a callable ``(body) -> list``. A wrong key gets HTTP 401; every request body is kept in
:attr:`requests` (the key is never recorded).

Example::

    async with FakeSearchServer(results={"*": [{"title": "NHS", "url": "https://nhs.uk/a",
                                                "content": "Scrape the sting out."}]}) as server:
        search = TavilySearch(api_key=server.key, base_url=server.base_url)
        hits = await search.search("bee sting", max_results=2)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web


class FakeSearchServer:
    def __init__(self, results: Mapping[str, list[dict[str, Any]]] | Callable[[dict], list]
                 | None = None, *, key: str = "tvly-fake-test-key", host: str = "127.0.0.1",
                 port: int = 0):
        self.results = results or {}
        self.key, self.host, self.port = key, host, port
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> FakeSearchServer:
        app = web.Application()
        app.router.add_post("/search", self._search)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the bound port (port 0 picks a free one)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSearchServer:  # noqa: PYI034
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if callable(self.results):
            return list(self.results(body))
        query = str(body.get("query", "")).lower()
        for needle, results in self.results.items():
            if needle == "*" or needle.lower() in query:
                return list(results)
        return []

    async def _search(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization", "") != f"Bearer {self.key}":
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid "
                                                 "API key."}}, status=401)
        body = await request.json()
        self.requests.append(body)
        results = self._answer(body)[: int(body.get("max_results") or 5)]
        out = [{"title": r.get("title", ""), "url": r["url"], "content": r.get("content", ""),
                "score": r.get("score", 0.5), "raw_content": None} for r in results]
        return web.json_response({"query": body.get("query"), "follow_up_questions": None,
                                  "answer": None, "images": [], "results": out,
                                  "response_time": 0.01})
