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


def released_lines(name, *indices):
    return [line for line in (RELEASED / name).read_text().splitlines()
            if json.loads(line)["index"] in indices]


def subset(tmp_path, name, *indices):
    path = tmp_path / f"{Path(name).stem}_{'_'.join(map(str, indices))}.jsonl"
    path.write_text("\n".join(released_lines(name, *indices)) + "\n")
    return path


@pytest.fixture(scope="module")
def always_yes():
    stages = {"cia_verify": {"decision": "YES", "support_index": 1, "reason": "r"}}
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        yield f"openai-compatible:fake@{server.base_url}"


def test_cia_of_sets_with_no_index_in_common_is_an_error(always_yes, tmp_path):
    candidate = subset(tmp_path, "final_rubrics.jsonl", 5, 59)
    result = invoke("cia", candidate, "--gold", subset(tmp_path, "reference_rubrics.jsonl", 1),
                    "--judge", always_yes, "--out", tmp_path / "cia", "--no-atomize", "--quiet")
    assert result.exit_code != 0
    assert f"{candidate}: index: no query index in common with the gold rubrics" in (
        " ".join(result.output.split()))
    assert not (tmp_path / "cia" / "cia.json").exists()


def test_cia_leaves_out_gold_queries_without_a_candidate_rubric(always_yes, tmp_path):
    candidate = subset(tmp_path, "final_rubrics.jsonl", 1, 5)
    result = invoke("cia", candidate, "--gold", RELEASED / "reference_rubrics.jsonl",
                    "--judge", always_yes, "--out", tmp_path / "cia", "--no-atomize", "--quiet")
    assert result.exit_code == 0, result.output
    cia = json.loads((tmp_path / "cia" / "cia.json").read_text())
    gold = {json.loads(line)["index"]: len(json.loads(line)["rubrics"])
            for line in released_lines("reference_rubrics.jsonl", 1, 5, 59)}
    # every verified point is covered: query 59's points are out of the pool, not uncovered
    report = cia["summary"]["report"]
    assert report["total"] == report["covered"] == gold[1] + gold[5]
    assert cia["scope"]["scored_queries"] == 2 and cia["scope"]["gold_queries"] == 3
    assert cia["scope"]["left_out_without_rubric"] == {"candidate": ["59"]}
    assert "1 gold queries have no rubric in" in result.output
    assert "CIA covers 2 of 3 gold queries" in result.output


def test_an_atomiser_reply_with_one_invalid_field_keeps_its_points(tmp_path):
    """Issue 30, point 5: a polarity outside the enum and an index as a string are coerced
    on their own (and recorded) instead of failing the whole atomisation."""
    atoms = {"gold_atomic_points": [
        {"text": "Simethicone is a pharmacological option for acute bloating.",
         "source_criterion_index": "4", "axis": "accuracy", "polarity": "positive"},
        {"text": "The answer is not over-alarming.", "source_criterion_index": 8,
         "axis": "completeness", "polarity": "negative_constraint"}]}
    stages = {"cia_atomize": atoms,
              "cia_verify": {"decision": "YES", "support_index": 1, "reason": "r"}}
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        result = invoke("cia", subset(tmp_path, "final_rubrics.jsonl", 1), "--gold",
                        subset(tmp_path, "reference_rubrics.jsonl", 1), "--judge",
                        f"openai-compatible:fake@{server.base_url}", "--out", tmp_path / "cia",
                        "--quiet")
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in
             (tmp_path / "cia" / "gold_atomic_points.jsonl").read_text().splitlines()]
    assert row["fallback"] is None and row["gold_atomic_count"] == 2
    first = row["gold_atomic_points"][0]
    assert (first["source_criterion_index"], first["polarity"]) == (4, "positive_requirement")
    assert row["coercions"] == [
        "gold_atomic_points[0].source_criterion_index: '4' read as 4",
        "gold_atomic_points[0].polarity: 'positive' read as positive_requirement (inferred)"]


def test_gold_points_of_one_job_are_reused_by_another_without_atomising(tmp_path):
    """Issue 30, point 6: CIA of rubric sets run in separate jobs uses one fixed gold
    atomisation (exported by the first job, imported by the next)."""
    atoms = {"gold_atomic_points": [
        {"text": "Simethicone is an option for acute bloating.", "source_criterion_index": 4,
         "axis": "accuracy", "polarity": "positive_requirement"}]}
    stages = {"cia_atomize": atoms,
              "cia_verify": {"decision": "YES", "support_index": 1, "reason": "r"}}
    gold = subset(tmp_path, "reference_rubrics.jsonl", 1)
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        first = invoke("cia", subset(tmp_path, "final_rubrics.jsonl", 1), "--gold", gold,
                       "--judge", spec, "--out", tmp_path / "ours", "--quiet")
        assert first.exit_code == 0, first.output
        exported = tmp_path / "ours" / "gold_atomic_points.jsonl"
        calls = len(server.requests)
        second = invoke("cia", RELEASED / "generic_rubrics.jsonl", "--gold", gold,
                        "--gold-points", exported, "--judge", spec, "--out",
                        tmp_path / "generic", "--quiet")
        assert second.exit_code == 0, second.output
        stages_called = [r["stage"] for r in server.requests[calls:]]
    assert stages_called == ["cia_verify"]
    assert (tmp_path / "generic" / "gold_atomic_points.jsonl").read_text() == exported.read_text()


def test_gold_points_that_miss_a_gold_query_are_refused(tmp_path):
    points = tmp_path / "points.jsonl"
    points.write_text(json.dumps({"index": 1, "gold_atomic_points": [
        {"ga_id": "1_1", "text": "t", "source_criterion_index": 1, "axis": "accuracy",
         "polarity": "positive_requirement"}]}) + "\n")
    result = invoke("cia", RELEASED / "final_rubrics.jsonl", "--gold",
                    RELEASED / "reference_rubrics.jsonl", "--gold-points", points,
                    "--judge", "openai-compatible:fake@http://127.0.0.1:9/v1",
                    "--out", tmp_path / "cia", "--quiet")
    assert result.exit_code != 0
    assert "no gold points for 2 gold queries (first: 5)" in " ".join(result.output.split())


def test_cia_help_mentions_only_options_it_has():
    import re

    import typer

    command = typer.main.get_command(app).commands["cia"]  # type: ignore[attr-defined]
    declared = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    mentioned = set(re.findall(r"(--[a-z][a-z-]+)", invoke("cia", "--help").output))
    assert mentioned and mentioned <= declared | {"--help"}, mentioned - declared


def test_refine_leaves_out_queries_whose_released_base_response_is_empty(tmp_path):
    stages = {"refine_critique": {"rubric_scores": [], "constraints": [], "edit_plan": [
                  {"priority": "HIGH", "action": "ADD", "instruction": "Say when to see a GP."}]},
              "refine_rewrite": {"revised_response": "Eat slowly; see a GP if it persists."}}
    with FakeJudgeServer.run_in_thread(stages=stages, policy="MET") as server:
        result = invoke("refine", "--gold", RELEASED / "reference_rubrics.jsonl",
                        "--conversations", RELEASED / "conversations.txt",
                        "--base", RELEASED / "reference_responses.jsonl", "--no-oracle",
                        "--judge", f"openai-compatible:fake@{server.base_url}",
                        "--out", tmp_path / "refine", "--quiet", "--n-bootstrap", "20")
    assert result.exit_code == 0, result.output
    scores = [json.loads(line)["index"] for line in
              (tmp_path / "refine" / "scores.jsonl").read_text().splitlines()]
    assert scores == ["1", "59"]
    assert "1 queries have an empty base response and were left out" in result.output


def test_grade_reads_the_released_generic_rubric_and_reference_responses(tmp_path):
    """The released files given to `assay grade` as they are: the generic rubric (a JSON list
    with trailing commas in a .jsonl file) and the reference answers keyed by index, whose
    empty one (query 5) is left out and counted, not graded as an empty answer."""
    from assay.rubric_eval.released import read_conversations

    items = tmp_path / "queries.jsonl"
    items.write_text("".join(
        json.dumps({"id": index, "messages": list(conversation_messages(text))}) + "\n"
        for index, text in read_conversations(RELEASED / "conversations.txt").items()))
    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        result = invoke("grade", items, "--rubric", RELEASED / "generic_rubrics.jsonl",
                        "--responses", RELEASED / "reference_responses.jsonl",
                        "--judge", f"openai-compatible:fake@{server.base_url}",
                        "--run-dir", tmp_path / "run", "--quiet", "--json", tmp_path / "s.json")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert [i["item_id"] for i in summary["items"]] == ["1", "59"]
    assert [i["n_scored"] for i in summary["items"]] == [6, 6]  # the six generic criteria
    assert "1 items had no response to grade" in " ".join(result.output.split())


def grade_released(folder, server, tmp_path):
    """`assay grade` of a released set (final_rubrics.jsonl, conversations.txt, reference
    responses) in HealthBench mode against ``server``; the summary in tmp_path/s.json."""
    return invoke("grade", folder / "final_rubrics.jsonl",
                  "--conversations", folder / "conversations.txt",
                  "--responses", folder / "reference_responses.jsonl", "--healthbench",
                  "--judge", f"openai-compatible:fake@{server.base_url}",
                  "--run-dir", tmp_path / "run", "--quiet", "--json", tmp_path / "s.json")


def test_grade_reads_a_released_rubric_set_with_its_conversations_by_index(tmp_path):
    """`assay grade final_rubrics.jsonl --conversations conversations.txt`: each index's
    conversation graded against its own released rubric, the authors' indices as item ids."""
    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        result = grade_released(RELEASED, server, tmp_path)
    assert result.exit_code == 4, result.output  # query 5's released reference is empty
    summary = json.loads((tmp_path / "s.json").read_text())
    released = {str(row["index"]): len(row["generated_rubrics"]) for row in map(
        json.loads, (RELEASED / "final_rubrics.jsonl").read_text().splitlines())}
    assert [i["item_id"] for i in summary["items"]] == ["1", "59"]  # 5's reference is empty
    assert [i["n_scored"] for i in summary["items"]] == [released["1"], released["59"]]
    assert any("how to reduce bloating" in json.dumps(r["body"]) for r in server.requests)


INDEX22 = RELEASED / "index22"  # the release's one rubric with a 0-point criterion


def test_grade_leaves_out_a_released_0_point_criterion_with_a_note_and_grades_the_rest(tmp_path):
    """Issue 40, point 5: `assay grade` reads final_rubrics.jsonl as `rubric stats`, `cia` and
    `nearmiss judge` do, instead of stopping on "weight is 0" without file or line."""
    released = json.loads((INDEX22 / "final_rubrics.jsonl").read_text())["generated_rubrics"]
    assert [e["points"] for e in released].count(0) == 1 and released[4]["points"] == 0
    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        result = grade_released(INDEX22, server, tmp_path)
        graded = len(server.requests)
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert (f"note: {INDEX22 / 'final_rubrics.jsonl'}:1: generated_rubrics[4].points: 0 points: "
            "cannot count for or against an answer; left out of grading") in output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["status"] == "complete" and graded == len(released) - 1 == 14
    [item] = summary["items"]
    assert item["item_id"] == "22" and item["n_scored"] == 14
    stats = invoke("rubric", "stats", INDEX22 / "final_rubrics.jsonl", "--json")  # keeps it
    assert stats.exit_code == 0 and json.loads(stats.output)["items"] == 15


def test_a_released_rubric_that_cannot_be_graded_is_an_error_naming_file_line_and_field(tmp_path):
    lines = (RELEASED / "final_rubrics.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row["generated_rubrics"] = [{"criterion": "Says something.", "axis": "accuracy",
                                 "points": 0}]  # nothing left to grade
    bad = tmp_path / "final.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps(row) + "\n")
    result = invoke("grade", bad, "--conversations", RELEASED / "conversations.txt",
                    "--responses", RELEASED / "reference_responses.jsonl", "--healthbench",
                    "--judge", "openai-compatible:fake@http://127.0.0.1:9/v1",
                    "--run-dir", tmp_path / "run", "--quiet")
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert f"{bad}:2: generated_rubrics" in output, output
