"""Merging clinicians' raw axes into Table 2's targets (issue 30, point 10: "the label merging
the 3-class inappropriateness target needs")."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.rag.items import RagItem
from assay.rag.label_merge import merge_labels, parse_rules

RULES = {
    "inappropriate": [
        {"value": "yes", "when": {"content": ["Yes, great clinical significance"]}},
        {"value": "slightly", "when": {"content": ["Yes, little clinical significance"]}},
        {"value": "no", "when": {"content": ["No"]}}],
    "harmful": [
        {"value": True, "when": {"extent": ["moderate", "severe"],
                                 "likelihood": ["medium", "high"]}},
        {"value": False, "when": {}}],
}


def item(item_id, **raw):
    return RagItem.model_validate({"id": item_id, "scope": "in_scope", "question": "q",
                                   "answer": "a", "metadata": raw})


def test_the_three_inappropriateness_levels_come_from_the_raw_answer():
    items = [item("a", content="Yes, great clinical significance"),
             item("b", content="Yes, little clinical significance"), item("c", content="No")]
    merged, _ = merge_labels(items, parse_rules(RULES, source="r.toml"))
    assert [i.labels.inappropriate for i in merged] == ["yes", "slightly", "no"]


def test_harm_needs_every_axis_of_its_rule_and_the_catch_all_takes_the_rest():
    items = [item("a", extent="severe", likelihood="high"),
             item("b", extent="severe", likelihood="low")]
    merged, _ = merge_labels(items, parse_rules(RULES, source="r.toml"))
    assert [i.labels.harmful for i in merged] == [True, False]


def test_items_no_rule_covers_are_listed_and_keep_no_label():
    merged, report = merge_labels([item("a", content="Unsure")],
                                  parse_rules(RULES, source="r.toml"))
    assert merged[0].labels.inappropriate is None
    assert report.unlabelled["inappropriate"] == ["a"]


def test_a_value_outside_the_targets_classes_is_an_error_naming_the_rule():
    with pytest.raises(InputError, match=r"r.toml: inappropriate\[0\].value: 'maybe' is not one"):
        parse_rules({"inappropriate": [{"value": "maybe", "when": {}}]}, source="r.toml")


def test_rag_merge_labels_writes_the_items_and_counts_each_value(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app
    from assay.rag.items import read_rag_items, write_rag_items

    write_rag_items([item("a", content="No"), item("b", content="?")], tmp_path / "raw.jsonl")
    (tmp_path / "rules.toml").write_text(
        '[[inappropriate]]\nvalue = "no"\nwhen = { content = ["No"] }\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["rag", "merge-labels", str(tmp_path / "raw.jsonl"),
                                      "--rules", str(tmp_path / "rules.toml"), "--out",
                                      str(tmp_path / "merged.jsonl")])
    assert result.exit_code == 0, result.output
    assert "inappropriate: no: 1; 1 unlabelled" in result.output
    assert [i.labels.inappropriate for i in read_rag_items(tmp_path / "merged.jsonl")] == [
        "no", None]


def test_values_match_ignoring_case_and_surrounding_spaces():
    items = [item("a", content="  yes, GREAT clinical significance "),
             item("b", extent=" Severe", likelihood="HIGH ")]
    merged, report = merge_labels(items, parse_rules(RULES, source="r.toml"))
    assert merged[0].labels.inappropriate == "yes" and merged[1].labels.harmful is True
    assert report.unlabelled["inappropriate"] == ["b"]


def test_an_old_label_no_rule_holds_for_is_cleared_and_listed_as_a_replacement():
    old = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "q", "answer": "a",
                                  "labels": {"inappropriate": "yes", "harmful": True},
                                  "metadata": {"content": "Unsure", "extent": "mild"}})
    merged, report = merge_labels([old], parse_rules(RULES, source="r.toml"))
    assert merged[0].labels.inappropriate is None  # counted unlabelled, and unlabelled it is
    assert report.unlabelled["inappropriate"] == ["a"]
    assert [str(r) for r in report.replaced["inappropriate"]] == ["a: yes → none"]
    assert [str(r) for r in report.replaced["harmful"]] == ["a: true → false"]


def test_rag_merge_labels_lists_each_replacement_old_to_new(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app
    from assay.rag.items import read_rag_items, write_rag_items

    labelled = [RagItem.model_validate({**item(k, content=c).model_dump(),
                                        "labels": {"inappropriate": "yes"}})
                for k, c in (("a", "No"), ("b", "?"), ("c", "Yes"))]
    write_rag_items(labelled, tmp_path / "raw.jsonl")
    (tmp_path / "rules.toml").write_text(
        '[[inappropriate]]\nvalue = "no"\nwhen = { content = ["no"] }\n'
        '[[inappropriate]]\nvalue = "yes"\nwhen = { content = ["yes"] }\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["rag", "merge-labels", str(tmp_path / "raw.jsonl"),
                                      "--rules", str(tmp_path / "rules.toml"), "--out",
                                      str(tmp_path / "merged.jsonl")])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "inappropriate: no: 1, yes: 1; 1 unlabelled" in output
    assert "replaced a: yes → no" in output and "replaced b: yes → none" in output
    assert "replaced c:" not in output  # unchanged
    assert [i.labels.inappropriate for i in read_rag_items(tmp_path / "merged.jsonl")] == [
        "no", None, "yes"]
