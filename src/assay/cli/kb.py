"""``assay kb build|search``: a local knowledge base of documents (the evidence of ``assay
generate``)."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

kb_app = typer.Typer(help="Build and search a local knowledge base of documents.",
                     no_args_is_help=True)
app.add_typer(kb_app, name="kb")


@kb_app.command("build")
def kb_build(
    docs: list[Path] = typer.Argument(..., help="Documents or folders (.md, .txt, .html, .pdf)."),
    out: Path = typer.Option(..., "--out", "-o", help="Knowledge-base folder to write."),
    chunk_chars: int = typer.Option(1000, "--chunk-chars", min=20, help="Largest chunk size."),
    dense: bool = typer.Option(False, "--dense", help="Also embed chunks (bundled MiniLM) for "
                               "hybrid retrieval."),
    force: bool = typer.Option(False, "--force", help="Rebuild even if nothing changed."),
) -> None:
    """Index documents into KB (reused as it is when the documents and settings are unchanged)."""
    from assay.cli.output import fail, stdout
    from assay.errors import AssayError
    from assay.evidence import build_kb

    try:
        kb = build_kb(docs, out, max_chars=chunk_chars, dense=dense, force=force)
    except (AssayError, OSError) as exc:
        fail(exc)
    state = "unchanged, reused" if kb.reused else "built"
    stdout().print(f"{out}: {len(kb.manifest['documents'])} documents, {len(kb.chunks)} chunks "
                   f"({state}; dense: {kb.dense_model or 'no'})", highlight=False)


@kb_app.command("search")
def kb_search(
    kb: Path = typer.Argument(..., help="Knowledge-base folder."),
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(5, "-k", min=1, help="How many chunks."),
    mode: str = typer.Option("auto", "--mode", help="auto | bm25 | dense | hybrid."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines."),
) -> None:
    """Show the chunks that best match QUERY, with their ids and their character offsets in
    the source file (for HTML, the span of the markup the chunk's text came from)."""
    import json

    from assay.cli.output import fail, stdout
    from assay.errors import AssayError
    from assay.evidence import KnowledgeBase

    try:
        hits = KnowledgeBase.load(kb).search(query, k=k, mode=mode)
    except (AssayError, ValueError) as exc:
        fail(exc)
    console = stdout()
    for rank, hit in enumerate(hits, 1):
        c = hit.chunk
        if as_json:
            start, end = c.source_span
            print(json.dumps({"rank": rank, "id": c.id, "score": hit.score, "source": c.source,
                              "start": start, "end": end, "bm25_rank": hit.bm25_rank,
                              "dense_rank": hit.dense_rank, "text": c.text}, ensure_ascii=False))
            continue
        preview = " ".join(c.text.split())[:200]
        start, end = c.source_span
        console.print(f"{rank}. {c.id}  [{c.source}:{start}-{end}]  score {hit.score:.4f}\n"
                      f"   {preview}", highlight=False, markup=False)
    if not hits:
        console.print("no match", highlight=False)
