"""``assay grade --taxonomy TREE --router KIND`` end to end over loopback, with the shipped
starter taxonomy, the example PHA items and the example stage script (the README's demo)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.routing.conftest import hand_built_tree
from typer.testing import CliRunner

from assay.cli import app
from assay.runs.store import RunStore
from assay.testing import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
ITEMS = EXAMPLES / "pha-items.jsonl"
STAGES = EXAMPLES / "fake-stages.yaml"


def grade(server, tmp_path, *extra, name="run"):
    out = CliRunner().invoke(app, [
        "grade", str(ITEMS), "--judge", f"openai-compatible:fake@{server.base_url}",
        "--template", "auditor", "--run-dir", str(tmp_path / name), "--quiet",
        "--json", str(tmp_path / f"{name}.json"), *extra])
    assert out.exit_code == 0, out.output
    return out.output, json.loads((tmp_path / f"{name}.json").read_text())


def test_the_tree_router_grades_only_active_leaves_and_scores_with_eq4(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES) as server:
        output, summary = grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree")
        stages = [r.get("stage") for r in server.requests]
    routing = summary["routing"]
    # 4 queries x 4 depths of routing; 6 + 3 + 4 + 2 active leaves graded once each
    assert (routing["routing_calls"], routing["grading_calls_made"]) == (16, 15)
    assert stages.count("route_tree") == 16 and stages.count("auditor") == 15
    assert routing["measured_calls_per_item"] == pytest.approx(31 / 4)
    assert routing["calls_per_item_all_leaves"] == 112
    output = " ".join(output.split())  # rich wraps long lines
    assert "calls per item 7.8" in output and "vs 112 grading every leaf" in output
    scores = {i["item_id"]: i["score"] for i in summary["items"]}
    assert scores == {"ldl": 1.0, "chest": 0.0, "sleep": 1.0, "statin": 1.0}
    assert summary["overall"] == pytest.approx(0.75)
    store = RunStore.open(tmp_path / "run")
    stored = json.loads(store.meta("routing"))
    store.close()
    active = {k: [s["id"] for s in v["active"]] for k, v in stored["items"].items()}
    assert active["chest"] == ["ms.sf.er.01", "ms.sf.un.04", "ms.cm.cl.02"]
    assert stored["items"]["chest"]["details"]["tau"] == 0.3          # emergency query
    assert "hm.fg.lb.04" in active["ldl"] and stored["taxonomy"]["version"] == "0.2.0"
    assert "hm.fg.lb.04" in stored["items"]["statin"]["excluded"]      # no health memory
    assert (tmp_path / "run" / "routing" / "calls.sqlite").exists()


def test_a_resumed_taxonomy_run_makes_no_new_call(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES) as server:
        grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree")
        before = len(server.requests)
        grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree", "--resume",
              str(tmp_path / "run"), name="again")
        assert len(server.requests) == before


def test_router_all_grades_every_leaf_with_the_tree_weights(tmp_path):
    tree = tmp_path / "tree.yaml"
    tree.write_text(yaml.safe_dump(hand_built_tree().model_dump(mode="json")))
    with FakeJudgeServer.run_in_thread(stages={"auditor": {
            "by_prompt": [["plain language", {"output": "Reason: jargon. [0]"}]],
            "default": {"output": "Reason: fine. [1]"}}}) as server:
        _, summary = grade(server, tmp_path, "--taxonomy", str(tree), "--router", "all")
    # 4 items x 4 leaves; a3 (weight 1/2 * 1/2 * 1 = 1/4) fails: Eq. 4 = (1 - 1/4) / 1
    assert summary["routing"]["grading_calls_made"] == 16
    assert [i["score"] for i in summary["items"]] == pytest.approx([0.75] * 4)


def test_bad_taxonomy_options_are_clear_errors(tmp_path):
    base = ["grade", str(ITEMS), "--judge", "vllm:x", "--taxonomy", "starter"]
    out = CliRunner().invoke(app, [*base, "--router", "magic"])
    assert out.exit_code == 1 and "--router: unknown router 'magic'" in " ".join(out.output.split())
    out = CliRunner().invoke(app, [*base, "--rubric", str(ITEMS)])
    assert out.exit_code == 1 and "the taxonomy is the rubric" in " ".join(out.output.split())


async def test_the_python_api_routes_grades_and_returns_the_routings(serve, tmp_path, tree):
    from assay.item import Item
    from assay.routing.run import aroute_and_grade
    from assay.runs import RunOptions

    server = await serve(stages={"route_catalogue": {"rubric_ids": ["a1", "a3"]},
                                 "auditor": {"by_prompt": [["Uses plain", {"output": "No. [0]"}]],
                                             "default": {"output": "Yes. [1]"}}})
    spec = f"openai-compatible:fake@{server.base_url}"
    items = [Item(id=f"q{i}", prompt="Chest pain?", response=f"answer {i}") for i in range(2)]
    result = await aroute_and_grade(items, tree, RunOptions(judges=[spec], templates={
        "binary": "auditor"}), tmp_path / "run", router="catalogue")
    assert {k: r.ids for k, r in result.routings.items()} == {"q0": ["a1", "a3"],
                                                              "q1": ["a1", "a3"]}
    # one routing call for the shared query; a1 (1/2 · 1/2 · 1/2) passes, a3 (1/2 · 1/2)
    # fails: Eq. 4 = (1/8) / (1/8 + 1/4) = 1/3
    assert result.summary["routing_calls"] == 1 and result.summary["grading_calls_made"] == 4
    assert result.report.scores.overall == pytest.approx(1 / 3)
    assert result.report.scores.scoring.formula == "pass-rate"


async def test_an_unknown_id_dropped_by_the_router_leaves_the_item_scored_and_is_recorded(
        serve, tmp_path, tree):
    """Issue 40, point 5: the routing record, the run's summary and its report name the
    dropped ids; the item is graded on the known ones."""
    from assay.item import Item
    from assay.report import write_report
    from assay.routing.run import aroute_and_grade
    from assay.runs import RunOptions

    server = await serve(stages={"route_catalogue": {"rubric_ids": ["a1", "bogus.9"]},
                                 "auditor": {"output": "Yes. [1]"}})
    spec = f"openai-compatible:fake@{server.base_url}"
    result = await aroute_and_grade([Item(id="q0", prompt="Chest pain?", response="Go to A&E.")],
                                    tree, RunOptions(judges=[spec], templates={
                                        "binary": "auditor"}), tmp_path / "run",
                                    router="catalogue")
    assert result.report.status == "complete" and result.report.scores.overall == 1.0
    assert result.routings["q0"].ids == ["a1"]
    assert result.routings["q0"].details["dropped_ids"] == ["bogus.9"]
    assert result.summary["dropped_ids"] == {"q0": ["bogus.9"]}
    store = RunStore.open(tmp_path / "run")
    stored = json.loads(store.meta("routing"))
    store.close()
    assert stored["items"]["q0"]["details"]["dropped_ids"] == ["bogus.9"]
    html = write_report([tmp_path / "run"], tmp_path / "r.html").read_text()
    assert "unknown leaf ids dropped (after the re-asks): q0: bogus.9" in html


def test_routing_calls_use_the_runs_response_cache(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with FakeJudgeServer.run_in_thread(stages=STAGES) as server:
        grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree", "--cache", cache,
              name="first")
        seen = len(server.requests)
        grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree", "--cache", cache,
              name="second")  # a new run directory: only the cache can spare the calls
        assert len(server.requests) == seen  # neither routing nor grading asked again


def test_routing_spends_the_runs_budget_before_grading_does(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, usage={"prompt_tokens": 1000,
                                                             "completion_tokens": 0}) as server:
        config = tmp_path / "assay.toml"  # $1 per call: 1,000 prompt tokens at $1,000 per million
        config.write_text(f'[judges.priced]\nspec = "openai-compatible:fake@{server.base_url}"\n'
                          'price = { input = 1000.0, output = 0.0 }\n'
                          'limits = { max_in_flight = 1 }\n')
        out = CliRunner().invoke(app, [
            "grade", str(ITEMS), "--judge", "priced", "--config", str(config), "--template",
            "auditor", "--run-dir", str(tmp_path / "run"), "--quiet", "--taxonomy", "starter",
            "--router", "tree", "--budget", "18"])
        stages = [r.get("stage") for r in server.requests]
    assert out.exit_code == 3, out.output  # a budget stop
    assert stages.count("route_tree") == 16  # routing spent $16 of the $18 ...
    assert 1 <= stages.count("auditor") <= 3  # ... so grading had about $2 left, not $18


def test_the_report_of_a_taxonomy_run_shows_its_routing_active_leaves_and_dimensions(tmp_path):
    from assay.report import write_report

    with FakeJudgeServer.run_in_thread(stages=STAGES) as server:
        grade(server, tmp_path, "--taxonomy", "starter", "--router", "tree")
    html = write_report([tmp_path / "run"], tmp_path / "r.html").read_text()
    routing = html.split('id="routing-1"')[1].split("</table>")[0]
    assert "assay-starter-health 0.2.0" in routing and "router <b>tree</b>" in routing
    assert "3.8 of 112 leaves active per item" in routing
    leaves = routing.split('class="active-leaves"')[1]
    assert leaves.count("<tr>") == 1 + 15  # a header, then the 15 leaves graded (all distinct)
    assert 'title="ms.sf.er.01"' in leaves and "Medical skills" in leaves  # its text, its id on hover
