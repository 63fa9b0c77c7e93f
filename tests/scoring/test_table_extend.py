"""A score table built in two parts and joined equals the one built item by item."""

from __future__ import annotations

from assay.rubric import Rubric
from assay.scoring import ScoreTableBuilder
from assay.verdict import Verdict

RUBRIC = Rubric(criteria=[
    {"id": "a", "text": "States the dose.", "weight": 5, "tags": ["axis:accuracy"]},
    {"id": "b", "text": "Advises a doctor.", "weight": 3, "tags": ["axis:completeness"]},
    {"id": "c", "text": "Alarms the reader.", "weight": -2, "tags": ["axis:communication"]},
])
# (item id, its example tags, its decisions on a, b, c): the later part brings a new theme.
ITEMS = [("q1", ["theme:hedging"], "MET", "UNMET", "UNMET"),
         ("q2", ["theme:hedging"], "UNMET", "MET", "MET"),
         ("q3", ["theme:emergency"], "MET", "MET", "UNMET"),
         ("q4", ["theme:global_health"], "MET", "UNMET", "MET")]


def add(builder: ScoreTableBuilder, item_id: str, tags: list[str], *decisions: str) -> None:
    verdicts = {c.id: Verdict(item_id=item_id, criterion_id=c.id, decision=d)
                for c, d in zip(RUBRIC.criteria, decisions)}
    builder.add(item_id, RUBRIC.criteria, verdicts, example_tags=tags)


def test_extend_gives_the_same_table_and_bootstrap_as_adding_in_turn():
    whole, first, later = (ScoreTableBuilder("healthbench", seed=7) for _ in range(3))
    for k, item in enumerate(ITEMS):
        add(whole, *item)
        add(first if k < 2 else later, *item)
    first.extend(later)
    joined, expected = first.build(), whole.build()
    assert [s.item_id for s in joined.items] == ["q1", "q2", "q3", "q4"]
    assert joined == expected
    assert joined.healthbench is not None
    assert list(joined.healthbench.metrics) == list(expected.healthbench.metrics)  # column order
    assert set(joined.healthbench.by_theme) == {"hedging", "emergency", "global_health"}


def test_items_scored_out_of_order_are_kept_in_the_order_given_to_keep():
    whole, parts = ScoreTableBuilder("healthbench"), ScoreTableBuilder("healthbench")
    for item in ITEMS:
        add(whole, *item)
    scored = {}
    for item_id, tags, *decisions in reversed(ITEMS):
        verdicts = {c.id: Verdict(item_id=item_id, criterion_id=c.id, decision=d)
                    for c, d in zip(RUBRIC.criteria, decisions)}
        scored[item_id] = parts.score(item_id, RUBRIC.criteria, verdicts, example_tags=tags)
    assert len(parts.items) == 0  # scoring keeps nothing
    for item_id, *_ in ITEMS:
        parts.keep(scored[item_id])
    assert parts.build() == whole.build()
