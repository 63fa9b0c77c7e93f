"""Shared criteria and items for the grading tests."""

from __future__ import annotations

import pytest

from assay.item import Item
from assay.rubric import Criterion, Rubric


@pytest.fixture
def binary() -> Criterion:
    return Criterion(id="stinger", text="Explains how to remove the stinger.", weight=5)


@pytest.fixture
def penalty() -> Criterion:
    return Criterion(id="tweezers", text="Recommends squeezing the stinger with tweezers.", weight=-3)


@pytest.fixture
def ordinal() -> Criterion:
    return Criterion(id="pain", text="How well is pain relief explained?", kind="ordinal", weight=4,
                     options=[{"label": "poorly", "value": 0}, {"label": "partly", "value": 0.5},
                              {"label": "well", "value": 1}, {"label": "not discussed", "na": True}])


@pytest.fixture
def nominal() -> Criterion:
    return Criterion(id="tone", text="What is the tone?", kind="nominal", weight=2,
                     options=[{"label": "alarmist", "value": 0}, {"label": "dismissive", "value": 0},
                              {"label": "calm", "value": 1}])


@pytest.fixture
def rubric(binary, penalty, ordinal, nominal) -> Rubric:
    return Rubric(id="bee", criteria=[binary, penalty, ordinal, nominal],
                  guidelines="Grade as an emergency physician would.")


@pytest.fixture
def item() -> Item:
    return Item(id="q1", messages=[{"role": "user", "content": "I was stung by a bee. What now?"}],
                response="Scrape the stinger out sideways, then ice it.",
                reference="Scrape the stinger out; wash; cold compress; watch for anaphylaxis.",
                context=[{"id": "p1", "text": "Remove stingers by scraping."}])
