"""Rubrics (Assay documents and Autorubric lists) and taxonomies as YAML/JSON files."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.io import read_rubric, read_taxonomy, validate_file, write_rubric
from assay.io.autorubric import from_rubric, to_rubric
from assay.rubric import Rubric

AUTORUBRIC_YAML = """\
- name: satisfaction
  requirement: "How satisfied would you be with this response?"
  weight: 10.0
  scale_type: ordinal
  options: [{label: "1", value: 0.0}, {label: "2", value: 0.33},
            {label: "3", value: 0.67}, {label: "4", value: 1.0}]
- name: efficiency
  requirement: "Is the number of exchange turns appropriate?"
  weight: 5.0
  scale_type: nominal
  aggregation: mode
  options: [{label: "Too few", value: 0.0}, {label: "Too many", value: 0.0},
            {label: "Just right", value: 1.0}, {label: "Cannot tell", na: true}]
- requirement: "Mentions the dose."
"""

TAXONOMY_YAML = """\
id: pha
root:
  id: root
  name: all
  children:
    - id: skills
      name: Medical skills
      children:
        - {id: s1, name: Refers, criterion: {id: s1, text: Refers chest pain to the ER.}}
        - {id: s2, name: Scope, criterion: {id: s2, text: Does not diagnose.}}
    - id: m1
      name: Memory
      criterion: {id: m1, text: Mentions the HbA1c.}
"""


@pytest.fixture
def rubric():
    return Rubric(id="bee", guidelines="Be strict.", criteria=[
        {"id": "scrape", "text": "Says to scrape.", "weight": 5, "axis": "accuracy",
         "provenance": {"source": "physician", "evidence": ["pmid:1"]}},
        {"id": "tweezers", "text": "Recommends tweezers.", "weight": -2},
        {"id": "clarity", "text": "How clear?", "kind": "nominal", "options": [
            {"label": "muddled", "value": 0}, {"label": "clear", "value": 1}]}])


@pytest.mark.parametrize("name", ["bee.yaml", "bee.json"])
def test_an_assay_rubric_round_trips(rubric, tmp_path, name):
    write_rubric(rubric, tmp_path / name)
    assert read_rubric(tmp_path / name) == rubric


def test_an_autorubric_yaml_list_is_imported(tmp_path):
    path = tmp_path / "charm.yaml"
    path.write_text(AUTORUBRIC_YAML)
    rubric = read_rubric(path)
    assert rubric.id == "charm"
    assert [(c.id, c.kind.value, c.weight) for c in rubric.criteria[:2]] == [
        ("satisfaction", "ordinal", 10.0), ("efficiency", "nominal", 5.0)]
    assert [o.value for o in rubric.criteria[0].options] == [0.0, 0.33, 0.67, 1.0]
    assert rubric.criteria[1].options[3].na and rubric.criteria[1].metadata == {
        "aggregation": "mode"}


def test_an_autorubric_criterion_without_weight_weighs_ten_and_without_name_gets_a_derived_id(
        tmp_path):
    path = tmp_path / "charm.yaml"
    path.write_text(AUTORUBRIC_YAML)
    last = read_rubric(path).criteria[2]
    assert last.weight == 10.0 and last.kind.value == "binary" and last.id.startswith("c-")


def test_a_rubric_exported_as_autorubric_imports_back_the_same(rubric):
    back = to_rubric(from_rubric(rubric), id="bee")
    assert [(c.id, c.text, c.weight, c.kind, c.options) for c in back.criteria] == [
        (c.id, c.text, c.weight, c.kind, c.options) for c in rubric.criteria]


def test_autorubric_errors_use_autorubric_field_names_and_lines(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("- requirement: Mentions dose.\n  weight: heavy\n"
                    "- requirement: ''\n"
                    "- requirement: Pick one\n  options: [{label: a, value: 2}, {label: b, value: 0}]\n")
    with pytest.raises(InputError) as raised:
        read_rubric(path)
    assert [(i.line, i.field, i.message) for i in raised.value.issues] == [
        (2, "[0].weight", 'expected a number, got "heavy"'),
        (3, "[1].requirement", "must not be empty"),
        (5, "[2].options[0].value", "option 'a' has value 2.0, outside [0, 1]"),
    ]


def test_rubric_document_errors_name_line_and_field(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("id: r\ncriteria:\n  - id: a\n    text: Says hi.\n  - id: a\n    text: Waves.\n")
    [issue] = validate_file(path)
    assert (issue.line, issue.field) == (5, "criteria[1].id")
    assert issue.message == "duplicate criterion id 'a' (same as criteria[0].id)"


def test_a_rubric_of_penalties_only_is_rejected(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"id": "r", "criteria": [{"text": "Swears.", "weight": -1}]}')
    [issue] = validate_file(path)
    assert issue.field == "criteria" and "no criterion with a positive weight" in issue.message


def test_a_taxonomy_is_read_with_its_auto_weights(tmp_path):
    path = tmp_path / "tree.yaml"
    path.write_text(TAXONOMY_YAML)
    assert read_taxonomy(path).auto_weights() == {"s1": 0.25, "s2": 0.25, "m1": 0.5}


def test_taxonomy_errors_name_line_and_field(tmp_path):
    path = tmp_path / "tree.yaml"
    path.write_text(TAXONOMY_YAML.replace("id: m1\n      name: Memory", "id: s2\n      name: ''"))
    # every problem of the edited node at once: its id repeats s2, its name is empty, and its
    # criterion keeps the id m1
    assert [(i.line, i.field) for i in validate_file(path)] == [
        (11, "root.children[1].id"), (12, "root.children[1].name"),
        (13, "root.children[1].criterion.id")]


def test_an_unsupported_extension_is_an_issue_not_a_crash(tmp_path):
    path = tmp_path / "rubric.txt"
    path.write_text("hi")
    [issue] = validate_file(path)
    assert "unsupported file type '.txt'" in issue.message


def test_a_missing_file_is_an_issue(tmp_path):
    [issue] = validate_file(tmp_path / "nope.yaml")
    assert issue.message == "no such file"
