"""Shared fixtures for routing tests: a hand-built tree and a judge on the fake server."""

from __future__ import annotations

import pytest

from assay.jobs import CallStore, StageCaller
from assay.judges import make_judge
from assay.rubric import Taxonomy


def leaf(node_id, text, trigger=None, **extra):
    return {"id": node_id, "name": node_id, "criterion": {"id": node_id, "text": text,
                                                          "trigger": trigger, **extra}}


def hand_built_tree() -> Taxonomy:
    """root -> A (A1 -> a1, a2; A2 -> a3), B (B1 -> b1)."""
    return Taxonomy(id="hand", root={"id": "root", "name": "all", "children": [
        {"id": "A", "name": "Medical skills", "children": [
            {"id": "A1", "name": "Safety", "children": [
                leaf("a1", "Advises emergency care for chest pain.", "chest pain"),
                leaf("a2", "Lists red-flag symptoms.", "symptom questions")]},
            {"id": "A2", "name": "Communication", "children": [
                leaf("a3", "Uses plain language.", "any explanation")]}]},
        {"id": "B", "name": "Health memory", "children": [
            {"id": "B1", "name": "Labs", "children": [
                leaf("b1", "Mentions the user's LDL-C.", "lipid questions",
                     metadata={"requires": ["lab:ldl"]})]}]}]})


@pytest.fixture
def tree() -> Taxonomy:
    return hand_built_tree()


@pytest.fixture
async def caller_on(serve, tmp_path):
    """``await caller_on(stages=...)`` -> (StageCaller, server); judges closed after the test."""
    judges = []

    async def start(**kwargs):
        server = await serve(**kwargs)
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        judges.append(judge)
        store = CallStore.open(tmp_path / f"calls{len(judges)}.sqlite")
        return StageCaller(judge, store), server

    yield start
    for judge in judges:
        await judge.aclose()
