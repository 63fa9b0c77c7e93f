"""The knowledge base: BM25 retrieval quality on the shipped documents, the index on disk and
its reuse, dense and hybrid retrieval, and reciprocal-rank fusion by hand."""

from __future__ import annotations

import shutil

import pytest

from assay.errors import ConfigError
from assay.evidence import KnowledgeBase, build_kb, reciprocal_rank_fusion

# Each question's answer sits in exactly one shipped document.
QUESTIONS = [
    ("How should I get a bee sting out of my skin?", "insect-stings.md"),
    ("Where do I inject an adrenaline auto-injector?", "insect-stings.md"),
    ("How much salt per day should adults with hypertension eat?", "high-blood-pressure.md"),
    ("Is a home average of 135/85 high?", "high-blood-pressure.md"),
    ("Can I give aspirin to my 10 year old with a temperature?", "fever-in-children.md"),
    ("From what age can a baby have paracetamol?", "fever-in-children.md"),
    ("Should I get an MRI scan for back pain?", "low-back-pain.txt"),
    ("Metformin and kidney function eGFR", "metformin.html"),
    ("What are the sick day rules for diabetes tablets?", "metformin.html"),
]


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    from tests.evidence.conftest import SAMPLE_DOCS

    return build_kb([SAMPLE_DOCS], tmp_path_factory.mktemp("kb") / "kb", max_chars=600)


@pytest.mark.parametrize(("question", "doc"), QUESTIONS)
def test_the_document_holding_the_answer_is_in_the_top_3(kb, question, doc):
    top = [hit.chunk.doc_id for hit in kb.search(question, k=3, mode="bm25")]
    assert doc in top, top


def test_the_index_is_written_to_disk_and_loads_back_identically(kb):
    again = KnowledgeBase.load(kb.path)
    assert [c.id for c in again.chunks] == [c.id for c in kb.chunks]
    question = QUESTIONS[0][0]
    assert [h.chunk.id for h in again.search(question)] == [h.chunk.id for h in kb.search(question)]


def test_an_unchanged_build_is_reused_and_a_changed_document_rebuilds(tmp_path, sample_docs):
    docs = tmp_path / "docs"
    shutil.copytree(sample_docs, docs)
    first = build_kb([docs], tmp_path / "kb")
    assert not first.reused and build_kb([docs], tmp_path / "kb").reused
    (docs / "low-back-pain.txt").write_text("Back pain: keep moving.\n", encoding="utf-8")
    rebuilt = build_kb([docs], tmp_path / "kb")
    assert not rebuilt.reused and rebuilt.fingerprint != first.fingerprint
    assert "keep moving" in rebuilt.chunk("low-back-pain.txt#0").text


def test_a_query_with_no_known_word_finds_nothing(kb):
    assert kb.search("zzzz qqqq") == []


def test_dense_search_needs_a_dense_index(kb):
    with pytest.raises(ConfigError, match="built without dense vectors"):
        kb.search("fever", mode="dense")


def test_reciprocal_rank_fusion_by_hand():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=1))
    assert fused == pytest.approx({"a": 1 / 2, "b": 1 / 3 + 1 / 2, "c": 1 / 3})
    assert [key for key, _ in reciprocal_rank_fusion([["x", "y"], ["y", "x"]])] == ["x", "y"]


def test_hybrid_retrieval_fuses_bm25_and_dense_ranks(tmp_path, sample_docs):
    pytest.importorskip("sentence_transformers")
    kb = build_kb([sample_docs], tmp_path / "kb", max_chars=600, dense=True)
    assert KnowledgeBase.load(kb.path).dense_model == "all-MiniLM-L6-v2"
    hits = kb.search("my lips swelled up after an insect bit me", k=3)
    assert hits[0].chunk.doc_id == "insect-stings.md"
    assert all(h.dense_rank is not None for h in hits)
    semantic = kb.search("youngster burning up", k=3, mode="dense")
    assert "fever-in-children.md" in [h.chunk.doc_id for h in semantic]
