"""Issue 43, point 7: web evidence that keeps its clinical units. Pages in latin-1 and
windows-1252 that name their charset only in a meta tag keep µg and °C; page text without its
library fails before the first call and is never cached; a query's pages are fetched together,
4 at a time; one article reached twice (a redirect, a mirror) is one source; a PDF guideline
gives its text. Pages are served over loopback by an aiohttp app."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from assay.errors import ConfigError
from assay.evidence import TavilySearch
from assay.evidence.pages import fetch_pages
from assay.generate import agenerate
from assay.testing import FakeSearchServer

SAMPLE = Path(__file__).parents[2] / "examples" / "generate"
QUERY = "My 2-month-old has a fever of 38.2. What should I do?"
DOSE = "Give 15 µg per kg, and see a doctor at 38 °C or above"

# A paediatric dosing page as older hospital sites write it: the charset only in the page.
LATIN1 = f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">
<title>Fever in infants</title></head><body><nav>Home | Contact</nav><article>
<h1>Fever in infants under 3 months</h1><p>{DOSE}. A baby under 3 months with a fever needs
to be seen the same day.</p><p>Never give aspirin to children under 16.</p></article>
</body></html>"""
CP1252 = LATIN1.replace('http-equiv="Content-Type" content="text/html; charset=iso-8859-1"',
                        'charset="windows-1252"').replace("Never give", "Don’t give")


def pdf_with_text(text: str) -> bytes:
    """A one-page PDF (Helvetica, WinAnsiEncoding) whose page shows ``text``."""
    stream = b"BT /F1 11 Tf 72 720 Td (" + text.encode("cp1252") + b") Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                b"/Resources << /Font << /F1 5 0 R >> >> >>"),
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               (b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                b"/Encoding /WinAnsiEncoding >>")]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


class Pages:
    """The page server: what it served, and how many pages were in flight at most."""

    def __init__(self, delay: float = 0.0):
        self.delay, self.served, self.in_flight, self.most_in_flight = delay, [], 0, 0

    async def page(self, request: web.Request) -> web.StreamResponse:
        self.served.append(request.path)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        name = request.match_info["name"]
        if name == "old-address":
            raise web.HTTPMovedPermanently("/p/fever")
        if name.endswith(".pdf"):
            return web.Response(body=pdf_with_text(DOSE + "."), content_type="application/pdf")
        if name == "cp1252":
            body = CP1252.encode("cp1252")
        elif name in ("latin1", "fever", "mirror"):  # the mirror serves the same article
            body = LATIN1.encode("latin-1")
        else:  # a distinct article per name
            body = LATIN1.replace("</h1>", f" ({name})</h1>").encode("latin-1")
        return web.Response(body=body, content_type="text/html")  # no charset in the header


@pytest.fixture
async def site():
    pages = Pages()
    app = web.Application()
    app.router.add_get("/p/{name}", pages.page)
    runner = web.AppRunner(app)
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    pages.base = f"http://127.0.0.1:{server._server.sockets[0].getsockname()[1]}"
    yield pages
    await runner.cleanup()


@pytest.mark.parametrize("name", ["latin1", "cp1252"])
async def test_a_page_with_its_charset_only_in_a_meta_tag_keeps_its_units(site, name):
    [page] = await fetch_pages([f"{site.base}/p/{name}"])
    assert DOSE in page.text and "\ufffd" not in page.text
    assert ("Don’t give aspirin" if name == "cp1252" else "Never give aspirin") in page.text


async def test_a_pdf_guideline_gives_its_text(site):
    [page] = await fetch_pages([f"{site.base}/p/fever-guideline.pdf"])
    assert not page.error and DOSE in page.text


async def test_a_redirect_records_where_the_page_ended(site):
    [page] = await fetch_pages([f"{site.base}/p/old-address"])
    assert page.final_url == f"{site.base}/p/fever" and DOSE in page.text


def stages_with_route(queries: list[str]) -> dict:
    stages = yaml.safe_load((SAMPLE / "stages.yaml").read_text(encoding="utf-8"))
    stages["route"]["by_prompt"][0][1] = {"intent": "Safety", "queries": queries}
    return stages


async def generate(serve, stages, results, tmp_path, **settings):
    server = await serve(stages=stages)
    async with FakeSearchServer(results=results) as search:
        web_search = TavilySearch(api_key=search.key, base_url=search.base_url)
        result = await agenerate(QUERY, model=f"openai-compatible:fake@{server.base_url}",
                                 search=web_search, out=tmp_path / "o.jsonl", **settings)
    synthesis = [r for r in server.requests if r["stage"] == "synthesize_evidence"]
    return result, server, "\n".join(m["content"] for r in synthesis
                                     for m in r["body"]["messages"])


async def test_a_querys_pages_are_fetched_together_four_at_a_time(serve, site, tmp_path):
    """5 search queries, 2 slow pages each: fetched 4 at a time (the issue saw 2, one query's
    hits at a time), never more."""
    site.delay = 0.3
    queries = [f"fever infant question {i}" for i in range(5)]

    def hits(body):
        i = body["query"].rsplit(" ", 1)[-1]
        return [{"title": f"Fever {i}-{j}", "url": f"{site.base}/p/q{i}-{j}",
                 "content": "fever"} for j in range(2)]

    result, _, _ = await generate(serve, stages_with_route(queries), hits, tmp_path)
    assert result.status == "complete"
    assert len(site.served) == 10 and site.most_in_flight == 4


async def test_one_article_reached_by_a_redirect_directly_and_on_a_mirror_is_one_source(
        serve, site, tmp_path):
    hits = [{"title": "Fever (old link)", "url": f"{site.base}/p/old-address", "content": "a"},
            {"title": "Fever", "url": f"{site.base}/p/fever", "content": "b"},
            {"title": "Fever (mirror)", "url": f"{site.base}/p/mirror", "content": "c"}]
    result, _, prompt = await generate(serve, stages_with_route(["fever infant"]),
                                       {"*": hits}, tmp_path, web_results=3)
    [record] = result.records.values()
    assert len([e for e in record["evidence"] if e["id"].startswith("web:")]) == 1
    assert prompt.count("Give 15 µg per kg") == 1


async def test_page_text_without_its_library_fails_before_the_first_call(
        serve, site, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # the pages extra not installed
    hits = {"*": [{"title": "Fever", "url": f"{site.base}/p/latin1", "content": "snippet"}]}
    server = await serve(stages=stages_with_route(["fever infant"]))
    async with FakeSearchServer(results=hits) as search:
        web_search = TavilySearch(api_key=search.key, base_url=search.base_url)
        with pytest.raises(ConfigError, match=r"pip install 'assay\[pages\]'.*--no-pages"):
            await agenerate(QUERY, model=f"openai-compatible:fake@{server.base_url}",
                            search=web_search, out=tmp_path / "o.jsonl")
        assert server.requests == [] and search.requests == [] and site.served == []
        snippets = await agenerate(QUERY, model=f"openai-compatible:fake@{server.base_url}",
                                   search=web_search, out=tmp_path / "s.jsonl", pages=False)
    assert snippets.status == "complete"


async def test_a_missing_library_is_never_cached_as_the_pages_result(site, tmp_path,
                                                                      monkeypatch):
    from assay.generate.pipeline import GenerateConfig, Generator
    from assay.jobs import CallStore

    store = CallStore.open(tmp_path / "calls.sqlite")
    generator = Generator(None, web=object(), store=store,  # type: ignore[arg-type]
                          config=GenerateConfig(pages=True))
    url = f"{site.base}/p/latin1"
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # removed after the job started
    [missing] = (await generator._pages([url])).values()
    assert missing.error.startswith("page text needs Trafilatura") and not missing.lasting
    monkeypatch.delitem(sys.modules, "trafilatura")  # installed: the resumed job fetches it
    [page] = (await generator._pages([url])).values()
    assert DOSE in page.text and site.served == ["/p/latin1"]
