"""Issue 18.6 and 18.11: what can be checked is checked before the first call (and before the
run directory is made); taxonomies grade; compare refuses runs with no item in common; the
summary counts the items of the input."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from tests.runs.conftest import POLICY, spec, write_items
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.io import validate_file
from assay.testing import FakeJudgeServer

TAXONOMY = {"id": "bee", "root": {"id": "root", "name": "all", "children": [
    {"id": "first-aid", "name": "First aid", "children": [
        {"id": "stinger", "name": "Stinger", "criterion": {
            "id": "stinger", "text": "Explains how to remove the stinger."}},
        {"id": "ice", "name": "Ice", "criterion": {"id": "ice", "text": "Suggests ice."}}]},
    {"id": "safety", "name": "Safety", "children": [
        {"id": "anaphylaxis", "name": "Anaphylaxis", "criterion": {
            "id": "anaphylaxis", "text": "Names the signs of anaphylaxis."}}]}]}}


def grade(*args: str):
    return CliRunner().invoke(app, ["grade", *args, "--quiet"])


def test_a_taxonomy_that_validate_accepts_is_gradable_with_all_leaves_tree_weighted(tmp_path,
                                                                                      items_file):
    tax = tmp_path / "tax.yaml"
    tax.write_text(yaml.safe_dump(TAXONOMY))
    assert validate_file(tax) == []
    policy = {"stinger": "MET", "ice": "UNMET", "anaphylaxis": "MET"}
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        out = grade(str(items_file), "--rubric", str(tax), "--judge", spec(server),
                    "--run-dir", str(tmp_path / "run"), "--json", str(tmp_path / "s.json"))
    assert out.exit_code == 0, out.output
    assert len(server.requests) == 6 * 3  # every leaf of every item
    # leaf weights 1/4, 1/4, 1/2: MET on stinger and anaphylaxis = 0.75 of the positive points
    assert json.loads((tmp_path / "s.json").read_text())["overall"] == pytest.approx(0.75)


def test_compare_of_runs_with_no_item_in_common_is_an_error(tmp_path, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        runs = []
        for name, first in (("a", 0), ("b", 10)):
            items = tmp_path / f"{name}.jsonl"
            items.write_text("".join(json.dumps({"id": f"q{i}", "prompt": "Bee?", "response": "Ice."})
                                     + "\n" for i in range(first, first + 3)))
            runs.append(assay.grade(items, rubric=rubric_file, judges=[spec(server)],
                                    run_dir=tmp_path / name).run_dir)
    out = CliRunner().invoke(app, ["compare", str(runs[0]), str(runs[1])])
    assert out.exit_code == 1
    assert "no item in common" in out.output


def test_items_without_a_rubric_are_found_before_the_run_is_created(tmp_path, items_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = grade(str(items_file), "--judge", spec(server), "--run-dir", str(tmp_path / "run"))
        assert server.requests == [] and server.preflights == 0
    assert out.exit_code == 1
    assert "--rubric: 6 items have no rubric of their own (q0, q1, q2, q3, q4, q5)" in out.output
    assert not (tmp_path / "run").exists()


def test_the_budget_summary_counts_the_items_of_the_input(tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 6)
    with FakeJudgeServer.run_in_thread(policy=POLICY, usage={"prompt_tokens": 1_000_000}) as server:
        out = grade(str(items), "--rubric", str(rubric_file),
                    "--judge", f"openai:gpt-4.1-mini@{server.base_url}", "--budget", "1.7",
                    "--concurrency", "1", "--run-dir", str(tmp_path / "run"))
    assert out.exit_code == 3, out.output
    # $0.40 a call: the first item's 4 calls fit in the budget, the fifth call ends the run
    assert re.search(r"items scored\s+│\s+1 / 6 │", out.output), out.output


@pytest.mark.parametrize(("args", "says"), [
    (["--formula", "bogus"], "--formula: unknown formula 'bogus'"),
    (["--seed", "-1"], "--seed: expected a whole number >= 0, got -1"),
    (["--export", "{tmp}/x.xlsx"], "--export: cannot export to .xlsx"),
    (["--json", "{tmp}"], "--json: is a directory"),
    (["--cache", "{tmp}"], "--cache: is a directory"),
    (["--export", "{tmp}/items.jsonl/v.csv"], "--export:"),
    (["--json", "/proc/assay-cannot-write-here.json"], "--json: cannot write there"),
    (["--run-dir", "{tmp}/items.jsonl/run"], "--run-dir:"),
])
def test_bad_options_and_unwritable_outputs_fail_before_any_call(tmp_path, items_file, rubric_file,
                                                                  args, says):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = grade(str(items_file), "--rubric", str(rubric_file), "--judge", spec(server), *args)
        assert server.requests == [] and server.preflights == 0
    assert out.exit_code in (1, 2), out.output
    assert says in out.output.replace("\n", " ")
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_a_huge_response_is_refused_before_it_is_sent_to_a_judge(tmp_path, rubric_file):
    from assay.limits import MAX_RESPONSE_CHARS

    items = tmp_path / "items.jsonl"
    rows = [{"id": "ok", "prompt": "Bee?", "response": "Ice it."},
            {"id": "long", "prompt": "Bee?", "response": "x" * (MAX_RESPONSE_CHARS + 1)},
            {"id": "huge", "prompt": "Bee?", "response": "y" * 50_000_000}]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        out = grade(str(items), "--rubric", str(rubric_file), "--judge", spec(server),
                    "--run-dir", str(tmp_path / "run"))
        sent = {len(r["response_text"] or "") for r in server.requests}
    assert out.exit_code == 4  # incomplete: two items skipped, each named
    assert sent == {len("Ice it.")} and len(server.requests) == 4
    text = out.output.replace("\n", " ")
    assert f"item[long].response: {MAX_RESPONSE_CHARS + 1:,} characters, over the limit" in text
    assert "items.jsonl:3: line of 47.7 MiB, over the limit of 16 MiB per record" in text


def test_a_dry_run_checks_the_options_too(items_file, rubric_file):
    out = grade(str(items_file), "--rubric", str(rubric_file), "--judge", "vllm:m", "--dry-run",
                "--formula", "bogus")
    assert out.exit_code == 1 and "--formula: unknown formula 'bogus'" in out.output


def test_items_given_as_objects_with_a_repeated_id_are_refused_before_any_call(tmp_path,
                                                                              rubric_file):
    items = [{"id": "a", "prompt": "Bee?", "response": "Ice."},
             {"id": "b", "prompt": "Bee?", "response": "Ice."},
             {"id": "a", "prompt": "Wasp?", "response": "Ice."}]
    with (FakeJudgeServer.run_in_thread(policy=POLICY) as server,
          pytest.raises(assay.errors.InputError) as raised):
        assay.grade(items, rubric=rubric_file, judges=[spec(server)], run_dir=tmp_path / "run")
    assert str(raised.value) == "items: items[2].id: duplicate id 'a' (first at items[0])"
    assert not server.requests and not (tmp_path / "run").exists()
