"""One reader per kind of file (``assay.io``): every command that reads a verdict, rubric or
label file accepts and refuses the same files, with the same located errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError
from assay.io import check_file, read_labels, read_rubric_file, read_verdicts
from assay.metrics.sources import read_rubrics, verdicts_of

RUBRIC = """id: r
criteria:
  - {id: x, text: Explains x., weight: 3}
  - {id: y, text: Explains y., weight: 1}
"""
TAXONOMY = """id: t
root:
  id: root
  name: all
  children:
    - {id: x, name: x, criterion: {id: x, text: Explains x.}}
    - {id: y, name: y, criterion: {id: y, text: Explains y.}}
"""


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _verdicts(judge="gpt", items=("q1", "q2")):
    return [{"item_id": i, "criterion_id": c, "verdict": "MET" if c == "x" else "UNMET",
             "judge": judge} for i in items for c in "xy"]


def _item(item_id, rubric=True):
    row = {"id": item_id, "prompt": "Explain.", "response": "x.", "tags": ["theme:t"]}
    if rubric:
        row["rubric"] = {"id": f"r-{item_id}", "criteria": [{"id": "x", "text": "Explains x."},
                                                             {"id": "y", "text": "Explains y."}]}
    return row


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


# -- rubric files: decided by content, one rule ------------------------------------------------

def test_an_item_without_a_rubric_is_an_error_naming_its_line_for_score_and_metrics(tmp_path):
    items = _write(tmp_path / "items.jsonl", [_item("q1"), _item("q2", rubric=False)])
    verdicts = _write(tmp_path / "v.jsonl", _verdicts())
    labels = _write(tmp_path / "labels.jsonl", _verdicts("dr"))
    expected = f"{items}:2: rubric: the item has no rubric"
    with pytest.raises(InputError, match="the item has no rubric") as caught:
        read_rubric_file(items)
    assert str(caught.value).startswith(expected)
    for command in (["score", verdicts, "--rubric", items],
                    ["agreement", verdicts, "--labels", labels, "--rubric", items]):
        result = run(*command)
        assert result.exit_code == 1, command
        assert expected in " ".join(result.output.split()), command


def test_a_json_item_list_is_a_rubric_file_for_score_not_only_jsonl(tmp_path):
    items = tmp_path / "items.json"
    items.write_text(json.dumps([_item("q1"), _item("q2")]))
    verdicts = _write(tmp_path / "v.jsonl", _verdicts())
    out = tmp_path / "s.json"
    result = run("score", verdicts, "--rubric", items, "--json", out)
    assert result.exit_code == 0, result.output
    assert [r["score"] for r in json.loads(out.read_text())["items"]] == [0.5, 0.5]


def test_a_taxonomy_is_one_shared_rubric_for_score_and_metrics(tmp_path):
    taxonomy = tmp_path / "tree.yaml"
    taxonomy.write_text(TAXONOMY)
    verdicts = _write(tmp_path / "v.jsonl", _verdicts())
    assert read_rubrics(taxonomy).criteria("any item")[0].id == "x"
    out = tmp_path / "s.json"
    result = run("score", verdicts, "--rubric", taxonomy, "--json", out)
    assert result.exit_code == 0, result.output
    # auto-weights 1/2 each: x met, y not
    assert [r["score"] for r in json.loads(out.read_text())["items"]] == [0.5, 0.5]


def test_a_shared_rubric_applies_to_every_item_and_an_item_file_to_its_own(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(RUBRIC)
    items = _write(tmp_path / "items.jsonl", [_item("q1"), _item("q2")])
    shared, own = read_rubric_file(rubric), read_rubric_file(items)
    assert shared.shared.id == "r" and shared.per_item == {}
    assert read_rubrics(rubric).rubric("anything").id == "r"
    assert own.shared is None and {k: r.id for k, r in own.per_item.items()} == {
        "q1": "r-q1", "q2": "r-q2"}
    assert own.tags == {"q1": ["theme:t"], "q2": ["theme:t"]}
    assert own.responses == {"q1": "x.", "q2": "x."}
    assert read_rubrics(items).rubric("q3") is None


@pytest.mark.parametrize("name", ["v.jsonl", "missing.yaml"])
def test_a_verdict_file_or_no_file_is_not_a_rubric_file(tmp_path, name):
    path = tmp_path / name
    if name == "v.jsonl":
        _write(path, _verdicts())
    with pytest.raises(InputError) as caught:
        read_rubric_file(path)
    message = str(caught.value)
    assert message.startswith(str(path))
    assert ("a verdicts file holds no rubric" if name == "v.jsonl" else
            "no such rubric file") in message


def test_the_fake_judge_reads_rubric_files_by_the_same_rule(tmp_path):
    from assay.testing.options import option_scales

    items = _write(tmp_path / "items.jsonl", [_item("q1"), _item("q2", rubric=False)])
    with pytest.raises(InputError, match="items.jsonl:2: rubric: the item has no rubric"):
        option_scales(items)
    listed = tmp_path / "items.json"
    row = _item("q1")
    row["rubric"]["criteria"].append({"id": "pain", "text": "Explains pain.", "options": [
        {"label": "poorly", "value": 0}, {"label": "well", "value": 1}]})
    listed.write_text(json.dumps([row]))
    scale = option_scales(listed)["pain"]
    assert (scale.highest, scale.lowest) == ("well", "poorly")


# -- verdict files: one parse for read, metrics and validate -----------------------------------

def test_read_metrics_and_validate_report_a_bad_verdict_line_the_same_way(tmp_path):
    bad = tmp_path / "v.jsonl"
    bad.write_text('{"item_id": "q0", "criterion_id": "x", "verdict": "MET"}\n'
                   '{"item_id": "q1", "criterion_id": "x", "verdict": "MAYBE"}\n'
                   '{"item_id": "q1"\n')
    with pytest.raises(InputError) as read:
        read_verdicts(bad)
    with pytest.raises(InputError) as metrics:
        verdicts_of(bad)
    file_format, issues, valid = check_file(bad)
    assert file_format.kind == "verdicts" and valid == 1
    assert read.value.issues == metrics.value.issues == issues
    assert [(i.line, i.field) for i in issues] == [(2, "verdict"), (3, None)]


def test_a_missing_rubric_file_is_a_located_error_for_score(tmp_path):
    verdicts = _write(tmp_path / "v.jsonl", _verdicts())
    result = run("score", verdicts, "--rubric", tmp_path / "none.yaml")
    assert result.exit_code == 1
    assert "none.yaml: no such rubric file" in " ".join(result.output.split())


def test_a_directory_is_not_a_verdict_file_but_a_run_source_for_metrics(tmp_path):
    with pytest.raises(InputError, match="is a directory, not a verdict JSONL file"):
        read_verdicts(tmp_path)
    with pytest.raises(InputError):  # not a run directory: the run store says why
        verdicts_of(tmp_path)


# -- label files: verdict JSONL or an Autorubric dataset, for agreement and convert ------------

def test_a_dataset_as_labels_brings_its_rubrics_and_a_bad_label_file_fails_alike(tmp_path):
    dataset = tmp_path / "bee.json"
    dataset.write_text(json.dumps({
        "name": "bee", "prompt": "Bee sting?",
        "rubric": [{"name": "scrape", "weight": 5.0, "requirement": "Says to scrape."}],
        "items": [{"submission": "Scrape it.", "description": "", "ground_truth": ["MET"]}]}))
    found = read_labels(dataset)
    assert [v.decision.value for v in found.labels] == ["MET"]
    assert [r.criteria[0].text for r in found.rubrics.values()] == ["Says to scrape."]

    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"item_id": "q1", "criterion_id": "x", "verdict": "MAYBE"}\n')
    items = _write(tmp_path / "items.jsonl", [_item("q1")])
    verdicts = _write(tmp_path / "v.jsonl", _verdicts(items=("q1",)))
    expected = f"{bad}:1: verdict: unknown verdict"
    for command in (["agreement", verdicts, "--labels", bad],
                    ["convert", items, tmp_path / "out.json", "--to", "autorubric-dataset",
                     "--labels", bad]):
        result = run(*command)
        assert result.exit_code == 1, command
        assert expected in " ".join(result.output.split()), command


# -- import direction: the data model never imports the readers --------------------------------

@pytest.mark.parametrize("module", ["assay.verdict", "assay.rubric", "assay.item"])
def test_the_data_model_imports_no_reader(module):
    code = (f"import sys, {module}; "
            "print(sorted(m for m in sys.modules if m.startswith(('assay.io', 'assay.metrics', "
            "'assay.runs'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_the_readers_import_only_the_data_model():
    code = ("import sys, assay.io, assay.io.convert, assay.io.autorubric_dataset_convert; "
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('assay.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == str(sorted(["errors", "health_memory", "io", "item", "limits",
                                             "rubric", "verdict"]))
