"""The text of a web search hit's page, as the seed 000 paper gets it: fetch the page and
extract its main text with Trafilatura (tables kept), at most 5,000 characters per source.

Bounded: a page is read for at most ``timeout_s`` seconds (connect, headers and body
together) and ``max_bytes`` bytes; a larger or slower page, a reply that is neither HTML nor
PDF, an HTTP error or a page with no extractable text gives a :class:`PageText` with an
``error`` and no text, and the caller keeps the search snippet (and says so). Only
``http``/``https`` URLs are fetched; no cookie, no credential is sent.

* **Encoding**: the bytes are decoded with the charset the server declares, else the one the
  page declares (``<meta charset>``, ``<meta http-equiv="Content-Type">``, an XML declaration
  or a byte-order mark), else UTF-8 when the bytes are valid UTF-8, else windows-1252. As
  browsers do (WHATWG Encoding), ``latin-1``/``iso-8859-1``/``ascii`` mean windows-1252. So
  "15 µg per kg at 38 °C" keeps its units on a page that names its charset only in a meta tag.
* **PDF** (many guidelines are PDFs): the text of its pages, read with pypdf as
  :mod:`assay.evidence.documents` reads local PDFs.
* **Where the page ended up**: ``final_url`` is the URL after redirects, so the caller can
  tell one article reached twice.

Trafilatura is the optional ``pages`` extra (``pip install 'assay[pages]'``):
:func:`require_page_text` says so before anything is fetched; a page fetched without it is an
error that :attr:`PageText.lasting` marks as the environment's, not the page's (never cached).

Example::

    pages = await fetch_pages(["https://www.nhs.uk/conditions/fever-in-children/"])
    pages[0].text[:80], pages[0].error
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from assay.errors import ConfigError

MAX_PAGE_CHARS = 5000  # [R] the authors' per-source cap on scraped text
MAX_PAGE_BYTES = 2_000_000
PAGE_TIMEOUT_S = 10.0
PAGE_CONCURRENCY = 4
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_PDF_TYPES = ("application/pdf", "application/x-pdf")
MISSING_EXTRA = "page text needs Trafilatura: pip install 'assay[pages]'"
# WHATWG Encoding: labels that browsers decode as windows-1252
_AS_WINDOWS_1252 = {"latin1", "latin-1", "iso-8859-1", "iso8859-1", "iso_8859-1", "l1",
                    "ascii", "us-ascii", "cp819", "ibm819", "iso-ir-100", "x-cp1252"}
_DECLARED = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"""
                       rb"""|<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


@dataclass(frozen=True)
class PageLimits:
    """How much of the web one page may cost: bytes read, seconds, characters kept."""

    max_bytes: int = MAX_PAGE_BYTES
    timeout_s: float = PAGE_TIMEOUT_S
    max_chars: int = MAX_PAGE_CHARS


@dataclass(frozen=True)
class PageText:
    """A page's extracted text (at most ``max_chars``), or why there is none.

    ``final_url`` is where redirects ended (empty when nothing was fetched); ``lasting`` is
    False for an error of this machine rather than of the page (the ``pages`` extra missing),
    which a cache must not keep.
    """

    url: str
    text: str = ""
    error: str = ""
    final_url: str = ""
    lasting: bool = True

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def page_text_available() -> bool:
    """Whether Trafilatura (the ``pages`` extra) can be imported."""
    try:
        import trafilatura  # noqa: F401
    except ImportError:
        return False
    return True


def require_page_text() -> None:
    """Raise :class:`ConfigError` before any call when page text is asked for and the
    ``pages`` extra is missing (rather than fall back to snippets without a word)."""
    if not page_text_available():
        raise ConfigError(f"{MISSING_EXTRA}, or turn page text off (--no-pages, "
                          "GenerateConfig(pages=False)) to keep the search snippets")


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


def page_encoding(body: bytes, declared: str | None) -> str:
    """The codec to decode a page's ``body`` with (see the module docstring); ``declared`` is
    the HTTP header's charset, if any.

    >>> page_encoding(b'<meta charset="iso-8859-1"><p>15 \\xb5g at 38 \\xb0C</p>', None)
    'cp1252'
    >>> page_encoding("<p>15 µg</p>".encode(), None)
    'utf-8'
    >>> page_encoding(b"<p>38 \\xb0C</p>", None)
    'cp1252'
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    for label in (declared, _declared_in_page(body)):
        codec = _codec(label)
        if codec is not None:
            return codec
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def _declared_in_page(body: bytes) -> str | None:
    match = _DECLARED.search(body[:4096])
    if match is None:
        return None
    return (match.group(1) or match.group(2)).decode("ascii", errors="replace")


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _AS_WINDOWS_1252:
        return "cp1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return "utf-8" if name.startswith("utf-16") else name  # a meta tag in UTF-16 is a lie


async def fetch_page(session: Any, url: str, limits: PageLimits = PageLimits()) -> PageText:
    """One page's text within ``limits`` (see the module docstring); never raises for the
    page's own trouble, which is the returned ``error``."""
    import aiohttp

    if not url.lower().startswith(("http://", "https://")):
        return PageText(url, error="not an http(s) URL")
    if not page_text_available():  # fail before fetching: this machine's error, not the page's
        return PageText(url, error=MISSING_EXTRA, lasting=False)
    try:
        async with asyncio.timeout(limits.timeout_s), session.get(
                url, allow_redirects=True, max_redirects=5) as response:
            final = str(response.url)
            if response.status != 200:
                return PageText(url, error=f"HTTP {response.status}", final_url=final)
            kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if kind and kind not in _HTML_TYPES + _PDF_TYPES:
                return PageText(url, error=f"not an HTML or PDF page ({kind})", final_url=final)
            declared = response.content_length
            if declared is not None and declared > limits.max_bytes:
                return PageText(url, error=f"page over {limits.max_bytes} bytes ({declared})",
                                final_url=final)
            body = bytearray()
            async for block in response.content.iter_chunked(1 << 16):
                body += block
                if len(body) > limits.max_bytes:
                    return PageText(url, error=f"page over {limits.max_bytes} bytes",
                                    final_url=final)
            charset = response.charset
    except TimeoutError:
        return PageText(url, error=f"no complete page within {limits.timeout_s:g} s")
    except (aiohttp.ClientError, ValueError) as exc:
        return PageText(url, error=f"cannot fetch ({type(exc).__name__})")
    data = bytes(body)
    if kind in _PDF_TYPES or (not kind and data.startswith(b"%PDF")):
        return await asyncio.to_thread(_pdf_page, url, final, data, limits.max_chars)
    html = data.decode(page_encoding(data, charset), errors="replace")
    text = await asyncio.to_thread(extract_main_text, html, limits.max_chars)
    return PageText(url, text, final_url=final) if text else PageText(
        url, error="no main text in the page", final_url=final)


def _pdf_page(url: str, final: str, data: bytes, max_chars: int) -> PageText:
    from assay.evidence.documents import pdf_text

    try:
        _, text = pdf_text(data)
    except ValueError as exc:
        return PageText(url, error=f"unreadable PDF ({exc})", final_url=final)
    text = text.strip()[:max_chars]
    return PageText(url, text, final_url=final) if text else PageText(
        url, error="no text in the PDF (a scanned document?)", final_url=final)


async def fetch_pages(urls: Sequence[str], limits: PageLimits = PageLimits(),
                      concurrency: int = PAGE_CONCURRENCY) -> list[PageText]:
    """Every URL's :class:`PageText`, in order, ``concurrency`` pages at a time."""
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    headers = {"User-Agent": "assay (evidence retrieval)",
               "Accept": "text/html, application/xhtml+xml, application/pdf;q=0.9"}

    async def one(session: aiohttp.ClientSession, url: str) -> PageText:
        async with gate:
            return await fetch_page(session, url, limits)

    async with aiohttp.ClientSession(headers=headers, cookie_jar=aiohttp.DummyCookieJar(),
                                     trust_env=False) as session:
        return list(await asyncio.gather(*(one(session, url) for url in urls)))
