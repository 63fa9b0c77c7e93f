"""Autorubric dataset files: reading, validation messages, and the lossless round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError
from assay.io import check_file, detect_format, load_items
from assay.io.autorubric_dataset import GROUND_TRUTH, read_dataset
from assay.io.autorubric_dataset_write import dataset_document
from assay.io.convert import convert_file
from assay.io.verdicts import read_verdicts
from assay.item import Item
from assay.verdict import Verdict

EXAMPLES = Path(__file__).parents[2] / "examples" / "autorubric"
CHARM = EXAMPLES / "charm100_sample.json"
ESSAY = EXAMPLES / "essay_grading_dataset.json"

LENGTH = {"name": "length", "weight": 4.0, "requirement": "Is the length right?",
          "scale_type": "nominal",
          "options": [{"label": "Too brief", "value": 0.0}, {"label": "Too verbose", "value": 0.0},
                      {"label": "Just right", "value": 1.0}]}
HELPFUL = {"name": "helpful", "weight": 8.0, "requirement": "How helpful is it?",
           "scale_type": "ordinal",
           "options": [{"label": "Not helpful", "value": 0.0}, {"label": "Helpful", "value": 0.5},
                       {"label": "Very helpful", "value": 1.0},
                       {"label": "N/A - nothing asked", "value": 0.0, "na": True}]}
ACCURATE = {"name": "accurate", "weight": 10.0, "requirement": "Is accurate."}


def _chat(user: str, answer: str) -> str:
    return json.dumps([{"role": "system", "content": "You are kind."},
                       {"role": "user", "content": user},
                       {"role": "assistant", "content": answer}])


def _dataset(items, rubric=None, **extra):
    return {"name": "mini", "prompt": "Rate the chatbot.",
            "rubric": rubric if rubric is not None else [HELPFUL, LENGTH, ACCURATE],
            "items": items, **extra}


def _write(tmp_path, document, name="mini.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    return path


def test_a_dataset_file_is_detected_as_its_own_kind():
    assert detect_format(CHARM).kind == "autorubric-dataset"
    assert check_file(CHARM) == (detect_format(CHARM), [], 12)


def test_a_chat_submission_becomes_the_conversation_and_its_last_assistant_turn_the_response():
    data = read_dataset(CHARM)
    item = data.items[0]
    assert [m.role for m in item.messages] == ["system", "user"]
    assert item.prompt == ("How do I handle exceptions in Python? I keep getting errors crashing "
                           "my program.")
    assert item.response.startswith("Great question! Exception handling in Python")
    assert item.metadata["autorubric"]["dataset"]["prompt"] == (
        "Evaluate the quality of chatbot responses to user queries.")
    assert item.rubric is not None and [c.id for c in item.rubric.criteria] == [
        "satisfaction", "helpfulness", "naturalness", "response_length", "factual_accuracy",
        "specificity"]


def test_a_plain_text_submission_stays_text_and_answers_the_dataset_prompt():
    item = read_dataset(ESSAY).items[10]
    assert [(m.role, m.content) for m in item.messages] == [
        ("user", "Explain the causes and effects of the Industrial Revolution.")]
    assert item.response.startswith("[Image attachment: factory_diagram.png]")


def test_ground_truth_becomes_one_label_per_criterion_in_rubric_order():
    data = read_dataset(CHARM)
    first = [v for v in data.labels if v.item_id == "item-006"]
    assert [(v.criterion_id, v.option or v.decision.value) for v in first] == [
        ("satisfaction", "4 - Very satisfied"), ("helpfulness", "Very helpful"),
        ("naturalness", "Very natural/human-like"),
        ("response_length", "Just right - appropriate length"), ("factual_accuracy", "MET"),
        ("specificity", "N/A - question doesn't require recommendations")]
    assert {v.judge for v in data.labels} == {GROUND_TRUTH}
    essay = read_dataset(ESSAY)
    assert [v.decision.value for v in essay.labels if v.item_id == "item-010"] == [
        "CANNOT_ASSESS", "CANNOT_ASSESS", "MET", "CANNOT_ASSESS", "CANNOT_ASSESS"]


def test_option_labels_match_ignoring_case_and_spaces_as_in_autorubric(tmp_path):
    path = _write(tmp_path, _dataset([{"submission": _chat("Hi?", "Hello."), "description": "",
                                       "ground_truth": ["very  HELPFUL", "just right", "MET"]}]))
    assert [v.option for v in read_dataset(path).labels][:2] == ["very  HELPFUL", "just right"]


def test_unnamed_criteria_are_named_C1_C2_as_autorubric_names_them(tmp_path):
    rubric = [{"weight": 5.0, "requirement": "Says hello."},
              {"weight": 3.0, "requirement": "Says goodbye."}]
    path = _write(tmp_path, _dataset([{"submission": "Hello.", "description": "",
                                       "ground_truth": ["MET", "UNMET"]}], rubric=rubric))
    data = read_dataset(path)
    assert [c.id for c in data.rubric.criteria] == ["C1", "C2"]
    assert dataset_document(data.items, data.labels)["rubric"] == rubric


# -- validation: file, item index and field -----------------------------------------------------

def _validate(path) -> str:
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    return result.output


def test_validate_names_file_line_item_and_field_of_a_label_that_is_not_an_option(tmp_path):
    items = [{"submission": _chat("Hi?", "Hello."), "description": "",
              "ground_truth": ["Helpful", "Just right", "MET"]},
             {"submission": _chat("Hi?", "Hey."), "description": "",
              "ground_truth": ["Very helpfull", "Just right", "MET"]}]
    path = _write(tmp_path, _dataset(items))
    output = _validate(path)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if "Very helpfull" in text)
    assert (f'mini.json:{line}: items[1].ground_truth[0]: "Very helpfull" is not an option of '
            "ordinal criterion 'helpful'") in output.replace("\n", "")
    assert "1 Autorubric dataset item (json) valid" in output


def test_validate_reports_a_wrong_count_of_labels(tmp_path):
    path = _write(tmp_path, _dataset([{"submission": "Hi.", "description": "",
                                       "ground_truth": ["Helpful", "MET"]}]))
    assert "items[0].ground_truth: 2 labels for the 3 criteria of the rubric" in _validate(path)


def test_validate_reports_a_binary_label_that_is_not_a_verdict_and_a_nominal_non_option(tmp_path):
    path = _write(tmp_path, _dataset([{"submission": "Hi.", "description": "",
                                       "ground_truth": ["Helpful", "Too long", "YES"]}]))
    output = _validate(path).replace("\n", "")
    assert "items[0].ground_truth[1]: \"Too long\" is not an option of nominal criterion" in output
    assert ("items[0].ground_truth[2]: \"YES\" is not a verdict of binary criterion 'accurate' "
            "(MET, UNMET or CANNOT_ASSESS)") in output


def test_validate_reports_a_bad_shared_rubric_once_with_its_field(tmp_path):
    rubric = [ACCURATE, {"name": "x", "weight": 2.0, "requirement": "Rates it.",
                         "options": [{"label": "bad", "value": 3.0}, {"label": "ok", "value": 1}]}]
    path = _write(tmp_path, _dataset([{"submission": "A.", "description": ""},
                                      {"submission": "B.", "description": ""}], rubric=rubric))
    _, issues, count = check_file(path)
    assert count == 0 and len(issues) == 1
    assert issues[0].field.startswith("rubric[1].options[0]")


def test_a_missing_submission_and_no_prompt_are_reported_per_item(tmp_path):
    document = _dataset([{"description": "no submission"}, {"submission": "B."}])
    del document["prompt"]
    _, issues, _ = check_file(_write(tmp_path, document))
    fields = {(i.field, i.message) for i in issues}
    assert ("items[0].submission", "required field is missing") in fields
    assert ("items[1].prompt", "no prompt: neither the item nor the dataset has one") in fields


def test_reading_strictly_raises_every_problem_at_once(tmp_path):
    path = _write(tmp_path, _dataset([{"submission": "A.", "ground_truth": ["x", "y", "z"]}]))
    with pytest.raises(InputError) as caught:
        read_dataset(path)
    assert len(caught.value.issues) == 3


# -- convert: dataset <-> items + labels, losslessly -------------------------------------------

@pytest.mark.parametrize("source", [CHARM, ESSAY], ids=["charm-chat", "essay-text"])
def test_a_dataset_survives_a_round_trip_through_items_and_a_label_file(tmp_path, source):
    convert_file(source, tmp_path / "items.jsonl", None)
    labels = read_verdicts(tmp_path / "items.labels.jsonl")
    assert len(labels) == len(read_dataset(source).labels)
    convert_file(tmp_path / "items.jsonl", tmp_path / "back.json", "autorubric-dataset",
                 labels=tmp_path / "items.labels.jsonl")
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(source.read_text())


def test_the_shared_rubric_can_travel_in_its_own_file(tmp_path):
    message = convert_file(ESSAY, tmp_path / "items.yaml", None, rubric=tmp_path / "rubric.yaml",
                           labels=tmp_path / "labels.jsonl")
    assert "the shared rubric to" in message
    assert all(i.rubric is None for i in load_items(tmp_path / "items.yaml"))
    convert_file(tmp_path / "items.yaml", tmp_path / "back.json", "autorubric-dataset",
                 labels=tmp_path / "labels.jsonl", rubric=tmp_path / "rubric.yaml")
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(ESSAY.read_text())


def test_autorubrics_own_serialisation_round_trips_too(tmp_path):
    """RubricDataset.to_json writes na: false, ground_truth: null, per-item rubrics with
    guidelines, per-item prompts and references."""
    options = [{"label": "no", "value": 0.0, "na": False}, {"label": "yes", "value": 1.0,
                                                             "na": False}]
    document = {
        "name": "research", "prompt": "Answer the research question.",
        "rubric": None, "reference_submission": "A model answer.",
        "items": [
            {"submission": "Answer one.", "description": "d1", "ground_truth": ["MET", "yes"],
             "rubric": {"guidelines": "Be strict.", "criteria": [
                 {"name": "cites", "weight": 3.0, "requirement": "Cites sources."},
                 {"name": "clear", "weight": 1.0, "requirement": "Is it clear?",
                  "scale_type": "ordinal", "options": options}]},
             "prompt": "What is X?"},
            {"submission": "Answer two.", "description": "d2", "ground_truth": None,
             "rubric": [{"name": "cites", "weight": 2.0, "requirement": "Cites sources."}],
             "reference_submission": "Another model answer.", "note": "kept"},
        ]}
    path = _write(tmp_path, document, "research.json")
    data = read_dataset(path)
    assert data.items[0].reference == "A model answer."
    assert data.items[0].rubric.guidelines == "Be strict." and data.items[0].prompt == "What is X?"
    convert_file(path, tmp_path / "items.jsonl", None)
    convert_file(tmp_path / "items.jsonl", tmp_path / "back.json", "autorubric-dataset",
                 labels=tmp_path / "items.labels.jsonl")
    assert json.loads((tmp_path / "back.json").read_text()) == document


def test_an_edited_response_is_written_back_as_a_re_encoded_chat(tmp_path):
    data = read_dataset(CHARM)
    edited = data.items[5].model_copy(update={"response": "Use it for right triangles."})
    document = dataset_document([edited], [v for v in data.labels if v.item_id == edited.id])
    chat = json.loads(document["items"][0]["submission"])
    assert chat[-1] == {"role": "assistant", "content": "Use it for right triangles."}
    assert chat[:-1] == [m.model_dump() for m in edited.messages]


def test_items_that_never_were_a_dataset_become_one(tmp_path):
    rubric = {"id": "r", "criteria": [{"id": "helpful", "text": "How helpful?", "kind": "nominal",
                                        "options": [{"label": "no", "value": 0},
                                                    {"label": "yes", "value": 1}]}]}
    items = [Item(id="q1", prompt="Bee sting?", response="Scrape it.", rubric=rubric),
             Item(id="q2", messages=[{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "Cold?"}], response="Rest.",
                  rubric=rubric)]
    labels = [Verdict(item_id="q1", criterion_id="helpful", option="yes", judge="dr")]
    document = dataset_document(items, labels, name="mine")
    assert document["rubric"][0]["options"][1] == {"label": "yes", "value": 1.0}
    plain, chat = document["items"]
    assert plain == {"submission": "Scrape it.", "description": "", "ground_truth": ["yes"],
                     "prompt": "Bee sting?"}
    assert json.loads(chat["submission"])[-1] == {"role": "assistant", "content": "Rest."}
    assert chat["prompt"] == "Cold?" and "ground_truth" not in chat
    again = read_dataset(_write(tmp_path, document))
    assert [i.response for i in again.items] == ["Scrape it.", "Rest."]
    assert [(v.item_id, v.option) for v in again.labels] == [("item-000", "yes")]


def test_partial_or_conflicting_labels_cannot_become_a_dataset():
    data = read_dataset(CHARM)
    item = data.items[0]
    some = [v for v in data.labels if v.item_id == item.id][:2]
    with pytest.raises(InputError, match="no label for criteria naturalness"):
        dataset_document([item], some)
    full = [v for v in data.labels if v.item_id == item.id]
    other = full[0].model_copy(update={"judge": "second", "option": "1 - Very dissatisfied"})
    with pytest.raises(InputError, match="several different labels"):
        dataset_document([item], [*full, other])


def test_convert_cli_writes_items_and_labels_and_refuses_labels_for_other_kinds(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["convert", str(CHARM), str(tmp_path / "items.jsonl"),
                                 "--labels", str(tmp_path / "gt.jsonl")])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "wrote 12 items" in output and "72 labels to" in output
    assert len(read_verdicts(tmp_path / "gt.jsonl")) == 72
    rubric = tmp_path / "r.json"
    rubric.write_text(json.dumps([ACCURATE]))
    refused = runner.invoke(app, ["convert", str(rubric), str(tmp_path / "r.yaml"),
                                  "--labels", str(tmp_path / "gt.jsonl")])
    assert refused.exit_code == 1


def test_a_research_rubrics_set_with_per_item_rubrics_and_no_responses_yet_round_trips(tmp_path):
    """The shape of Autorubric's ResearchRubrics file: no dataset prompt or rubric, each item
    its own prompt and rubric (with penalties), empty submissions, ground_truth null."""
    document = {
        "name": "research-rubrics", "prompt": None, "rubric": None,
        "items": [{"submission": "", "description": "domain: Current Events",
                   "ground_truth": None,
                   "rubric": [{"name": "Explicit Criteria-1", "weight": 5.0,
                               "requirement": "Covers 9 AM to 10 PM.  "},
                              {"name": "Implicit Criteria-7", "weight": -5.0,
                               "requirement": "Recommends illegal fireworks."}],
                   "prompt": "Plan July 4 in Washington DC."}]}
    path = _write(tmp_path, document, "research.json")
    [item] = read_dataset(path).items
    assert (item.prompt, item.response) == ("Plan July 4 in Washington DC.", "")
    assert [c.weight for c in item.rubric.criteria] == [5.0, -5.0]
    convert_file(path, tmp_path / "items.jsonl", None)
    convert_file(tmp_path / "items.jsonl", tmp_path / "back.json", "autorubric-dataset")
    assert json.loads((tmp_path / "back.json").read_text()) == document
