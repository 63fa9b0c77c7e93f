"""Health memory on items: validated with located errors, rendered stably, usable in triggers."""

from __future__ import annotations

import json

import pytest

from assay.errors import InputError
from assay.health_memory import HealthMemory
from assay.io import iter_items
from assay.item import Item
from assay.rubric import Taxonomy

MEMORY = {
    "profile": {"age": 52, "sex": "male", "height_cm": 178, "weight_kg": 94},
    "conditions": [{"name": "hypertension", "since": "2021", "status": "active"}],
    "medications": [{"name": "lisinopril", "dose": "10 mg", "frequency": "once daily"}],
    "labs": [{"name": "LDL-C", "value": 168, "unit": "mg/dL", "reference_range": {"high": 130},
              "date": "2026-10-02"},
             {"name": "HDL-C", "value": 38, "unit": "mg/dL", "reference_range": {"low": 40}},
             {"name": "HbA1c", "value": 5.4, "unit": "%",
              "reference_range": {"low": 4.0, "high": 5.6}}],
    "wearables": [{"metric": "resting heart rate", "unit": "bpm", "days": 7, "mean": 71,
                   "latest": 74, "baseline": 66}],
}


def test_the_rendering_is_stable_and_complete():
    assert HealthMemory.model_validate(MEMORY).render() == (
        "Profile: age 52; sex male; height 178 cm; weight 94 kg\n"
        "Conditions:\n- hypertension (since 2021; active)\n"
        "Medications:\n- lisinopril 10 mg once daily\n"
        "Labs:\n- LDL-C: 168 mg/dL (reference <= 130; HIGH) on 2026-10-02\n"
        "- HDL-C: 38 mg/dL (reference >= 40; LOW)\n"
        "- HbA1c: 5.4 % (reference 4-5.6; NORMAL)\n"
        "Wearables:\n- resting heart rate over 7 days: mean 71 bpm, latest 74 bpm, baseline 66 bpm")


@pytest.mark.parametrize("requirement, expected", [
    ("lab", True), ("lab:ldl", True), ("labs:LDL", True), ("lab:ldl:abnormal", True),
    ("lab:hba1c:abnormal", False), ("lab:tsh", False), ("condition:hypertension", True),
    ("medication:statin", False), ("wearable:resting heart rate", True), ("wearable:hrv", False),
    ("profile:age", True), ("profile:occupation", False)])
def test_requirements_read_the_memory(requirement, expected):
    assert HealthMemory.model_validate(MEMORY).has(requirement) is expected


def test_an_unknown_requirement_kind_is_refused():
    with pytest.raises(ValueError, match="unknown health-memory requirement 'diet:keto'"):
        HealthMemory().has("diet:keto")


def test_a_bad_lab_in_an_items_file_names_the_line_and_field(tmp_path):
    bad = json.loads(json.dumps(MEMORY))
    bad["labs"][1]["value"] = "low"
    bad["labs"][2]["reference_range"] = {"low": 6, "high": 5}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "ok", "prompt": "hi"}) + "\n"
                    + json.dumps({"id": "q", "prompt": "LDL?", "health_memory": bad}) + "\n")
    with pytest.raises(InputError) as caught:
        list(iter_items(path))
    messages = [str(i) for i in caught.value.issues]
    assert f"{path}:2: health_memory.labs[1].value: expected a number, got \"low\"" in messages
    assert any(m.startswith(f"{path}:2: health_memory.labs[2].reference_range.low: low (6")
               for m in messages)


def test_items_without_health_memory_are_unchanged():
    item = Item(id="q", prompt="hi")
    assert item.health_memory is None and "health_memory" not in item.model_dump(
        exclude_defaults=True)


def test_a_penalty_leaf_keeps_its_sign_in_the_tree_rubric():
    tree = Taxonomy(id="t", root={"id": "r", "name": "r", "children": [
        {"id": "good", "name": "good", "criterion": {"id": "good", "text": "Helps."}},
        {"id": "bad", "name": "bad", "criterion": {"id": "bad", "text": "Harms.", "weight": -1}}]})
    assert {c.id: c.weight for c in tree.to_rubric().criteria} == {"good": 0.5, "bad": -0.5}
