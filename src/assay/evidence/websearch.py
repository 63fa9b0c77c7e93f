"""Web search as a second evidence source: a small interface and a Tavily adapter.

Off by default: retrieval works from the local knowledge base alone, with no key and no
network. ``make_web_search("tavily")`` turns on the adapter for the Tavily Search API (the
service the seed-000 paper used): ``POST {base}/search`` with ``Authorization: Bearer KEY``
and a JSON body ``{query, search_depth, max_results, include_domains}``; the reply's
``results`` are ``{title, url, content, score}``. The key is read from ``TAVILY_API_KEY`` only
and is never logged or stored; ``tavily@URL`` (or ``TAVILY_BASE_URL``) points the adapter at
another server, such as :class:`assay.testing.FakeSearchServer` on loopback.

By default searches are restricted to the paper's authoritative domains (Table 4,
:data:`AUTHORITATIVE_DOMAINS`). Any class with ``name`` and ``async search(query, *,
max_results)`` returning :class:`SearchResult` s can stand in for the adapter.

Example::

    search = make_web_search("tavily")           # needs TAVILY_API_KEY
    results = await search.search("aspirin dose children", max_results=2)
    results[0].url, results[0].content[:80]
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from assay.errors import AssayError, ConfigError
from assay.evidence.chunking import Chunk
from assay.judges.secrets import Secret, redact

AUTHORITATIVE_DOMAINS = (
    "cdc.gov", "who.int", "nice.org.uk", "merckmanuals.com",  # guidelines and public health
    "drugs.com", "bnf.nice.org.uk",  # pharmacological references
    "mayoclinic.org", "clevelandclinic.org", "nhs.uk",  # patient education
    "ncbi.nlm.nih.gov",  # biomedical research
)
MAX_SOURCE_CHARS = 5000  # [R] per-source cap on scraped text
TAVILY_URL = "https://api.tavily.com"


class SearchError(AssayError):
    """A web search that failed (refused key, quota, unreachable server); no secret inside."""


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    content: str  # the search engine's snippet
    score: float = 0.0
    page_text: str = ""  # the page's main text (assay.evidence.pages), when it was fetched
    page_error: str = ""  # why there is no page text, when fetching it failed
    final_url: str = ""  # where the page's redirects ended, when it was fetched

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_chunk(self) -> Chunk:
        """The result as evidence: id ``web:HASH`` of its URL, its page text (else the
        snippet) capped at 5,000 chars."""
        text = (self.page_text or self.content)[:MAX_SOURCE_CHARS]
        key = "web:" + hashlib.sha256(self.url.encode()).hexdigest()[:12]
        return Chunk(key, key, self.title, self.url, 0, len(text), text)


class WebSearch(Protocol):
    name: str

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]: ...


class TavilySearch:
    """The Tavily Search API over aiohttp; see the module docstring."""

    name = "tavily"

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None,
                 search_depth: str = "basic",
                 include_domains: tuple[str, ...] | None = AUTHORITATIVE_DOMAINS,
                 timeout_s: float = 30.0):
        key = api_key or os.environ.get("TAVILY_API_KEY", "")
        if not key:
            raise ConfigError("web search 'tavily' needs an API key: set TAVILY_API_KEY")
        self._key = Secret(key)
        self.base_url = (base_url or os.environ.get("TAVILY_BASE_URL") or TAVILY_URL).rstrip("/")
        self.search_depth = search_depth
        self.include_domains = tuple(include_domains or ())
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"TavilySearch(base_url={self.base_url!r})"

    def body(self, query: str, max_results: int) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "search_depth": self.search_depth,
                                "max_results": max_results}
        if self.include_domains:
            body["include_domains"] = list(self.include_domains)
        return body

    async def search(self, query: str, *, max_results: int = 2) -> list[SearchResult]:
        import aiohttp

        headers = {"Authorization": f"Bearer {self._key.reveal()}",
                   "Content-Type": "application/json"}
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session, session.post(
                    f"{self.base_url}/search", json=self.body(query, max_results),
                    headers=headers) as response:
                text = await response.text()
                if response.status != 200:
                    raise SearchError(f"tavily: HTTP {response.status}: "
                                      f"{_reason(response.status)} {redact(text[:200])}".strip())
                data = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SearchError(f"tavily: cannot reach {self.base_url} ({redact(str(exc))})") from None
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SearchError("tavily: the reply has no 'results' list")
        return [SearchResult(str(r.get("title") or r.get("url") or ""), str(r.get("url") or ""),
                             str(r.get("content") or ""), float(r.get("score") or 0.0))
                for r in results if isinstance(r, dict) and r.get("url")]


def _reason(status: int) -> str:
    return {400: "bad request", 401: "the API key was refused", 429: "rate or usage limit",
            432: "plan limit exceeded", 433: "pay-as-you-go limit exceeded"}.get(status, "")


def make_web_search(name: str | None) -> WebSearch | None:
    """``None``/``"none"``: no web search. ``"tavily"`` or ``"tavily@URL"``: the Tavily adapter."""
    if name is None or name in ("", "none", "off"):
        return None
    adapter, _, url = name.partition("@")
    if adapter == "tavily":
        return TavilySearch(base_url=url or None)
    raise ConfigError(f"unknown web search adapter {adapter!r} (known: tavily, none)")


def dedupe_by_url(results: list[SearchResult]) -> list[SearchResult]:
    """Results in order, each URL once ([R]: a high-diversity pool de-duplicated by URL)."""
    seen: set[str] = set()
    out = []
    for r in results:
        if r.url not in seen:
            seen.add(r.url)
            out.append(r)
    return out
