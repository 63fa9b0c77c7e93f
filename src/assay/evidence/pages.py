"""The text of a web search hit's page, as the seed 000 paper gets it: fetch the page and
extract its main text with Trafilatura (tables kept), at most 5,000 characters per source.

Bounded: a page is read for at most ``timeout_s`` seconds (connect, headers and body
together) and ``max_bytes`` bytes; a larger or slower page, a non-HTML reply, an HTTP error or
a page with no extractable text gives a :class:`PageText` with an ``error`` and no text, and the
caller keeps the search snippet (and says so). Only ``http``/``https`` URLs are fetched; no
cookie, no credential is sent. Trafilatura is the optional ``pages`` extra (``pip install
'assay[pages]'``): without it every page is an error naming the extra.

Example::

    pages = await fetch_pages(["https://www.nhs.uk/conditions/fever-in-children/"])
    pages[0].text[:80], pages[0].error
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

MAX_PAGE_CHARS = 5000  # [R] the authors' per-source cap on scraped text
MAX_PAGE_BYTES = 2_000_000
PAGE_TIMEOUT_S = 10.0
PAGE_CONCURRENCY = 4
_HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class PageLimits:
    """How much of the web one page may cost: bytes read, seconds, characters kept."""

    max_bytes: int = MAX_PAGE_BYTES
    timeout_s: float = PAGE_TIMEOUT_S
    max_chars: int = MAX_PAGE_CHARS


@dataclass(frozen=True)
class PageText:
    """A page's extracted text (at most ``max_chars``), or why there is none."""

    url: str
    text: str = ""
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def extract_main_text(html: str, max_chars: int = MAX_PAGE_CHARS) -> str:
    """The main text of an HTML page (Trafilatura: boilerplate, menus and scripts dropped,
    tables kept), cut at ``max_chars``; ``""`` if it finds none.

    >>> html = ("<html><body><nav>Home | About</nav><article><h1>Fever in children</h1>"
    ...         "<p>Call 999 if your child has a stiff neck or a rash that does not fade when "
    ...         "you press a glass against it. Give paracetamol from 2 months of age.</p>"
    ...         "</article></body></html>")
    >>> text = extract_main_text(html)
    >>> "stiff neck" in text and "Home | About" not in text
    True
    """
    import trafilatura

    text = trafilatura.extract(html, include_tables=True, include_comments=False,
                               include_images=False, include_links=False, deduplicate=False)
    return (text or "").strip()[:max_chars]


async def fetch_page(session: Any, url: str, limits: PageLimits = PageLimits()) -> PageText:
    """One page's text within ``limits`` (see the module docstring); never raises for the
    page's own trouble, which is the returned ``error``."""
    import aiohttp

    if not url.lower().startswith(("http://", "https://")):
        return PageText(url, error="not an http(s) URL")
    try:
        import trafilatura  # noqa: F401  (fail before fetching if the extra is missing)
    except ImportError:
        return PageText(url, error="page text needs Trafilatura: pip install 'assay[pages]'")
    try:
        async with asyncio.timeout(limits.timeout_s), session.get(
                url, allow_redirects=True, max_redirects=5) as response:
            if response.status != 200:
                return PageText(url, error=f"HTTP {response.status}")
            kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if kind and kind not in _HTML_TYPES:
                return PageText(url, error=f"not an HTML page ({kind})")
            declared = response.content_length
            if declared is not None and declared > limits.max_bytes:
                return PageText(url, error=f"page over {limits.max_bytes} bytes ({declared})")
            body = bytearray()
            async for block in response.content.iter_chunked(1 << 16):
                body += block
                if len(body) > limits.max_bytes:
                    return PageText(url, error=f"page over {limits.max_bytes} bytes")
            charset = response.charset or "utf-8"
    except TimeoutError:
        return PageText(url, error=f"no complete page within {limits.timeout_s:g} s")
    except (aiohttp.ClientError, ValueError) as exc:
        return PageText(url, error=f"cannot fetch ({type(exc).__name__})")
    html = bytes(body).decode(charset, errors="replace")
    text = await asyncio.to_thread(extract_main_text, html, limits.max_chars)
    return PageText(url, text) if text else PageText(url, error="no main text in the page")


async def fetch_pages(urls: Sequence[str], limits: PageLimits = PageLimits(),
                      concurrency: int = PAGE_CONCURRENCY) -> list[PageText]:
    """Every URL's :class:`PageText`, in order, ``concurrency`` pages at a time."""
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    headers = {"User-Agent": "assay (evidence retrieval)", "Accept": "text/html"}

    async def one(session: aiohttp.ClientSession, url: str) -> PageText:
        async with gate:
            return await fetch_page(session, url, limits)

    async with aiohttp.ClientSession(headers=headers, cookie_jar=aiohttp.DummyCookieJar(),
                                     trust_env=False) as session:
        return list(await asyncio.gather(*(one(session, url) for url in urls)))
