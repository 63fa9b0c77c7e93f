"""Health-memory requirements by meaning: names, abbreviations and LOINC codes; units and
plausible values checked against the analyte; a user's vocabulary file on top."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import ConfigError, InputError
from assay.health_memory import HealthMemory
from assay.io import iter_items
from assay.routing import Catalogue
from assay.vocabulary import VOCABULARY_ENV, Vocabulary, vocabulary

runner = CliRunner()


def _lab(name, value, unit, **extra):
    return HealthMemory.model_validate({"labs": [{"name": name, "value": value, "unit": unit,
                                                  **extra}]})


def _wearable(metric, unit, mean):
    return HealthMemory.model_validate({"wearables": [{"metric": metric, "unit": unit,
                                                       "mean": mean}]})


# Each of these was decided by raw substring before: the first five were silently missed, the
# last two matched a leaf they do not concern.
@pytest.mark.parametrize("memory, requirement, expected", [
    (lambda: _wearable("heart rate variability", "ms", 42), "wearable:hrv", True),
    (lambda: _wearable("RHR", "bpm", 61), "wearable:resting heart rate", True),
    (lambda: _wearable("Blood oxygen", "%", 96), "wearable:spo2", True),
    (lambda: _lab("Cr", 1.1, "mg/dL"), "lab:creatinine", True),
    (lambda: _lab("Glycated hemoglobin", 7.9, "%"), "lab:hba1c", True),
    (lambda: _lab("Glycated hemoglobin", 7.9, "%"), "lab:hemoglobin", False),
    (lambda: _wearable("heart rate variability", "ms", 42), "wearable:heart rate", False),
])
def test_requirements_match_by_meaning_not_substring(memory, requirement, expected):
    assert memory().has(requirement) is expected


def test_a_lab_matches_by_its_loinc_code_whatever_its_name():
    assert _lab("Sugar control test", 7.1, "%", loinc="4548-4").has("lab:hba1c")


def test_a_name_in_parentheses_counts():
    assert _lab("Glycosylated Hb (HbA1c)", 6.1, "%").has("lab:hba1c")


def test_conditions_match_whole_words_not_inside_other_words():
    memory = HealthMemory.model_validate({"conditions": [{"name": "prediabetes"}]})
    assert not memory.has("condition:diabetes") and memory.has("condition:prediabetes")


def test_a_broader_wearable_term_is_met_by_a_narrower_metric():
    assert _wearable("Deep sleep", "min", 70).has("wearable:sleep")


def test_a_lab_unit_that_is_not_the_analytes_is_refused_with_line_and_field(tmp_path):
    path = tmp_path / "items.jsonl"
    labs = [{"name": "LDL-C", "value": 130, "unit": "mg/dL"},
            {"name": "HbA1c", "value": 7.9, "unit": "mg/dL"}]
    path.write_text(json.dumps({"id": "q", "prompt": "A1c?", "health_memory": {"labs": labs}})
                    + "\n")
    with pytest.raises(InputError) as caught:
        list(iter_items(path))
    assert [str(i) for i in caught.value.issues] == [
        f"{path}:1: health_memory.labs[1].unit: 'mg/dL' is not a unit of hba1c: use %, mmol/mol"]


def test_an_implausible_lab_value_is_refused_on_its_value_field(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "q", "prompt": "A1c?", "health_memory": {"labs": [
        {"name": "HbA1c", "value": 79, "unit": "%"}]}}) + "\n")
    with pytest.raises(InputError) as caught:
        list(iter_items(path))
    assert [str(i) for i in caught.value.issues] == [
        f"{path}:1: health_memory.labs[0].value: HbA1c 79 % is not plausible (hba1c in %: "
        + "3 to 20)"]


def test_a_known_analyte_without_a_unit_is_refused():
    with pytest.raises(ValueError, match="no unit given; ldl is recorded in mg/dL, mmol/L"):
        _lab("LDL", 130, "")


def test_an_implausible_wearable_value_is_refused():
    with pytest.raises(ValueError, match="resting heart rate 400 bpm is not plausible"):
        _wearable("resting heart rate", "bpm", 400)


def test_a_lab_the_vocabulary_does_not_know_keeps_any_plausible_value_and_unit():
    assert _lab("Galectin-3", 15, "ng/mL").has("lab:galectin-3")
    assert _lab("Galectin-3", 15, "furlongs").has("lab:galectin-3")  # no unit to judge by


def _user_file(tmp_path, body):
    path = tmp_path / "mine.yaml"
    path.write_text(body)
    return path


def test_a_user_file_adds_names_to_a_shipped_term(tmp_path, monkeypatch):
    path = _user_file(tmp_path, "version: site-1\nterms:\n  lab:\n  - id: hba1c\n"
                                "    names: [glyco-a]\n")
    assert not _lab("Glyco-A", 6.0, "%").has("lab:hba1c")
    monkeypatch.setenv(VOCABULARY_ENV, str(path))
    assert _lab("Glyco-A", 6.0, "%").has("lab:hba1c")
    assert vocabulary().version.startswith(Vocabulary.shipped().version + "+")


def test_a_name_given_to_two_terms_is_refused_with_its_line(tmp_path):
    path = _user_file(tmp_path, "version: x\nterms:\n  lab:\n  - id: a\n    names: [zed]\n"
                                "  - id: b\n    names: [zed]\n")
    with pytest.raises(InputError) as caught:
        Vocabulary.load(path)
    assert [str(i) for i in caught.value.issues] == [
        f"{path}:6: terms.lab[1]: name 'zed' of 'b' already names 'a'"]


def test_the_cli_option_reports_a_bad_vocabulary_file_and_exits_1(tmp_path, monkeypatch):
    monkeypatch.setenv(VOCABULARY_ENV, "")  # the option sets it in this process: undone after
    path = _user_file(tmp_path, "version: x\nterms:\n  diet:\n  - id: keto\n")
    result = runner.invoke(app, ["--health-vocabulary", str(path), "taxonomy", "lint",
                                 "starter"])
    assert result.exit_code == 1
    assert f"{path}:3: terms: unknown kinds ['diet']" in result.output


def test_the_routing_guard_says_which_requirement_excluded_a_leaf():
    import asyncio

    from assay.item import Item
    from assay.routing.base import Router, Selection

    class Everything(Router):
        kind = "everything"

        async def select(self, query, eligible, trace):
            return [Selection(id=e.id) for e in eligible]

    catalogue = Catalogue.from_criteria([
        {"id": "a1c", "text": "Uses the HbA1c.", "metadata": {"requires": ["lab:hba1c"]}},
        {"id": "hb", "text": "Uses the hemoglobin.", "metadata": {"requires": "lab:hemoglobin"}}])
    item = Item(id="q", prompt="A1c?", health_memory={"labs": [
        {"name": "Glycated hemoglobin", "value": 7.9, "unit": "%"}]})
    routing = asyncio.run(Everything(catalogue).route(item))
    assert routing.ids == ["a1c"]
    assert routing.excluded == {"hb": "health memory has no lab:hemoglobin"}


def test_requires_of_the_wrong_type_is_a_config_error_not_a_traceback():
    with pytest.raises(ConfigError, match="metadata.requires: expected a requirement"):
        Catalogue.from_criteria([{"id": "x", "text": "X.", "metadata": {"requires": 7}}])


def test_lint_flags_a_requirement_the_vocabulary_does_not_know(tmp_path):
    from assay.io.taxonomy_check import lint_taxonomy

    path = tmp_path / "t.yaml"
    path.write_text("id: t\nroot:\n  id: root\n  name: All\n  children:\n"
                    "  - id: a\n    name: A\n    criterion:\n      id: a\n      text: A.\n"
                    "      trigger: labs\n      metadata: {requires: ['lab:glycohb']}\n")
    [issue] = lint_taxonomy(path, leaf_depths=())
    assert (issue.line, issue.field) == (12, "root.children[0].criterion.metadata.requires[0]")
    assert "lab 'glycohb' is not in the health vocabulary" in issue.message
