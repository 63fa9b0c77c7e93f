"""Reading a user's documents as plain text: Markdown, text, HTML and PDF.

Each file becomes one :class:`Document` whose ``text`` is what chunk offsets point into:
Markdown and text are read as they are (UTF-8), HTML is reduced to its visible text with the
standard library's :class:`html.parser.HTMLParser` (scripts, styles and heads dropped, each
block element a paragraph of its own), and PDF pages are extracted with ``pypdf`` and joined by blank
lines. A document's id is its path relative to the folder it was found under, so the same
tree gives the same ids on every machine.

Example:
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "stings.html").write_text(
    ...     "<html><head><title>Bee stings</title><style>p{}</style></head>"
    ...     "<body><p>Scrape the stinger out.</p><p>Call 911 if the throat swells.</p></body></html>")
    >>> [doc] = read_documents([root])
    >>> doc.id, doc.title, doc.text.split("\\n\\n")
    ('stings.html', 'Bee stings', ['Scrape the stinger out.', 'Call 911 if the throat swells.'])
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

from assay.errors import InputError, Issue

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
            ".html": "html", ".htm": "html", ".pdf": "pdf"}


@dataclass(frozen=True)
class Document:
    """One source document: its id, where it came from, its title and its plain text."""

    id: str
    path: str
    kind: str
    title: str
    text: str
    offsets: tuple[int, ...] | None = None
    """For HTML: where each character of ``text`` is in the source file (its decoded
    characters), so a chunk can be shown in the file itself; None when ``text`` is the file."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def read_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Every supported document under ``paths`` (files or folders, searched recursively), in
    sorted path order. An unreadable or unsupported file given by name is an InputError; files
    of other types inside a folder are skipped."""
    docs: list[Document] = []
    issues: list[Issue] = []
    for given in paths:
        root = Path(given)
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            pairs = [(p, p.relative_to(root).as_posix()) for p in files]
        elif root.is_file():
            if root.suffix.lower() not in SUFFIXES:
                issues.append(Issue(str(root), None, None, "unsupported document type (use .md, "
                                    ".txt, .html or .pdf)"))
                continue
            pairs = [(root, root.name)]
        else:
            issues.append(Issue(str(root), None, None, "no such file or folder"))
            continue
        for path, doc_id in pairs:
            try:
                docs.append(read_document(path, doc_id))
            except InputError as exc:
                issues.extend(exc.issues)
    if issues:
        raise InputError(issues)
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise InputError(Issue(doc.path, None, None, f"two documents share the id {doc.id!r}; "
                                   "give their common parent folder instead"))
        seen.add(doc.id)
    return docs


def read_document(path: str | Path, doc_id: str | None = None) -> Document:
    """One document; its kind comes from the file suffix."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(Issue(str(path), None, None, "unsupported document type"))
    offsets = None
    try:
        if kind == "pdf":
            title, text = _read_pdf(path)
        elif kind == "html":
            title, text, offsets = _read_html(path.read_text(encoding="utf-8"))
        else:
            raw = path.read_text(encoding="utf-8")
            title, text = _markdown_title(raw), raw
    except UnicodeDecodeError as exc:
        raise InputError(Issue(str(path), None, None, f"not UTF-8 text ({exc.reason})")) from None
    except OSError as exc:
        raise InputError(Issue(str(path), None, None, f"cannot read ({exc.strerror})")) from None
    return Document(doc_id or path.name, str(path), kind, title or path.stem, text, offsets)


def _markdown_title(text: str) -> str:
    match = re.search(r"^#\s+(.+)$", text, flags=re.MULTILINE)
    return match.group(1).strip() if match else ""


def _read_pdf(path: Path) -> tuple[str, str]:
    try:
        return pdf_text(path.read_bytes())
    except ValueError as exc:
        raise InputError(Issue(str(path), None, None, f"unreadable PDF ({exc})")) from None


def pdf_text(data: bytes) -> tuple[str, str]:
    """(title, text) of a PDF's bytes: each page's text (pypdf), pages joined by blank lines;
    raises ValueError when the bytes are not a readable PDF."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except (PdfReadError, ValueError) as exc:
        raise ValueError(str(exc)) from None
    return str(title), "\n\n".join(p.strip() for p in pages if p.strip())


_BLOCK = {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
          "section", "article", "header", "footer", "blockquote", "pre", "dd", "dt", "td", "th"}
_HIDDEN = {"script", "style", "head", "noscript", "template", "svg"}


class _TextOf(HTMLParser):
    """Visible text as (character, offset in the source) pairs; entities decoded here (not
    by the parser) so that each character keeps the offset of what it came from."""

    def __init__(self, raw: str) -> None:
        super().__init__(convert_charrefs=False)
        self.chars: list[tuple[str, int]] = []
        self.title: list[str] = []
        self._hidden = 0
        self._in_title = False
        self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", raw)]

    def _here(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self._hidden += 1
        if tag in _BLOCK:
            self.chars.append(("\n", self._here()))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        if tag in _BLOCK:
            self.chars.append(("\n", self._here()))

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            start = self._here()
            self.chars.extend((ch, start + i) for i, ch in enumerate(data))

    def _reference(self, text: str) -> None:
        if self._in_title:
            self.title.append(text)
        elif not self._hidden:
            start = self._here()
            self.chars.extend((ch, start) for ch in text)

    def handle_entityref(self, name: str) -> None:
        self._reference(unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self._reference(unescape(f"&#{name};"))


_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines splits


def _read_html(raw: str) -> tuple[str, str, tuple[int, ...]]:
    """Title, visible text (one paragraph per block, whitespace runs collapsed) and where each
    of its characters is in ``raw``.

    >>> title, text, offsets = _read_html("<p>Rest &amp; fluids.</p>\\n<p>See a  GP.</p>")
    >>> text, [offsets[i] for i in (0, 5, 16)]
    ('Rest & fluids.\\n\\nSee a GP.', [3, 8, 29])
    """
    parser = _TextOf(raw)
    parser.feed(raw)
    parser.close()
    lines: list[list[tuple[str, int]]] = [[]]
    for ch, at in parser.chars:
        if ch in _LINE_BREAKS:
            lines.append([])
        else:
            lines[-1].append((ch, at))
    out: list[tuple[str, int]] = []
    for line in lines:
        words: list[list[tuple[str, int]]] = []
        gap = None  # the offset of the whitespace before the next word
        for ch, at in line:
            if ch.isspace():
                gap = at if gap is None else gap
            else:
                if gap is not None or not words:
                    if words:
                        words[-1].append((" ", gap if gap is not None else at))
                    words.append([])
                words[-1].append((ch, at))
                gap = None
        if not words:
            continue
        if out:
            out.extend([("\n", out[-1][1] + 1), ("\n", out[-1][1] + 1)])
        out.extend(pair for word in words for pair in word)
    text = "".join(ch for ch, _ in out)
    return " ".join("".join(parser.title).split()), text, tuple(at for _, at in out)
