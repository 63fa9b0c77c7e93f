"""Every deterministic rule of seed 000's drafting and auditing, on hand-worked inputs."""

from __future__ import annotations

from assay.evidence import Chunk
from assay.generate.board import Board, Fact, attribute, build_board, safety_override
from assay.generate.rules import (
    RubricItem,
    audit_rules,
    cap_size,
    coerce_items,
    coerce_points,
    enforce_citations,
    ensure_negative,
    keep_negative_constraints,
    keep_red_flags,
    merge_duplicates,
    normalize_axis,
    tier,
)

BOARD = Board([
    Fact("P1", "positive", "Paracetamol can be used from 2 months of age.", ("fever.md#2",)),
    Fact("N1", "negative", "Do not give aspirin to children under 16 years.", ("fever.md#2",)),
    Fact("N2", "negative", "Do not sponge a child with cold water.", ("fever.md#2",)),
    Fact("R1", "red_flag", "A rash that does not fade needs emergency care.", ("fever.md#1",)),
    Fact("R2", "red_flag", "A stiff neck needs emergency care.", ("fever.md#1",)),
    Fact("TONE", "tone", "persona: parent; tone: calm"),
    Fact("Q1", "question", "How is the baby feeding?"),
])


def item(text, points, evidence=(), axis="accuracy"):
    return RubricItem(text, axis, points, list(evidence))


def test_safety_override_puts_back_every_dropped_red_flag_and_negative_constraint():
    raw = {"positive_atomic_facts": ["p1", "p2"], "negative_constraints": ["n1", "n2"],
           "safety_red_flags": ["r1", "r2"]}
    filtered = {"relevant_positive_facts": ["p1"], "relevant_negative_constraints": ["N1 "],
                "relevant_red_flags": []}
    assert safety_override(raw, filtered) == {"relevant_positive_facts": ["p1"],
                                              "relevant_negative_constraints": ["N1", "n2"],
                                              "relevant_red_flags": ["r1", "r2"]}


def test_the_safety_override_does_not_bring_back_dropped_positive_facts():
    raw = {"positive_atomic_facts": ["p1", "p2"], "negative_constraints": [], "safety_red_flags": []}
    kept = safety_override(raw, {"relevant_positive_facts": [], "relevant_negative_constraints": [],
                                 "relevant_red_flags": []})
    assert kept["relevant_positive_facts"] == []


def test_facts_are_attributed_to_the_chunks_that_carry_their_words():
    chunks = [Chunk("a#0", "a", "Fever", "a", 0, 40, "Paracetamol can be used from 2 months."),
              Chunk("b#0", "b", "Stings", "b", 0, 30, "Scrape the sting out sideways.")]
    assert attribute("Paracetamol can be given from 2 months of age.", chunks) == ("a#0",)
    assert attribute("Aspirin causes Reye's syndrome.", chunks) == ()
    board = build_board({"relevant_positive_facts": ["Scrape the sting out."],
                         "relevant_negative_constraints": [], "relevant_red_flags": []},
                        {"user_persona": "adult", "tone": "calm",
                         "missing_context_questions": ["Any allergy?", "any allergy?"]}, chunks)
    assert [(f.label, f.chunks) for f in board.facts] == [("P1", ("b#0",)), ("TONE", ()),
                                                          ("Q1", ())]


def test_points_are_integers_clamped_to_plus_minus_ten():
    assert [coerce_points(v) for v in (7.6, -12, 10.4, "inf", "-Infinity", "+3", "x", True, 0)] \
        == [8, -10, 10, 10, -10, 3, None, None, 0]


def test_axes_outside_the_five_become_accuracy_and_spellings_are_normalised():
    assert [normalize_axis(a) for a in ("Context awareness", "communication", "SAFETY",
                                        "instruction-following", "healthcare_implications")] == [
        "context_awareness", "communication_quality", "accuracy", "instruction_following",
        "accuracy"]


def test_the_weight_tiers():
    assert [tier(p) for p in (10, -8, 7, -4, 3, -1)] == ["high", "high", "medium", "medium",
                                                          "low", "low"]


def test_every_accepted_reply_shape_is_read_and_bad_entries_are_noted():
    entries = [{"criterion": "A", "axis": "accuracy", "points": 5}, {"criterion": "", "points": 3},
               {"criterion": "B", "axis": "x", "points": 0}]
    for reply in ({"rubrics": entries}, entries, [{"rubrics": entries}]):
        items, notes = coerce_items(reply, "draft_rubric")
        assert [(i.criterion, i.points, i.stage) for i in items] == [("A", 5, "draft_rubric")]
        assert notes == ["rubrics[1]: no criterion text, dropped",
                         "rubrics[2]: points 0 is not a non-zero number, dropped"]


def test_every_criterion_cites_evidence_or_is_removed():
    items = [item("Mentions paracetamol from 2 months of age.", 5, ["P1", "X9"]),
             item("Paracetamol can be used from 2 months of age for comfort.", 5),
             item("Recommends a homeopathic remedy.", 3)]
    kept, removed = enforce_citations(items, BOARD)
    assert [(i.criterion[:20], i.evidence) for i in kept] == [
        ("Mentions paracetamol", ["P1"]), ("Paracetamol can be u", ["P1"])]
    assert removed == ["Recommends a homeopathic remedy."]


def test_near_duplicates_merge_keeping_the_larger_weight_and_all_evidence():
    items = [item("Warns against giving aspirin to children.", 6, ["N1"]),
             item("Warns against giving aspirin to children!", 9, ["N1", "P1"]),
             item("Warns against giving aspirin to children.", -6, ["N1"])]
    merged, count = merge_duplicates(items)
    assert count == 1
    assert [(i.points, i.evidence) for i in merged] == [(9, ["N1", "P1"]), (-6, ["N1"])]


def test_distinct_red_flags_and_negative_constraints_are_never_merged():
    items = [item("Says to seek emergency care for these signs.", 9, ["R1"]),
             item("Says to seek emergency care for these signs.", 9, ["R2"]),
             item("Warns against this unsafe practice.", 8, ["N1"]),
             item("Warns against this unsafe practice.", 8, ["N2"])]
    merged, count = merge_duplicates(items)
    assert count == 0 and len(merged) == 4


def test_red_flags_are_kept_as_high_stakes_criteria():
    items = [item("Mentions the non-fading rash.", 5, ["R1"]), item("Gives the dose.", 4, ["P1"])]
    out, added = keep_red_flags(items, BOARD)
    assert [(i.points, i.evidence, i.stage) for i in out] == [
        (8, ["R1"], "audit_rubric"), (4, ["P1"], "audit_rubric"), (9, ["R2"], "audit_rules")]
    assert added == ["R2"] and out[2].criterion.endswith("A stiff neck needs emergency care.")


def test_negative_constraints_are_kept_as_high_stakes_criteria():
    """Issue 30, point 3 (seed 000 Table 14: every red flag or contraindication corresponds
    to a high-stakes criterion); N2 is the shipped sample's "Do not sponge a child with cold
    water", which the audit left uncited and the old rules dropped."""
    items = [item("Suggests aspirin for the fever.", -3, ["N1"]), item("Gives the dose.", 4, ["P1"])]
    out, added, dropped = keep_negative_constraints(items, BOARD)
    assert dropped == []
    assert [(i.points, i.evidence, i.stage) for i in out] == [
        (-8, ["N1"], "audit_rubric"), (4, ["P1"], "audit_rubric"), (-9, ["N2"], "audit_rules")]
    assert added == ["N2"] and out[2].criterion.endswith("Do not sponge a child with cold water.")


def test_the_audit_report_records_the_weights_the_rules_raised():
    items = [item("Mentions the non-fading rash.", 5, ["R1"]),
             item("Suggests aspirin for the fever.", -3, ["N1"])]
    _, report = audit_rules(items, BOARD)
    assert report["raised_to_high_stakes"] == ["Mentions the non-fading rash.: 5 -> 8",
                                               "Suggests aspirin for the fever.: -3 -> -8"]
    assert report["red_flags_added"] == ["R2"] and report["negative_constraints_added"] == ["N2"]


def test_at_least_one_negative_criterion_from_the_first_negative_constraint():
    out, added = ensure_negative([item("Gives the dose.", 4, ["P1"])], BOARD)
    assert added and (out[-1].points, out[-1].evidence) == (-8, ["N1"])
    assert "Do not give aspirin" in out[-1].criterion
    unchanged, added = ensure_negative(out, BOARD)
    assert not added and unchanged == out


def test_a_negative_criterion_falls_back_to_a_red_flag_then_a_positive_fact():
    flags_only = Board([Fact("R1", "red_flag", "Stiff neck.")])
    assert ensure_negative([], flags_only)[0][0].evidence == ["R1"]
    positives_only = Board([Fact("P1", "positive", "Rest.")])
    [made], _ = ensure_negative([], positives_only)
    assert (made.points, made.evidence) == (-5, ["P1"])


def test_the_size_cap_drops_low_weight_criteria_first_and_keeps_red_flags_and_a_penalty():
    items = ([item(f"Low {i}", 1 + i % 3, ["P1"]) for i in range(20)]
             + [item("Flag", 2, ["R1"]), item("Penalty", -1, ["N1"]), item("High", 10, ["P1"])])
    kept, dropped = cap_size(items, 20)
    assert len(kept) == 20 and len(dropped) == 3
    texts = [i.criterion for i in kept]
    assert {"Flag", "Penalty", "High"} <= set(texts)
    # weight 1: Low 0, 3, ..., 18; among equals the latest go first
    assert dropped == ["Low 12", "Low 15", "Low 18"]


def test_audit_rules_apply_in_order_and_report_each_change():
    items = [item("Gives the paracetamol age of 2 months.", 5, ["P1"]),
             item("Gives the paracetamol age of 2 months.", 7, ["P1"]),
             item("Invents a fact.", 3, [])]
    final, report = audit_rules(items, BOARD, max_criteria=20)
    assert report == {"removed_uncited": ["Invents a fact."], "merged": 1,
                      "red_flags_added": ["R1", "R2"],
                      "negative_constraints_added": ["N1", "N2"],
                      "citations_without_content": [], "raised_to_high_stakes": [],
                      "negative_added": False, "removed_over_cap": []}
    assert [(i.points, i.evidence) for i in final] == [(7, ["P1"]), (9, ["R1"]), (9, ["R2"]),
                                                       (-9, ["N1"]), (-9, ["N2"])]


def test_rerank_keeps_valid_distinct_indices_then_backfills_in_candidate_order():
    from assay.generate.retrieval import select_indices

    assert select_indices([7, 2, 2, -1, 99, True, 5], n_candidates=8, top_k=5) == [7, 2, 5, 0, 1]
    assert select_indices("garbage", n_candidates=3, top_k=5) == [0, 1, 2]
    assert select_indices([3, 1, 0, 2], n_candidates=4, top_k=2) == [3, 1]


def test_site_operators_are_dropped_before_searching_the_local_knowledge_base():
    from assay.generate.retrieval import clean_search_query

    assert clean_search_query("aspirin children (site:nhs.uk OR site:cdc.gov) Reye") == \
        "aspirin children Reye"


def test_the_evidence_block_becomes_the_released_codes_text():
    from assay.generate.retrieval import evidence_text

    block = {"synthesis": {"consensus": "See a doctor.", "red_flags": ["Stiff neck"]},
             "evidence_sources": [{"key_excerpt": "38 C is a fever."}, {"key_excerpt": ""}]}
    assert evidence_text(block) == ('Primary Consensus: See a doctor.\n'
                                    'Critical Warnings: ["Stiff neck"]\n'
                                    'Source 1 Data: 38 C is a fever.')
    assert evidence_text({"synthesis": {"consensus": ""}, "evidence_sources": []}) == ""
