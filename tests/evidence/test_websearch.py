"""The Tavily adapter against a fake Tavily server on loopback: request shape, key handling,
errors without secrets, and the adapter switched off by default."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.evidence import AUTHORITATIVE_DOMAINS, SearchError, TavilySearch, make_web_search
from assay.testing import FakeSearchServer

NHS = {"title": "Bee and wasp stings - NHS", "url": "https://www.nhs.uk/stings/",
       "content": "Scrape the sting out sideways.", "score": 0.9}


async def test_a_search_posts_the_tavily_body_with_a_bearer_key():
    async with FakeSearchServer(results={"sting": [NHS, NHS]}) as server:
        search = TavilySearch(api_key=server.key, base_url=server.base_url)
        results = await search.search("bee sting site:nhs.uk", max_results=2)
    [body] = server.requests
    assert body == {"query": "bee sting site:nhs.uk", "search_depth": "basic", "max_results": 2,
                    "include_domains": list(AUTHORITATIVE_DOMAINS)}
    assert [(r.title, r.url, r.content, r.score) for r in results] == [
        (NHS["title"], NHS["url"], NHS["content"], 0.9)] * 2


async def test_a_result_becomes_evidence_with_a_stable_web_id():
    async with FakeSearchServer(results={"*": [NHS]}) as server:
        [result] = await TavilySearch(api_key=server.key, base_url=server.base_url).search("x")
    chunk = result.as_chunk()
    assert chunk.id.startswith("web:") and chunk.id == result.as_chunk().id
    assert (chunk.source, chunk.text) == (NHS["url"], NHS["content"])


async def test_a_refused_key_is_a_search_error_that_never_shows_the_key():
    async with FakeSearchServer() as server:
        search = TavilySearch(api_key="tvly-wrong-secret-123", base_url=server.base_url)
        with pytest.raises(SearchError) as info:
            await search.search("x")
    assert "HTTP 401" in str(info.value) and "API key was refused" in str(info.value)
    assert "tvly-wrong-secret-123" not in str(info.value) + repr(search)


async def test_an_unreachable_server_is_a_search_error():
    search = TavilySearch(api_key="tvly-k-1234", base_url="http://127.0.0.1:9")
    with pytest.raises(SearchError, match="cannot reach http://127.0.0.1:9"):
        await search.search("x")


def test_the_key_comes_from_the_environment_only(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set TAVILY_API_KEY"):
        make_web_search("tavily")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-from-env-1234")
    search = make_web_search("tavily@http://127.0.0.1:1234")
    assert isinstance(search, TavilySearch) and search.base_url == "http://127.0.0.1:1234"


def test_web_search_is_off_by_default_and_unknown_adapters_are_refused():
    assert make_web_search(None) is None and make_web_search("none") is None
    with pytest.raises(ConfigError, match="unknown web search adapter 'bing'"):
        make_web_search("bing")
