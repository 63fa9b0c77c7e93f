"""Router (a): the top-down tree walk, its thresholds and its pruning, on a hand-built tree."""

from __future__ import annotations

import re

import pytest

from assay.item import Item
from assay.routing import Catalogue
from assay.routing.tree import DEFAULT_TAU, TreeWalkRouter

RATINGS = {"A": 0.9, "B": 0.2, "A1": 0.8, "A2": 0.5, "a1": 0.9, "a2": 0.6}


def scripted(query_class="standard", ratings=RATINGS):
    """Rate exactly the node ids listed in the prompt (so a pruned node can never be rated)."""

    def reply(request):
        listed = re.findall(r"^ID:(\S+), Taxonomy:", request.text, flags=re.MULTILINE)
        nodes = [{"id": i, "relevance": ratings.get(i, 0.0), "reason": f"why {i}"} for i in listed]
        first = "(depth 1)" in request.text
        return {"nodes": nodes, **({"query_class": query_class} if first else {})}

    return reply


QUERY = Item(id="q1", prompt="I have crushing chest pain, what should I do?",
             health_memory={"labs": [{"name": "LDL-C", "value": 162, "unit": "mg/dL"}]})


async def test_pruned_subtrees_are_never_shown_and_only_joint_relevance_above_tau_is_active(
        caller_on, tree):
    caller, server = await caller_on(stages={"route_tree": scripted()})
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller,
                                   combine="product").route(QUERY)
    # joint relevance (product): A .9; A1 .72, A2 .45 < .5; a1 .648, a2 .432 < .5; B .2 < .5
    assert routing.ids == ["a1"]
    assert routing.active[0].score == pytest.approx(0.648)
    assert routing.active[0].reason == "why a1"
    assert routing.calls == 3 == len(server.requests)
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert "ID:B," in prompts[0] and "ID:B1," not in prompts[1] and "ID:a3," not in prompts[2]
    assert routing.details["tau"] == DEFAULT_TAU["standard"] == 0.5
    assert routing.details["pruned"] == ["A2", "B", "a2"]
    assert routing.details["nodes"]["A2"] == {"relevance": 0.5, "joint": 0.45, "kept": False}


async def test_an_emergency_query_lowers_tau_and_keeps_more_leaves(caller_on, tree):
    caller, _ = await caller_on(stages={"route_tree": scripted("emergency")})
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller,
                                   combine="product").route(QUERY)
    # τ = 0.3: A2 (.45) opens, a3 unrated -> 0; a2 (.432) is kept now; B (.2) still pruned
    assert routing.details["tau"] == 0.3
    assert routing.ids == ["a1", "a2"]
    assert routing.calls == 3


async def test_min_combination_by_default_uses_the_weakest_node_on_the_path(caller_on, tree):
    caller, _ = await caller_on(stages={"route_tree": scripted()})
    router = TreeWalkRouter(Catalogue.from_taxonomy(tree), caller)
    routing = await router.route(QUERY)
    # min: A1 .8, a1 .8, a2 .6 (all >= .5); A2 .5 opens, a3 unrated
    assert routing.ids == ["a1", "a2"]
    assert routing.active[1].score == pytest.approx(0.6)


async def test_a_narrow_query_uses_its_own_configured_threshold(caller_on, tree):
    caller, _ = await caller_on(stages={"route_tree": scripted("narrow")})
    router = TreeWalkRouter(Catalogue.from_taxonomy(tree), caller, tau={"narrow": 0.7},
                            combine="product")
    routing = await router.route(QUERY)
    assert routing.details["tau"] == 0.7 and routing.ids == []   # a1 .648 < .7
    assert routing.calls == 3                                    # A .9 and A1 .72 were opened


async def test_a_branch_without_eligible_leaves_is_not_even_shown(caller_on, tree):
    caller, server = await caller_on(stages={"route_tree": scripted()})
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller).route(
        Item(id="q2", prompt="I have crushing chest pain, what should I do?"))
    assert routing.excluded == {"b1": "health memory has no lab:ldl"}
    # b1 requires an LDL lab and the query has no health memory: B never appears
    assert "ID:B," not in server.requests[0]["body"]["messages"][-1]["content"]


def test_the_tree_walk_needs_a_taxonomy_and_sane_thresholds(tree):
    with pytest.raises(ValueError, match="needs a taxonomy"):
        TreeWalkRouter(Catalogue.from_criteria([{"id": "x", "text": "X."}]), caller=None)
    with pytest.raises(ValueError, match=r"thresholds must be in \[0, 1\]"):
        TreeWalkRouter(Catalogue.from_taxonomy(tree), caller=None, tau={"broad": 1.5})


def leaving_out(*ids, again=()):
    """Rate every listed node but ``ids`` on the first ask of a depth; the re-ask (a prompt that
    lists only unrated nodes) rates those in ``again``."""

    def reply(request):
        listed = re.findall(r"^ID:(\S+), Taxonomy:", request.text, flags=re.MULTILINE)
        reasking = all(i in ids for i in listed)
        rated = [i for i in listed if (i in again if reasking else i not in ids)]
        nodes = [{"id": i, "relevance": RATINGS.get(i, 0.0), "reason": f"why {i}"} for i in rated]
        first = "(depth 1)" in request.text and "Also classify the query" in request.text
        return {"nodes": nodes, **({"query_class": "standard"} if first else {})}

    return reply


async def test_a_node_left_unrated_is_asked_about_again_alone(caller_on, tree):
    caller, server = await caller_on(stages={"route_tree": leaving_out("A1", again=("A1",))})
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller,
                                   combine="product").route(QUERY)
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    reask = prompts[2]
    assert re.findall(r"^ID:(\S+),", reask, flags=re.MULTILINE) == ["A1"]
    assert routing.calls == 4 and routing.ids == ["a1"]  # the re-ask's rating counts
    assert "unrated" not in routing.details


async def test_a_node_still_unrated_is_kept_open_and_listed_never_pruned_as_irrelevant(
        caller_on, tree):
    caller, _ = await caller_on(stages={"route_tree": leaving_out("A1")})
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller,
                                   combine="product").route(QUERY)
    assert routing.details["unrated"] == ["A1"]
    assert routing.details["nodes"]["A1"] == {"relevance": None, "joint": 0.9, "kept": True}
    assert "A1" not in routing.details["pruned"]
    # A1's children were opened at A's relevance (.9): a1 .81 is active, a2 .54 too
    assert routing.ids == ["a1", "a2"]


async def test_a_fixture_may_rate_the_nodes_it_does_not_list(caller_on, tree):
    script = {"route_tree": {"rate_unlisted": 0.0, "query_class": "standard",
                             "nodes": [{"id": i, "relevance": 0.9, "reason": "r"}
                                       for i in ("A", "A1", "a1")]}}
    caller, server = await caller_on(stages=script)
    routing = await TreeWalkRouter(Catalogue.from_taxonomy(tree), caller).route(QUERY)
    assert routing.ids == ["a1"] and "unrated" not in routing.details
    assert routing.calls == 3 == len(server.requests)  # no re-ask: every node was rated
