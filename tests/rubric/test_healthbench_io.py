"""HealthBench JSONL <-> Item: the mapping, and a lossless round trip on the real dev examples."""

from __future__ import annotations

import json

import pytest

from assay.io import iter_items, write_items
from assay.io.healthbench import example_to_item, item_to_example, read_examples
from assay.item import Item
from assay.rubric import derive_criterion_id


@pytest.fixture
def dev_rows(healthbench_dev_path):
    return [json.loads(line) for line in healthbench_dev_path.read_text().splitlines()]


@pytest.fixture
def example():
    return {
        "example_tags": ["theme:hedging", "physician_agreed_category:no-uncertainty"],
        "ideal_completions_data": {"ideal_completion": "Scrape the stinger out.",
                                   "ideal_completions_group": "Group 3",
                                   "ideal_completions_ref_completions": ["a", "b"]},
        "prompt": [{"content": "Stung by a bee. What now?", "role": "user"}],
        "prompt_id": "bee-1",
        "rubrics": [
            {"criterion": "Says to scrape the stinger out.", "points": 7,
             "tags": ["level:example", "axis:accuracy"]},
            {"criterion": "Recommends tweezers.", "points": -3.5,
             "tags": ["axis:accuracy", "level:example"]},
        ],
        "canary": "healthbench:canary",
    }


def test_every_dev_example_round_trips_to_the_same_json_object(dev_rows):
    assert len(dev_rows) == 60
    for row in dev_rows:
        assert item_to_example(example_to_item(row)) == row


def test_writing_dev_back_as_healthbench_reproduces_the_file_byte_for_byte(
        healthbench_dev_path, tmp_path):
    out = tmp_path / "back.jsonl"
    write_items(iter_items(healthbench_dev_path), out, format="healthbench")
    assert out.read_bytes() == healthbench_dev_path.read_bytes()


def test_prompt_id_becomes_the_item_and_rubric_id(example):
    item = example_to_item(example)
    assert item.id == item.rubric.id == "bee-1"


def test_prompt_becomes_the_messages(example):
    item = example_to_item(example)
    assert [(m.role, m.content) for m in item.messages] == [("user", "Stung by a bee. What now?")]


def test_ideal_completion_becomes_the_reference(example):
    assert example_to_item(example).reference == "Scrape the stinger out."


def test_example_without_ideal_completion_has_no_reference(example):
    example["ideal_completions_data"] = None
    assert example_to_item(example).reference is None


def test_example_tags_become_item_tags_verbatim(example):
    assert example_to_item(example).tags == example["example_tags"]


def test_rubric_entries_become_criteria_with_points_as_weight_and_tags_in_order(example):
    criteria = example_to_item(example).rubric.criteria
    assert [(c.text, c.weight, c.tags) for c in criteria] == [
        ("Says to scrape the stinger out.", 7.0, ["level:example", "axis:accuracy"]),
        ("Recommends tweezers.", -3.5, ["axis:accuracy", "level:example"]),
    ]


def test_axis_is_taken_from_the_axis_tag(example):
    assert [c.axis for c in example_to_item(example).rubric.criteria] == ["accuracy", "accuracy"]


def test_criterion_ids_are_derived_from_the_text(example):
    criterion = example_to_item(example).rubric.criteria[0]
    assert criterion.id == derive_criterion_id("Says to scrape the stinger out.")


def test_criteria_are_marked_as_physician_written(example):
    assert example_to_item(example).rubric.criteria[0].provenance.source == "physician"


def test_integer_points_stay_integers_and_float_points_stay_floats(example):
    example["rubrics"][0]["points"] = 7.0
    back = item_to_example(example_to_item(example))
    assert json.dumps(back["rubrics"][0]["points"]) == "7.0"
    example["rubrics"][0]["points"] = 7
    back = item_to_example(example_to_item(example))
    assert json.dumps(back["rubrics"][0]["points"]) == "7"


def test_unknown_keys_on_the_example_entries_and_messages_survive_the_round_trip(example):
    example["completion"] = "some graded answer"
    example["rubrics"][1]["consensus"] = True
    example["prompt"][0]["name"] = "patient"
    back = item_to_example(example_to_item(example))
    assert back == example
    assert list(back) == list(example)


def test_missing_optional_keys_are_not_invented_on_the_way_back(example):
    del example["ideal_completions_data"]
    del example["canary"]
    assert item_to_example(example_to_item(example)) == example


def test_multi_choice_extension_keys_round_trip(example):
    example["rubrics"][0].update(
        kind="ordinal", options=[{"label": "no", "value": 0.0}, {"label": "yes", "value": 1.0}])
    item = example_to_item(example)
    assert item.rubric.criteria[0].kind == "ordinal"
    assert item_to_example(item) == example


def test_an_item_from_elsewhere_becomes_a_healthbench_example():
    item = Item(id="q1", prompt="Bee sting?", reference="Scrape it.",
                rubric={"criteria": [{"text": "Mentions scraping.", "weight": 5, "axis": "accuracy"}]})
    example = item_to_example(item)
    assert example["prompt_id"] == "q1"
    assert example["prompt"] == [{"content": "Bee sting?", "role": "user"}]
    assert example["ideal_completions_data"] == {"ideal_completion": "Scrape it."}
    assert example["rubrics"] == [
        {"criterion": "Mentions scraping.", "points": 5, "tags": ["axis:accuracy"]}]


def test_an_edited_reference_is_written_into_ideal_completions_data(example):
    item = example_to_item(example)
    item.reference = "Use a card."
    back = item_to_example(item)
    assert back["ideal_completions_data"]["ideal_completion"] == "Use a card."
    assert back["ideal_completions_data"]["ideal_completions_group"] == "Group 3"


def test_read_examples_streams_the_raw_objects(healthbench_dev_path, dev_rows):
    assert list(read_examples(healthbench_dev_path)) == dev_rows


def _mutations(example):
    """The example with one part of its shape broken (or merely unusual) at a time."""
    def changed(path, value):
        row = json.loads(json.dumps(example))
        *head, last = path
        target = row
        for key in head:
            target = target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
        return row

    broken = [
        (("prompt_id",), 7), (("prompt_id",), KeyError), (("prompt",), "hi"), (("prompt", 0), "hi"),
        (("prompt", 0, "role"), None), (("prompt", 0, "content"), 3), (("rubrics",), {}),
        (("rubrics", 0), []), (("rubrics", 0, "criterion"), 1), (("rubrics", 0, "points"), "8"),
        (("rubrics", 0, "points"), True), (("rubrics", 0, "points"), KeyError),
        (("rubrics", 0, "tags"), "axis:accuracy"), (("rubrics", 0, "tags"), [1]),
        (("example_tags",), None), (("example_tags",), ["a", 2]), (("canary",), 5),
        (("ideal_completions_data",), "text"), (("ideal_completions_data",), {1: "x"}),
        (("ideal_completions_data",), None), (("canary",), KeyError),
        (("ideal_completions_data",), KeyError), (("prompt", 0, "name"), "extra is allowed"),
        (("rubrics", 0, "points"), 2.5), (("extra_key",), {"kept": True}),
    ]
    return [changed(path, value) for path, value in broken]


def test_the_quick_shape_check_never_passes_a_row_the_model_refuses(example):
    from pydantic import ValidationError

    from assay.io.healthbench import HealthBenchExample, _well_formed

    assert _well_formed(example)
    passed = refused = 0
    for row in _mutations(example):
        try:
            HealthBenchExample.model_validate(row)
        except ValidationError:
            refused += 1
            assert not _well_formed(row), row
        else:
            passed += _well_formed(row)
    assert refused >= 15 and passed >= 5  # both sides of the check are exercised


def test_a_malformed_row_is_still_reported_with_healthbench_field_names(example):
    from assay.errors import InputError

    example["rubrics"][1]["points"] = "eight"
    with pytest.raises(InputError) as caught:
        example_to_item(example, source="dev.jsonl", line=3)
    assert [str(i) for i in caught.value.issues] == [
        'dev.jsonl:3: rubrics[1].points: expected a number, got "eight"']
