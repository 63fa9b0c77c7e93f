"""Health memory by meaning (issue 43 §1): names as lab systems and apps write them, LOINC codes,
brands, negation and experiencer, units converted before plausibility, FHIR resources."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError
from assay.health_memory import HealthMemory
from assay.io import iter_items
from assay.vocabulary.reading import read_entry
from assay.vocabulary.units import convert

ROOT = Path(__file__).parents[2]
CASES = ROOT / "tests" / "data" / "health_memory" / "entries.yaml"


def _benchmark():
    spec = importlib.util.spec_from_file_location("health_memory_benchmark",
                                                  ROOT / "benchmarks" / "health_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lab(name, value, unit, **extra):
    return HealthMemory.model_validate({"labs": [{"name": name, "value": value, "unit": unit,
                                                  **extra}]})


def test_the_entry_set_is_kept_apart_and_read_right_at_least_nine_times_in_ten():
    cases = yaml.safe_load(CASES.read_text())["cases"]
    vocabulary = (ROOT / "src" / "assay" / "vocabulary" / "health-vocabulary.yaml").read_text()
    assert len(cases) >= 60 and "entries.yaml" not in vocabulary
    counts, misses = _benchmark().run(CASES)
    right, total = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
    assert right / total >= 0.9, misses
    assert {kind for kind in counts} == {"lab", "wearable", "condition", "medication"}


# The names the held-out check missed (issue 43 §1), each as a report or an app writes it.
@pytest.mark.parametrize("section, entry, requirement", [
    ("labs", {"name": "Glucose, fasting", "value": 95, "unit": "mg/dL"}, "lab:glucose"),
    ("labs", {"name": "Creatinine, serum", "value": 1.1, "unit": "mg/dL"}, "lab:creatinine"),
    ("labs", {"name": "Vitamin D, 25-Hydroxy, Total", "value": 32, "unit": "ng/mL"},
     "lab:vitamin d"),
    ("labs", {"name": "LDL Chol Calc (NIH)", "value": 131, "unit": "mg/dL"}, "lab:ldl"),
    ("labs", {"name": "TSH, 3rd generation", "value": 2.1, "unit": "uIU/mL"}, "lab:tsh"),
    ("labs", {"name": "eGFR CKD-EPI 2021", "value": 78, "unit": "mL/min/1.73m2"}, "lab:egfr"),
    ("labs", {"name": "HgbA1c", "value": 7.2, "unit": "%"}, "lab:hba1c"),
    ("labs", {"name": "FBS", "value": 101, "unit": "mg/dL"}, "lab:glucose"),
    ("labs", {"name": "A1C test", "value": 7.2, "unit": "%", "loinc": "17856-6"}, "lab:hba1c"),
    ("labs", {"name": "Glucose POC", "value": 5.9, "unit": "mmol/L", "loinc": "2339-0"},
     "lab:glucose"),
    ("labs", {"name": "Lipids", "value": 118, "unit": "mg/dL", "loinc": "18262-6"}, "lab:ldl"),
    ("conditions", {"name": "DM2"}, "condition:diabetes"),
    ("conditions", {"name": "NIDDM"}, "condition:type 2 diabetes"),
    ("conditions", {"name": "High BP"}, "condition:hypertension"),
    ("conditions", {"name": "Hypothyroid"}, "condition:hypothyroidism"),
    ("medications", {"name": "Lipitor 20 mg"}, "medication:atorvastatin"),
    ("medications", {"name": "Lipitor 20 mg"}, "medication:statin"),
    ("medications", {"name": "Eliquis"}, "medication:anticoagulant"),
    ("medications", {"name": "Toprol XL"}, "medication:metoprolol"),
    ("wearables", {"metric": "Daily resting heart rate", "unit": "bpm", "mean": 58},
     "wearable:resting heart rate"),
    ("wearables", {"metric": "Overnight HRV", "unit": "ms", "mean": 42}, "wearable:hrv"),
    ("wearables", {"metric": "Avg SpO2", "unit": "%", "mean": 96}, "wearable:spo2"),
])
def test_names_as_lab_reports_and_apps_write_them_meet_their_requirement(section, entry,
                                                                       requirement):
    assert HealthMemory.model_validate({section: [entry]}).has(requirement)


def test_a_specimen_that_changes_the_analyte_is_not_stripped():
    urine = _lab("Creatinine, Urine", 120, "mg/dL")
    assert urine.has("lab:urine creatinine") and not urine.has("lab:creatinine")


def test_pre_diabetes_is_not_diabetes_and_diabetes_insipidus_is_not_either():
    for name in ("Pre-diabetes", "Diabetes insipidus"):
        memory = HealthMemory.model_validate({"conditions": [{"name": name}]})
        assert not memory.has("condition:diabetes"), name


@pytest.mark.parametrize("name, status", [
    ("Family history of type 2 diabetes", None), ("Mother has type 2 diabetes", None),
    ("FHx: diabetes (father)", None), ("No history of diabetes", None),
    ("Diabetes ruled out", None), ("Denies diabetes", None), ("r/o diabetes", None),
    ("Type 2 diabetes", "refuted"), ("Type 2 diabetes", "entered-in-error")])
def test_a_relatives_or_negated_condition_never_activates_the_users_own(name, status):
    condition = {"name": name, **({"status": status} if status else {})}
    memory = HealthMemory.model_validate({"conditions": [condition]})
    assert not memory.has("condition:diabetes") and not memory.has("condition")
    assert "diabetes" in (read_entry("condition", name).concept or "")


def test_the_users_own_past_or_qualified_condition_still_counts():
    for name in ("History of type 2 diabetes", "Type 2 diabetes mellitus without complications",
                 "Type 2 diabetes, no retinopathy"):
        assert HealthMemory.model_validate({"conditions": [{"name": name}]}).has(
            "condition:diabetes"), name


def test_a_stopped_medicine_or_an_allergy_is_not_the_users_medication():
    for entry in ({"name": "Stopped metformin"}, {"name": "Allergic to penicillin"},
                  {"name": "Metformin 500 mg", "status": "stopped"}):
        memory = HealthMemory.model_validate({"medications": [entry]})
        assert not memory.has("medication"), entry


def test_the_family_history_leaf_guard_excludes_the_users_diabetes_leaf():
    import asyncio

    from assay.item import Item
    from assay.routing import Catalogue
    from assay.routing.base import Router, Selection

    class Everything(Router):
        kind = "everything"

        async def select(self, query, eligible, trace):
            return [Selection(id=e.id) for e in eligible]

    catalogue = Catalogue.from_criteria([
        {"id": "dm", "text": "Relates the advice to the user's diabetes.",
         "metadata": {"requires": ["condition:diabetes"]}},
        {"id": "er", "text": "Advises emergency care when needed."}])
    item = Item(id="q", prompt="What should I eat?", health_memory={"conditions": [
        {"name": "Family history of type 2 diabetes"}]})
    routing = asyncio.run(Everything(catalogue).route(item))
    assert routing.ids == ["er"] and routing.excluded == {
        "dm": "health memory has no condition:diabetes"}


# Published conversion factors, independent of pint: glucose 1 mmol/L = 18.016 mg/dL,
# cholesterol 38.67, triglycerides 88.57, creatinine 1 mg/dL = 88.42 umol/L, vitamin D
# 1 ng/mL = 2.496 nmol/L, hemoglobin 1 g/dL = 10 g/L; HbA1c from the NGSP/IFCC table.
@pytest.mark.parametrize("value, source, target, molar_mass, expected", [
    (5.5, "mmol/L", "mg/dL", 180.156, 5.5 * 18.016),
    (5.2, "mmol/L", "mg/dL", 386.65, 5.2 * 38.67),
    (1.7, "mmol/L", "mg/dL", 885.7, 1.7 * 88.57),
    (1.0, "mg/dL", "umol/L", 113.12, 88.42),
    (30, "ng/mL", "nmol/L", 400.64, 30 * 2.496),
    (13.5, "g/dL", "g/L", None, 135),
])
def test_conversions_match_published_factors(value, source, target, molar_mass, expected):
    assert convert(value, source, target, molar_mass=molar_mass) == pytest.approx(expected,
                                                                                 rel=2e-3)


@pytest.mark.parametrize("percent, mmol_per_mol", [(5.0, 31), (6.0, 42), (6.5, 48), (7.0, 53),
                                                   (8.0, 64), (9.0, 75), (10.0, 86)])
def test_hba1c_converts_between_percent_and_mmol_per_mol_as_the_ngsp_table(percent,
                                                                            mmol_per_mol):
    assert round(read_entry("lab", "HbA1c", value=mmol_per_mol, unit="mmol/mol").value, 1) \
        == pytest.approx(percent, abs=0.1)
    assert round(convert(percent, "%", "mmol/mol", affine={"% -> mmol/mol": (10.929, -23.497)})) \
        == mmol_per_mol


def test_a_value_in_another_unit_is_converted_before_its_plausibility_check():
    assert _lab("Glucose", 5.4, "mmol/L").has("lab:glucose")
    assert read_entry("lab", "Glucose, serum", value=97, unit="mg/dL").value == 97
    with pytest.raises(ValueError, match=r"Glucose 30 g/L \(3000 mg/dL\) is not plausible"):
        _lab("Glucose", 30, "g/L")
    with pytest.raises(ValueError, match="HbA1c 48 % is not plausible"):  # mmol/mol as %
        _lab("HbA1c", 48, "%")


def test_an_implausible_value_is_refused_with_line_and_field_even_for_an_unknown_name(tmp_path):
    path = tmp_path / "items.jsonl"
    labs = [{"name": "FBS", "value": 9000, "unit": "mg/dL"},
            {"name": "Zonulin, serum", "value": 50000, "unit": "mg/dL"},
            {"name": "Galectin-3", "value": 15, "unit": "ng/mL"}]
    path.write_text(json.dumps({"id": "q", "prompt": "?", "health_memory": {"labs": labs}})
                    + "\n")
    with pytest.raises(InputError) as caught:
        list(iter_items(path))
    messages = [str(i) for i in caught.value.issues]
    assert messages[0] == (f"{path}:1: health_memory.labs[0].value: FBS 9000 mg/dL is not "
                           "plausible (glucose in mg/dL: 10 to 1500)")
    assert messages[1].startswith(f"{path}:1: health_memory.labs[1].value: 'Zonulin, serum' is "
                                  "not in the health vocabulary, and 50000 mg/dL is not "
                                  "plausible for any of the")
    assert len(messages) == 2            # Galectin-3 15 ng/mL is plausible: kept


# --- FHIR --------------------------------------------------------------------------------------

def _observation(code, display, value, unit, category="laboratory", **extra):
    return {"resourceType": "Observation", "status": "final",
            "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/"
                                      "observation-category", "code": category}]}],
            "code": {"coding": [{"system": "http://loinc.org", "code": code,
                                 "display": display}]},
            "effectiveDateTime": "2026-03-02T08:00:00Z",
            "valueQuantity": {"value": value, "unit": unit, "system": "http://unitsofmeasure.org",
                              "code": unit}, **extra}


FHIR_BUNDLE = {"resourceType": "Bundle", "type": "collection", "entry": [
    {"resource": _observation("2339-0", "Glucose [Mass/volume] in Blood", 6.1, "mmol/L",
                              referenceRange=[{"low": {"value": 3.9}, "high": {"value": 5.5}}])},
    {"resource": _observation("59408-5", "Oxygen saturation by Pulse oximetry", 95, "%",
                              category="vital-signs")},
    {"resource": {"resourceType": "Observation", "status": "final",
                  "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9",
                                       "display": "Blood pressure panel"}]},
                  "component": [
                      {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6",
                                            "display": "Systolic blood pressure"}]},
                       "valueQuantity": {"value": 142, "unit": "mmHg"}},
                      {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4",
                                            "display": "Diastolic blood pressure"}]},
                       "valueQuantity": {"value": 91, "unit": "mmHg"}}]}},
    {"resource": {"resourceType": "Condition", "subject": {"reference": "Patient/1"},
                  "code": {"text": "Type 2 diabetes mellitus"},
                  "clinicalStatus": {"coding": [{"code": "active"}]},
                  "onsetDateTime": "2019-05-01"}},
    {"resource": {"resourceType": "Condition", "subject": {"reference": "Patient/1"},
                  "code": {"text": "Atrial fibrillation"},
                  "verificationStatus": {"coding": [{"code": "refuted"}]}}},
    {"resource": {"resourceType": "MedicationStatement", "status": "active",
                  "subject": {"reference": "Patient/1"},
                  "medicationCodeableConcept": {"text": "Eliquis 5 mg tablet"},
                  "dosage": [{"text": "1 tablet twice daily"}]}},
    {"resource": {"resourceType": "MedicationStatement", "status": "stopped",
                  "subject": {"reference": "Patient/1"},
                  "medicationCodeableConcept": {"text": "Metformin 500 mg"}}},
]}


def test_fhir_resources_are_read_into_the_memory_by_meaning():
    memory = HealthMemory.model_validate(FHIR_BUNDLE)
    assert memory.labs[0].name == "Glucose [Mass/volume] in Blood"
    assert memory.labs[0].loinc == "2339-0" and memory.labs[0].flag == "HIGH"
    assert round(memory.labs[0].reading().value) == 110                 # 6.1 mmol/L in mg/dL
    assert [w.metric for w in memory.wearables] == ["spo2 (Oxygen saturation by Pulse oximetry)",
                                                    "Systolic blood pressure",
                                                    "Diastolic blood pressure"]
    assert memory.has("lab:glucose") and memory.has("wearable:spo2")
    assert memory.has("wearable:blood pressure") and memory.has("condition:diabetes")
    assert not memory.has("condition:atrial fibrillation")              # refuted
    assert memory.has("medication:apixaban") and not memory.has("medication:metformin")
    assert "- Eliquis 5 mg tablet 1 tablet twice daily (active)" in memory.render()


def test_fhir_r5_medication_and_a_fhir_list_beside_other_sections():
    statement = {"resourceType": "MedicationStatement", "status": "recorded",
                 "subject": {"reference": "Patient/1"},
                 "medication": {"concept": {"text": "Toprol XL 50 mg"}}}
    memory = HealthMemory.model_validate({"profile": {"age": 61}, "fhir": [statement]})
    assert memory.profile.age == 61 and memory.has("medication:beta blocker")


def test_an_invalid_fhir_resource_is_refused_with_line_and_field(tmp_path):
    bad = _observation("2339-0", "Glucose", 6.1, "mmol/L")
    bad["status"] = 7
    unknown = {"resourceType": "Patient", "id": "1"}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "ok", "prompt": "?", "health_memory": {"fhir": [bad]}})
                    + "\n" + json.dumps({"id": "pt", "prompt": "?", "health_memory": [unknown]})
                    + "\n")
    issues: list = []
    assert list(iter_items(path, issues=issues)) == []
    messages = [str(i) for i in issues]
    assert messages[0].startswith(f"{path}:1: health_memory.fhir[0].status: not a valid FHIR "
                                  "Observation")
    assert messages[1] == (f"{path}:2: health_memory.fhir[0].resourceType: 'Patient' is not read "
                           "into a health memory: give Observation, Condition, "
                           "MedicationStatement")


def test_a_fhir_memory_goes_through_a_command_end_to_end(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q", "messages": [
        {"role": "system", "content": "Use the user's data."},
        {"role": "user", "content": "Is my sugar under control?"}],
        "health_memory": FHIR_BUNDLE}) + "\n")
    out = CliRunner().invoke(app, ["stress", "make", str(items), "--out", str(tmp_path / "s")])
    assert out.exit_code == 0, out.output
    missing = json.loads((tmp_path / "s" / "missing_user_data.jsonl").read_text())
    # the glycaemic data the question needs is masked; the rest of the FHIR memory stays
    assert missing["health_memory"].get("labs", []) == []
    assert [c["name"] for c in missing["health_memory"]["conditions"]] == ["Atrial fibrillation"]
