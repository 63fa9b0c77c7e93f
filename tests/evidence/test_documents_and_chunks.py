"""Reading documents of every supported kind, and cutting them into traceable chunks."""

from __future__ import annotations

import itertools

import pytest
from tests.evidence.conftest import write_pdf

from assay.errors import InputError
from assay.evidence import chunk_document, read_document, read_documents


def test_markdown_is_read_as_is_with_its_heading_as_title(tmp_path):
    (tmp_path / "a.md").write_text("# Bee stings\n\nScrape it out.\n", encoding="utf-8")
    doc = read_document(tmp_path / "a.md")
    assert (doc.kind, doc.title, doc.text) == ("markdown", "Bee stings", "# Bee stings\n\nScrape it out.\n")


def test_html_keeps_visible_text_only_one_paragraph_per_block(sample_docs):
    doc = read_document(sample_docs / "metformin.html")
    assert doc.title == "Metformin for type 2 diabetes"
    assert "console.log" not in doc.text and "font-family" not in doc.text
    paragraphs = doc.text.split("\n\n")
    assert paragraphs[:2] == ["Metformin for type 2 diabetes", ("Written for the Assay sample from "
                              "public guidance (NHS, NICE guideline NG28); not medical advice.")]


def test_pdf_pages_are_extracted_with_pypdf(tmp_path):
    path = write_pdf(tmp_path / "guide.pdf", ["Adults need 150 minutes of activity a week.",
                                              "Children need 60 minutes a day."])
    doc = read_document(path)
    assert doc.kind == "pdf"
    assert "150 minutes of activity" in doc.text and "60 minutes a day" in doc.text
    assert doc.text.index("150") < doc.text.index("60 minutes")


def test_a_folder_is_read_recursively_with_ids_relative_to_it(sample_docs):
    docs = read_documents([sample_docs])
    assert [d.id for d in docs] == ["fever-in-children.md", "high-blood-pressure.md",
                                    "insect-stings.md", "low-back-pain.txt", "metformin.html"]


def test_missing_and_unsupported_files_are_named_in_one_error(tmp_path):
    (tmp_path / "data.csv").write_text("a,b", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_documents([tmp_path / "nope.md", tmp_path / "data.csv"])
    assert [str(i) for i in info.value.issues] == [
        f"{tmp_path / 'nope.md'}: no such file or folder",
        f"{tmp_path / 'data.csv'}: unsupported document type (use .md, .txt, .html or .pdf)"]


def test_a_broken_pdf_is_a_located_input_error(tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    with pytest.raises(InputError, match="bad.pdf: unreadable PDF"):
        read_document(tmp_path / "bad.pdf")


def test_every_chunk_is_the_exact_source_span_and_ids_are_stable(sample_docs):
    for doc in read_documents([sample_docs]):
        chunks = chunk_document(doc, max_chars=300)
        assert [c.id for c in chunks] == [f"{doc.id}#{i}" for i in range(len(chunks))]
        assert all(doc.text[c.start:c.end] == c.text for c in chunks)
        assert all(len(c.text) <= 300 for c in chunks)
        assert chunk_document(doc, max_chars=300) == chunks


def test_chunks_cover_every_paragraph_in_order(sample_docs):
    doc = read_document(sample_docs / "insect-stings.md")
    chunks = chunk_document(doc, max_chars=400)
    joined = " ".join(c.text for c in chunks).split()
    assert joined == doc.text.split()
    assert all(a.end <= b.start for a, b in itertools.pairwise(chunks))


def test_kb_search_offsets_of_an_html_chunk_point_into_the_source_file(tmp_path):
    """Issue 30, point 6: for HTML, `assay kb search` gave offsets into the extracted text,
    which point at markup in the file; they now span the chunk's text in the file itself."""
    import json
    import re
    from pathlib import Path

    from typer.testing import CliRunner

    from assay.cli import app

    html = Path(__file__).parents[2] / "examples" / "generate" / "docs" / "metformin.html"
    runner = CliRunner()
    built = runner.invoke(app, ["kb", "build", str(html), "--out", str(tmp_path / "kb")])
    assert built.exit_code == 0, built.output
    found = runner.invoke(app, ["kb", "search", str(tmp_path / "kb"), "metformin kidney function",
                                "--json", "-k", "3"])
    assert found.exit_code == 0, found.output
    source = html.read_text(encoding="utf-8")
    for line in found.output.splitlines():
        hit = json.loads(line)
        span = source[hit["start"]:hit["end"]]
        visible = " ".join(re.sub(r"<[^>]+>", " ", span).split())
        # the span starts and ends on the chunk's own text, markup only in between
        assert span.startswith(hit["text"].split()[0])
        assert span.endswith(hit["text"].split()[-1][-3:])
        assert visible.replace("&amp;", "&").split()[:5] == hit["text"].split()[:5]
