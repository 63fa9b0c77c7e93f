"""Routers (b) catalogue and (d) relevance, the health-memory guard, and per-query caching."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.item import Item
from assay.jobs import CallStore, StageError
from assay.routing import Catalogue, make_router, query_key, route_items
from assay.routing.catalogue import CatalogueRouter
from assay.routing.relevance import RelevanceRouter

LDL = {"labs": [{"name": "LDL-C", "value": 162, "unit": "mg/dL"}]}


async def test_the_catalogue_router_keeps_the_selected_ids_in_catalogue_order(caller_on, tree):
    caller, server = await caller_on(
        stages={"route_catalogue": {"rubric_ids": ["a3", "a1", "a1"]}})
    routing = await CatalogueRouter(Catalogue.from_taxonomy(tree), caller).route(
        Item(id="q", prompt="Chest pain?"))
    assert routing.ids == ["a1", "a3"]                    # catalogue order, no duplicate
    assert routing.calls == 1
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert '### User Query\n"Chest pain?"\n' in prompt
    assert ("ID:a1, Taxonomy: Medical skills -> Safety -> a1, Trigger Condition: chest pain"
            in prompt)
    assert "ID:b1," not in prompt                          # not eligible: no LDL in memory


async def test_the_catalogue_ids_are_an_enum_of_the_eligible_leaves_bounded_by_their_number(
        caller_on, tree):
    caller, server = await caller_on(stages={"route_catalogue": {"rubric_ids": ["a2"]}})
    await CatalogueRouter(Catalogue.from_taxonomy(tree), caller).route(Item(id="q", prompt="?"))
    ids = server.requests[0]["body"]["response_format"]["json_schema"]["schema"][
        "properties"]["rubric_ids"]
    assert ids == {"type": "array", "items": {"type": "string", "enum": ["a1", "a2", "a3"]},
                   "maxItems": 3}


@pytest.mark.parametrize("bad", [["b1", "a2"], ["bogus.01"], ["..."]])
async def test_an_id_not_shown_or_a_placeholder_is_asked_again_never_activated(
        caller_on, tree, bad):
    caller, server = await caller_on(
        stages={"route_catalogue": [{"rubric_ids": bad}, {"rubric_ids": ["a2"]}]})
    routing = await CatalogueRouter(Catalogue.from_taxonomy(tree), caller).route(
        Item(id="q", prompt="LDL?"))
    assert routing.ids == ["a2"] and "b1" in routing.excluded
    assert len(server.requests) == 2
    assert "is not one of" in server.requests[1]["body"]["messages"][-1]["content"]


async def test_unknown_ids_still_named_after_the_reasks_are_dropped_and_the_known_kept(
        caller_on, tree):
    """Issue 40, point 5: a model that keeps naming an id outside the catalogue has answered;
    one stray id must not unscore the item. A reply without a list of ids still fails it."""
    caller, server = await caller_on(stages={"route_catalogue": {"by_prompt": [
        ["LDL?", {"rubric_ids": ["zz9", "a2"]}], ["Knee?", {"rubric_ids": "a2"}]]}})
    router = CatalogueRouter(Catalogue.from_taxonomy(tree), caller)
    routing = await router.route(Item(id="q", prompt="LDL?"))
    assert routing.ids == ["a2"] and routing.details["dropped_ids"] == ["zz9"]
    assert routing.calls == 1 and len(server.requests) == 3  # the reply and its 2 re-asks
    with pytest.raises(StageError, match="stage 'route_catalogue'"):
        await router.route(Item(id="r", prompt="Knee?"))


async def test_the_relevance_router_rates_each_eligible_leaf_and_keeps_scores_at_threshold(
        caller_on, tree):
    scores = {"chest pain": 5, "red-flag": 4, "plain language": 3, "LDL-C": 2}

    def rate(request):
        score = next(v for k, v in scores.items() if "# Rubric Criterion\n\n" in request.text
                     and k in request.text.split("# Rubric Criterion")[1])
        return {"score": score, "justification_short": f"score {score}"}

    caller, server = await caller_on(stages={"route_relevance": rate})
    item = Item(id="q", prompt="Chest pain and high cholesterol?", health_memory=LDL)
    routing = await RelevanceRouter(Catalogue.from_taxonomy(tree), caller).route(item)
    assert routing.calls == 4 == len(server.requests)     # one call per leaf (b1 eligible now)
    assert routing.ids == ["a1", "a2"]                     # 5 and 4 pass the default threshold 4
    assert routing.details["scores"] == {"a1": 5, "a2": 4, "a3": 3, "b1": 2}
    assert [s.score for s in routing.active] == [5.0, 4.0]
    strict = await RelevanceRouter(Catalogue.from_taxonomy(tree), caller, threshold=5).route(item)
    assert strict.ids == ["a1"]
    assert "user health memory:\nLabs:\n- LDL-C: 162 mg/dL" in server.requests[0]["body"][
        "messages"][-1]["content"]


async def test_the_guard_saves_relevance_calls_for_leaves_the_memory_cannot_support(
        caller_on, tree):
    caller, server = await caller_on(
        stages={"route_relevance": {"score": 5, "justification_short": "x"}})
    routing = await RelevanceRouter(Catalogue.from_taxonomy(tree), caller).route(
        Item(id="q", prompt="Chest pain?"))
    assert routing.calls == 3 == len(server.requests) and routing.ids == ["a1", "a2", "a3"]


async def test_a_router_reply_that_never_fits_fails_the_query_with_its_stage(caller_on, tree):
    caller, _ = await caller_on(stages={"route_catalogue": '["a1"'})
    with pytest.raises(StageError, match="stage 'route_catalogue'"):
        await CatalogueRouter(Catalogue.from_taxonomy(tree), caller).route(Item(id="q", prompt="?"))


async def test_items_sharing_a_query_are_routed_once_and_a_rerun_makes_no_call(
        caller_on, tree, tmp_path):
    caller, server = await caller_on(stages={"route_catalogue": {"rubric_ids": ["a1"]}})
    router = CatalogueRouter(Catalogue.from_taxonomy(tree), caller)
    items = [Item(id=f"r{i}", prompt="Chest pain?", response=f"answer {i}") for i in range(3)]
    items.append(Item(id="other", prompt="Sore knee?", response="Rest."))
    store = CallStore.open(tmp_path / "routing.sqlite")
    batch = await route_items(items, router, store)
    assert batch.unique_queries == 2 and batch.calls == 2 and len(server.requests) == 2
    assert {k: r.ids for k, r in batch.routings.items()} == {
        "r0": ["a1"], "r1": ["a1"], "r2": ["a1"], "other": ["a1"]}
    again = await route_items(items, router, store)
    assert len(server.requests) == 2 and again.routings["r2"].ids == ["a1"]


def test_the_cache_key_depends_on_the_query_and_memory_not_the_response(tree):
    router = make_router("catalogue", Catalogue.from_taxonomy(tree), caller=_FakeCaller())
    a = Item(id="a", prompt="Chest pain?", response="one")
    assert query_key(router, a) == query_key(router, a.model_copy(update={"response": "two"}))
    with_memory = Item.model_validate({**a.model_dump(), "health_memory": LDL})
    assert query_key(router, a) != query_key(router, with_memory)


def test_make_router_refuses_unknown_kinds_and_model_routers_without_a_judge(tree):
    catalogue = Catalogue.from_taxonomy(tree)
    with pytest.raises(ConfigError, match="unknown router 'magic'"):
        make_router("magic", catalogue)
    with pytest.raises(ConfigError, match="calls a model"):
        make_router("tree", catalogue)


class _FakeCaller:
    class judge:
        id = "fake"


def test_a_leaf_requiring_an_unknown_kind_of_data_is_refused_before_any_call():
    with pytest.raises(ConfigError, match="criterion 'x': metadata.requires: unknown health"):
        Catalogue.from_criteria([{"id": "x", "text": "X.", "metadata": {"requires": ["diet:a"]}}])
