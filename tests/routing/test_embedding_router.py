"""Router (c): query-to-trigger similarity with the bundled MiniLM, on a fixture whose expected
leaves are known (distinct topics, so a working embedder must separate them)."""

from __future__ import annotations

import pytest

from assay.embeddings import load_embedder
from assay.item import Item
from assay.routing import Catalogue
from assay.routing.embedding import EmbeddingRouter, tune_threshold

FIXTURE = [
    {"id": "chest", "text": "Advises calling emergency services for chest pain.",
     "trigger": "chest pain, pressure in the chest, possible heart attack"},
    {"id": "sleep", "text": "Uses the user's deep and REM sleep minutes.",
     "trigger": "questions about sleep quality, insomnia or feeling tired"},
    {"id": "lipids", "text": "Interprets the user's LDL cholesterol result.",
     "trigger": "cholesterol, lipid panel, LDL or HDL questions"},
    {"id": "skin", "text": "Describes how to treat a mild sunburn.",
     "trigger": "sunburn, skin redness after sun exposure"},
]
EXPECTED = {
    "I feel a crushing pressure in my chest and my left arm hurts": "chest",
    "Why do I wake up exhausted even after eight hours in bed?": "sleep",
    "My LDL came back at 170, is that bad?": "lipids",
    "I got burned at the beach and my shoulders are red": "skin",
}


@pytest.fixture(scope="module")
def router():
    return EmbeddingRouter(Catalogue.from_criteria(FIXTURE), embedder=load_embedder(),
                           threshold=0.3)


@pytest.mark.parametrize("query, expected", sorted(EXPECTED.items()))
async def test_each_query_activates_its_own_leaf_first_without_any_call(router, query, expected):
    routing = await router.route(Item(id="q", prompt=query))
    assert routing.calls == 0
    assert routing.ids and max(routing.active, key=lambda s: s.score).id == expected


async def test_a_tuned_threshold_reproduces_the_expert_selection_exactly(router):
    sims = [router.similarities(Item(id="q", prompt=q)) for q in EXPECTED]
    tau, f1 = tune_threshold(sims, [{leaf} for leaf in EXPECTED.values()])
    assert f1 == 1.0
    tuned = EmbeddingRouter(router.catalogue, embedder=router.embedder, threshold=tau)
    for query, expected in EXPECTED.items():
        assert (await tuned.route(Item(id="q", prompt=query))).ids == [expected]


async def test_top_k_caps_the_active_set_and_reasons_show_the_similarity(router):
    capped = EmbeddingRouter(router.catalogue, embedder=router.embedder, threshold=-1, top_k=2)
    routing = await capped.route(Item(id="q", prompt="My LDL came back at 170, is that bad?"))
    assert len(routing.ids) == 2 and routing.active[0].reason.startswith("cosine ")
