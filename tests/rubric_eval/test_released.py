"""Seed 000's released files: both rubric shapes, shared rubrics, HealthBench, responses,
conversations, and errors that name file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import InputError
from assay.rubric_eval.released import (
    load_queries,
    read_conversations,
    read_responses,
    read_rubric_set,
    rubric_of_entries,
)

EXAMPLES = Path(__file__).parents[2] / "examples" / "rubric_eval"


def lines(tmp_path, name, *rows):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_both_released_rubric_shapes_are_read():
    ref = read_rubric_set(EXAMPLES / "reference_rubrics.jsonl")
    ours = read_rubric_set(EXAMPLES / "our_rubrics.jsonl")
    assert ref.indices == ours.indices == ["0", "1", "2"]
    assert ours.queries["1"] == "User: She has a colitis flare for 2 days"
    first = ref.entries("0")[0]
    assert (first.axis, first.points) == ("accuracy", 8.0)


def test_generated_rubrics_may_be_wrapped_in_an_object(tmp_path):
    path = lines(tmp_path, "r.jsonl", {"index": 5, "generated_rubrics": {
        "rubrics": [{"criterion": "c", "axis": "accuracy", "points": 3}]}})
    assert read_rubric_set(path).entries("5")[0].criterion == "c"


def test_a_whole_file_rubric_is_shared_by_every_query():
    generic = read_rubric_set(EXAMPLES / "generic_rubric.json")
    assert generic.shared is not None and len(generic.shared) == 6
    assert generic.entries("any query") == generic.shared


def test_healthbench_prompt_ids_are_the_index(healthbench_dev_path):
    rubrics = read_rubric_set(healthbench_dev_path)
    assert len(rubrics.indices) == 60
    assert all(e.axis for entries in rubrics.per_index.values() for e in entries)


def test_every_bad_line_is_reported_with_its_field(tmp_path):
    path = lines(tmp_path, "bad.jsonl",
                 {"index": 0, "rubrics": [{"criterion": "ok", "axis": "accuracy", "points": 5}]},
                 {"rubrics": [{"criterion": "no index", "points": 1}]},
                 {"index": 2, "rubrics": [{"criterion": "c", "points": "eight"}]},
                 {"index": 0, "rubrics": [{"criterion": "again", "points": 1}]},
                 {"index": 4},
                 "{not json",
                 {"index": [1], "rubrics": []})
    with pytest.raises(InputError) as caught:
        read_rubric_set(path)
    messages = [str(i) for i in caught.value.issues]
    name = str(path)
    assert f"{name}:2: index: missing (each line needs the query's index)" in messages
    assert any(m.startswith(f"{name}:3: rubrics[0].points:") for m in messages)
    assert f"{name}:4: index: index 0 again (first on line 1)" in messages
    assert f"{name}:5: rubrics: missing (give rubrics or generated_rubrics)" in messages
    assert any(m.startswith(f"{name}:6: malformed JSON") for m in messages)
    assert any(m.startswith(f"{name}:7: index: expected an integer or string index") for m in
               messages)


def test_responses_take_one_text_field_and_an_index(tmp_path):
    assert read_responses(EXAMPLES / "reference_responses.jsonl")["2"].startswith("Nausea")
    path = lines(tmp_path, "resp.jsonl", {"id": 7, "answer": "x"},
                 {"index": 8, "response": "a", "answer": "b"}, {"index": 9, "response": ""})
    with pytest.raises(InputError) as caught:
        read_responses(path)
    assert [str(i) for i in caught.value.issues] == [
        (f"{path}:2: reference_response: give exactly one of reference_response, response, "
         "answer, completion (found response, answer)"),
        f"{path}:3: response: expected a non-empty string"]


def test_conversations_are_tab_separated(tmp_path):
    assert read_conversations(EXAMPLES / "conversations.txt")["1"] == (
        "User: She has a colitis flare for 2 days")
    path = tmp_path / "conv.txt"
    path.write_text("0\tUser: a\n1 User: no tab\n\n0\tUser: again\n\tUser: no index\n2\t \n")
    with pytest.raises(InputError) as caught:
        read_conversations(path)
    assert [str(i) for i in caught.value.issues] == [
        f"{path}:2: expected index<TAB>conversation",
        f"{path}:4: index: index 0 again (first on line 1)",
        f"{path}:5: index: empty index before the tab",
        f"{path}:6: conversation: empty conversation"]


def test_queries_join_gold_conversations_and_references():
    queries = load_queries(EXAMPLES / "reference_rubrics.jsonl",
                           conversations=EXAMPLES / "conversations.txt",
                           references=EXAMPLES / "reference_responses.jsonl")
    q = queries["1"]
    assert q.question == "User: She has a colitis flare for 2 days"
    assert q.messages == ({"role": "user", "content": "She has a colitis flare for 2 days"},)
    assert q.reference.startswith("It sounds like") and len(q.gold) == 9


def test_a_released_gold_file_needs_its_conversations(tmp_path):
    with pytest.raises(InputError, match="no conversation for 3 gold queries"):
        load_queries(EXAMPLES / "reference_rubrics.jsonl")


def test_healthbench_queries_carry_their_ideal_completion(healthbench_dev_path):
    queries = load_queries(healthbench_dev_path)
    with_reference = [q for q in queries.values() if q.reference]
    assert with_reference and all(q.question.startswith(("User: ", "System: ", "Assistant: "))
                                  for q in queries.values())


def test_released_entries_become_a_gradable_rubric():
    entries = read_rubric_set(EXAMPLES / "reference_rubrics.jsonl").entries("1")
    rubric = rubric_of_entries("1", entries)
    assert [c.id for c in rubric.criteria][:3] == ["c1", "c2", "c3"]
    assert rubric.criteria[2].weight == -8 and rubric.criteria[2].axis == "accuracy"
