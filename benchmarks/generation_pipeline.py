"""Rubric generation: calls, tokens and wall time per query with a 50 ms judge, and the
knowledge base's build and query time at 10,000 chunks.

Part 1 runs the seed-000 pipeline (``assay generate``) on the shipped sample queries, repeated
as ``-n`` distinct queries, against ``assay fake-judge --stages examples/generate/stages.yaml
--latency-ms L`` in a separate process: one query alone (the latency of its critical path: the
stages run one after another except facts and intent, which run together), then all of them at
once (throughput). Part 2 indexes ``--chunks`` synthetic chunks (sentences drawn, seeded, from
the sample documents' vocabulary) with BM25 and times 200 searches; ``--dense`` also embeds
them with the bundled MiniLM.

    .venv/bin/python benchmarks/generation_pipeline.py                 # n=12, L=50, 10,000 chunks
    .venv/bin/python benchmarks/generation_pipeline.py -n 30 -l 50 --chunks 10000 --dense
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from fake_judge_process import start_fake_judge

from assay.evidence import Chunk, KnowledgeBase, build_kb
from assay.evidence.kb import write_kb
from assay.generate import Query, agenerate, read_queries

SAMPLE = Path(__file__).parents[1] / "examples" / "generate"


def queries(n: int) -> list[Query]:
    base = read_queries(SAMPLE / "queries.txt")
    return [Query.plain(f"{base[i % len(base)].text} (case {i})") for i in range(n)]


async def pipeline(n: int, latency_ms: float, kb: KnowledgeBase) -> None:
    process, url = start_fake_judge(latency_ms, "--stages", str(SAMPLE / "stages.yaml"))
    model = f"openai-compatible:fake@{url}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            single = []
            for i, q in enumerate(queries(3)):
                started = time.perf_counter()
                result = await agenerate([q], kb=kb, model=model, job_dir=Path(tmp) / f"one{i}")
                single.append((time.perf_counter() - started, result.totals))
            started = time.perf_counter()
            batch = await agenerate(queries(n), kb=kb, model=model, job_dir=Path(tmp) / "batch")
            batch_s = time.perf_counter() - started
    finally:
        process.terminate()
        process.wait()
    calls = [t.calls for _, t in single]
    print(f"pipeline, judge latency {latency_ms:.0f} ms, knowledge base of {len(kb.chunks)} chunks")
    print(f"  one query alone: {statistics.mean(calls):.1f} calls, "
          f"{statistics.mean(t.prompt_tokens for _, t in single):,.0f} prompt + "
          f"{statistics.mean(t.completion_tokens for _, t in single):,.0f} completion tokens, "
          f"wall {statistics.mean(s for s, _ in single) * 1000:,.0f} ms "
          f"(min {min(s for s, _ in single) * 1000:,.0f}, max {max(s for s, _ in single) * 1000:,.0f})")
    t = batch.totals
    print(f"  {n} queries at once: {batch.status}, {t.calls} calls ({t.calls / n:.1f}/query), "
          f"{t.prompt_tokens / n:,.0f} prompt + {t.completion_tokens / n:,.0f} completion "
          f"tokens/query, wall {batch_s:.2f} s ({batch_s / n * 1000:,.0f} ms/query)")


def synthetic_chunks(n: int, seed: int = 0) -> list[Chunk]:
    words = sorted({w for p in (SAMPLE / "docs").iterdir()
                    for w in re.findall(r"[a-z]{3,}", p.read_text(encoding="utf-8").lower())})
    rng = random.Random(seed)
    chunks = []
    for i in range(n):
        text = " ".join(" ".join(rng.choices(words, k=rng.randint(8, 18))) + "."
                        for _ in range(rng.randint(4, 8)))
        chunks.append(Chunk(f"doc{i // 10}.md#{i % 10}", f"doc{i // 10}.md", f"Document {i // 10}",
                            f"doc{i // 10}.md", 0, len(text), text))
    return chunks


def knowledge_base(n: int, dense: bool) -> None:
    chunks = synthetic_chunks(n)
    queries_ = [" ".join(random.Random(i).choices(chunks[i].text.split(), k=5)) for i in range(200)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        kb = write_kb(Path(tmp) / "kb", chunks, [], {"max_chars": 0, "dense_model": None})
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        loaded = KnowledgeBase.load(Path(tmp) / "kb")
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        hits = [loaded.search(q, k=5, mode="bm25") for q in queries_]
        search_ms = (time.perf_counter() - started) / len(queries_) * 1000
        top1 = sum(h[0].chunk.id == chunks[i].id for i, h in enumerate(hits) if h) / len(hits)
        print(f"knowledge base, {n:,} chunks ({sum(len(c.text) for c in chunks) / n:,.0f} chars each)")
        print(f"  BM25 build + save {build_s:.2f} s, load {load_s:.2f} s, search "
              f"{search_ms:.2f} ms/query (200 queries; the source chunk ranked first for "
              f"{top1:.0%})")
        del kb
        if dense:
            started = time.perf_counter()
            kb = write_kb(Path(tmp) / "dense", chunks, [], {"max_chars": 0,
                                                            "dense_model": "all-MiniLM-L6-v2"})
            dense_s = time.perf_counter() - started
            started = time.perf_counter()
            for q in queries_[:50]:
                kb.search(q, k=5, mode="hybrid")
            hybrid_ms = (time.perf_counter() - started) / 50 * 1000
            print(f"  with dense vectors (MiniLM, CPU): build {dense_s:.1f} s, hybrid search "
                  f"{hybrid_ms:.1f} ms/query")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=12, help="queries in the batch")
    parser.add_argument("-l", "--latency-ms", type=float, default=50.0)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--dense", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb = build_kb([SAMPLE / "docs"], Path(tmp) / "kb", max_chars=400)
        asyncio.run(pipeline(args.n, args.latency_ms, kb))
    knowledge_base(args.chunks, args.dense)


if __name__ == "__main__":
    main()
