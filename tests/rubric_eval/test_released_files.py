"""Seed 000's released files read as released (issue 30, point 1): excerpts of the authors'
repository in tests/data/seed000_released (see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError, Issue
from assay.generate.queries import read_queries
from assay.rubric_eval.released import (
    conversation_messages,
    load_queries,
    read_responses,
    read_rubric_set,
)
from assay.testing import FakeJudgeServer

RELEASED = Path(__file__).parents[1] / "data" / "seed000_released"


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_generic_rubrics_list_with_trailing_commas_is_one_shared_rubric():
    generic = read_rubric_set(RELEASED / "generic_rubrics.jsonl")
    assert generic.shared is not None
    assert [(e.axis, e.points) for e in generic.shared][:2] == [
        ("clinical_correctness", 3.0), ("safety_risk_awareness", 3.0)]
    assert len(generic.shared) == 6 and generic.entries("59") == generic.shared


def test_rubric_stats_reads_the_released_generic_rubrics():
    result = invoke("rubric", "stats", RELEASED / "generic_rubrics.jsonl", "--json")
    assert result.exit_code == 0, result.output
    assert '"items": 6' in result.output


def test_an_empty_released_reference_is_skipped_and_named():
    skipped: dict[str, Issue] = {}
    refs = read_responses(RELEASED / "reference_responses.jsonl", skipped=skipped)
    assert sorted(refs) == ["1", "59"]
    where = RELEASED / "reference_responses.jsonl"
    assert [str(i) for i in skipped.values()] == [
        f"{where}:2: reference_response: empty: query 5 has no reference answer"]


def test_an_empty_reference_is_still_an_error_where_one_is_required():
    with pytest.raises(InputError, match=r":2: reference_response: expected a non-empty"):
        read_responses(RELEASED / "reference_responses.jsonl")


def test_generate_reads_conversations_txt_with_the_authors_indices():
    queries = {q.id: q for q in read_queries(RELEASED / "conversations.txt")}
    assert list(queries) == ["1", "5", "59"]
    released = {str(row["index"]): row["original_query"] for row in map(
        json.loads, (RELEASED / "final_rubrics.jsonl").read_text().splitlines())}
    # the query the stages see is the one the authors' pipeline saw, without "1 User:"
    assert queries["1"].text == released["1"] == "how to reduce bloating"
    assert queries["5"].text == released["5"]


def test_a_released_multi_turn_line_becomes_its_turns():
    text = (RELEASED / "conversations.txt").read_text().splitlines()[2].split("\t", 1)[1]
    turns = conversation_messages(text)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"] == "Chill"
    assert turns[2]["content"].startswith("why do i get this strange chill")


def test_released_gold_queries_keep_multi_turn_messages():
    queries = load_queries(RELEASED / "reference_rubrics.jsonl",
                           conversations=RELEASED / "conversations.txt")
    assert [m["role"] for m in queries["59"].messages] == ["user", "assistant", "user"]
    assert queries["1"].messages == ({"role": "user", "content": "how to reduce bloating"},)


def test_nearmiss_build_skips_queries_with_an_empty_reference_with_a_note(tmp_path):
    stages = {"nearmiss_perturb": {"edit_span_before": "x", "edit_span_after": "y",
                                   "perturbed_response": "not an edit of the reference"}}
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        result = invoke("nearmiss", "build", "--gold", RELEASED / "reference_rubrics.jsonl",
                        "--conversations", RELEASED / "conversations.txt",
                        "--references", RELEASED / "reference_responses.jsonl",
                        "--judge", f"openai-compatible:fake@{server.base_url}",
                        "--out", tmp_path / "build", "--quiet")
    assert "1 queries have no reference answer and were skipped" in result.output
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text())
    assert list(manifest["skipped_without_reference"]) == ["5"]
    assert "5" not in manifest["failed"]
    pairs = [json.loads(line) for line in (tmp_path / "build" / "pairs.jsonl").read_text()
             .splitlines()]
    assert "5" not in {p["index"] for p in pairs}
