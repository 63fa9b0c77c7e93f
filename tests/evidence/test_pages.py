"""Issue 30, point 7: web evidence with page text. Pages are served over loopback HTTP by an
aiohttp app; Trafilatura extracts their main text, bounded in bytes and seconds, and a
generation job fetches each page once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiohttp import web

from assay.evidence import TavilySearch
from assay.evidence.pages import PageLimits, fetch_pages
from assay.generate import agenerate
from assay.testing import FakeSearchServer

# The paper's kind of source page (NHS-style patient information), with the boilerplate real
# pages carry around the article.
ARTICLE = """<html><head><title>High blood pressure - NHS</title>
<script>var tracking = "do not extract";</script></head><body>
<nav><a href="/">Home</a> | <a href="/conditions">Health A to Z</a> | Cookie settings</nav>
<main><article><h1>High blood pressure (hypertension)</h1>
<p>High blood pressure is a reading of 140/90mmHg or higher when measured at a clinic, or an
average of 135/85mmHg or higher at home. One high reading is not a diagnosis: it should be
confirmed with home or ambulatory monitoring.</p>
<p>Call 999 if your blood pressure is 180/120mmHg or higher and you have chest pain,
shortness of breath, changes in your vision or confusion.</p>
<table><tr><th>Reading</th><th>Meaning</th></tr>
<tr><td>below 120/80</td><td>healthy</td></tr><tr><td>140/90 or higher</td><td>high</td></tr>
</table></article></main>
<footer>Page last reviewed: 2024. NHS website privacy policy.</footer></body></html>"""


SAMPLE_STAGES = Path(__file__).parents[2] / "examples" / "generate" / "stages.yaml"
served: list[str] = []


@pytest.fixture
def sample_stages() -> Path:
    return SAMPLE_STAGES


@pytest.fixture
async def pages():
    served.clear()
    async def article(request):
        served.append(request.path)
        return web.Response(text=ARTICLE, content_type="text/html")

    async def huge(request):
        return web.Response(text="<p>" + "x" * 300_000 + "</p>", content_type="text/html")

    async def slow(request):
        await asyncio.sleep(1.2)
        return web.Response(text=ARTICLE, content_type="text/html")

    async def image(request):
        return web.Response(body=b"\x89PNG\r\n", content_type="image/png")

    async def long_article(request):
        words = " ".join(f"Paracetamol dose note {i}." for i in range(2000))
        return web.Response(text=f"<html><body><article><p>{words}</p></article></body></html>",
                            content_type="text/html")

    app = web.Application()
    app.router.add_get("/bp", article)
    app.router.add_get("/huge", huge)
    app.router.add_get("/slow", slow)
    app.router.add_get("/chart.png", image)
    app.router.add_get("/long", long_article)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_a_page_main_text_is_extracted_without_its_boilerplate(pages):
    [page] = await fetch_pages([f"{pages}/bp"])
    assert not page.error
    assert "Call 999 if your blood pressure is 180/120mmHg" in page.text
    assert "140/90 or higher" in page.text  # the table is kept
    assert "Cookie settings" not in page.text and "tracking" not in page.text


async def test_page_text_is_capped_at_5000_characters(pages):
    [page] = await fetch_pages([f"{pages}/long"])
    assert len(page.text) == 5000 and page.text.startswith("Paracetamol dose note 0.")


async def test_a_page_over_the_byte_bound_is_refused(pages):
    [page] = await fetch_pages([f"{pages}/huge"], PageLimits(max_bytes=100_000))
    assert page.text == "" and page.error.startswith("page over 100000 bytes")


async def test_a_page_slower_than_the_time_bound_is_given_up(pages):
    started = time.monotonic()
    [page] = await fetch_pages([f"{pages}/slow"], PageLimits(timeout_s=0.3))
    assert page.error == "no complete page within 0.3 s"
    assert time.monotonic() - started < 1.0


async def test_pages_neither_html_nor_pdf_and_missing_pages_have_no_text(pages):
    image, missing = await fetch_pages([f"{pages}/chart.png", f"{pages}/gone"])
    assert (image.text, image.error) == ("", "not an HTML or PDF page (image/png)")
    assert (missing.text, missing.error) == ("", "HTTP 404")


async def test_a_generation_job_cites_the_page_text_and_fetches_it_once(
        pages, serve, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    snippet = "High blood pressure: symptoms, causes and treatment."
    hit = {"title": "High blood pressure - NHS", "url": f"{pages}/bp", "content": snippet}
    query = "My blood pressure was 150/95 at the pharmacy today. Is that dangerous?"
    async with FakeSearchServer(results={"*": [hit]}) as search_server:
        web_search = TavilySearch(api_key=search_server.key, base_url=search_server.base_url)
        spec = f"openai-compatible:fake@{server.base_url}"
        await agenerate(query, model=spec, search=web_search, out=tmp_path / "o.jsonl")
        await agenerate(query, model=spec, search=web_search, out=tmp_path / "o.jsonl")
    [synthesis] = [r for r in server.requests if r["stage"] == "synthesize_evidence"]
    prompt = "\n".join(m["content"] for m in synthesis["body"]["messages"])
    assert "Call 999 if your blood pressure is 180/120mmHg" in prompt and snippet not in prompt
    assert served == ["/bp"]  # once for the job's 3 searches, and not again on resume


async def test_a_page_that_fails_keeps_the_snippet_and_says_so(
        pages, serve, sample_stages, tmp_path):
    server = await serve(stages=sample_stages)
    snippet = ("A clinic reading of 140/90 or higher may be high blood pressure. A reading of "
               "180/120 or higher with chest pain needs emergency services.")
    hit = {"title": "BP chart", "url": f"{pages}/chart.png", "content": snippet}
    query = "My blood pressure was 150/95 at the pharmacy today. Is that dangerous?"
    async with FakeSearchServer(results={"*": [hit]}) as search_server:
        web_search = TavilySearch(api_key=search_server.key, base_url=search_server.base_url)
        result = await agenerate(query, model=f"openai-compatible:fake@{server.base_url}",
                                 search=web_search, out=tmp_path / "o.jsonl")
    [record] = result.records.values()
    assert (f"web page {pages}/chart.png: not an HTML or PDF page (image/png), kept the "
            "search snippet") in record["notes"]
