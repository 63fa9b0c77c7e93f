"""A taxonomy run's routing is part of the run: its calls, tokens and dollars are in the run's
totals, a routing stopped by the budget is a budget stop (exit 3), and a routing that failed
leaves the run incomplete (exit 4) until a resume retries exactly that routing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.jobs import CallStore
from assay.testing import FakeJudgeServer
from assay.testing.stages import StageScript

EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
ITEMS = EXAMPLES / "pha-items.jsonl"
STAGES = EXAMPLES / "fake-stages.yaml"
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}


def grade(server, tmp_path, *extra, budget: float | None = None):
    """``assay grade`` of the example items with a priced judge ($1 per call at USAGE)."""
    config = tmp_path / "assay.toml"
    config.write_text(f'[judges.priced]\nspec = "openai-compatible:fake@{server.base_url}"\n'
                      'price = { input = 900.0, output = 1000.0 }\n'
                      'limits = { max_in_flight = 1 }\n')
    return CliRunner().invoke(app, [
        "grade", str(ITEMS), "--judge", "priced", "--config", str(config), "--template",
        "auditor", "--run-dir", str(tmp_path / "run"), "--quiet", "--taxonomy", "starter",
        "--router", "tree", "--json", str(tmp_path / "run.json"), *extra,
        *(["--budget", str(budget)] if budget is not None else [])])


def manifest(tmp_path) -> dict:
    return json.loads((tmp_path / "run" / "manifest.json").read_text())


def one_malformed_routing(item_text: str) -> StageScript:
    """The example script, but the first routing call of the query containing ``item_text``
    gets a malformed reply, and so do its two re-asks: that routing fails."""
    script = StageScript.from_file(STAGES)
    scripted = script._replies["route_tree"]
    broken = {"left": 3}

    def route_tree(request):
        if item_text in request.text and broken["left"]:
            broken["left"] -= 1
            return "not JSON {"
        return scripted

    script["route_tree"] = route_tree
    return script


def test_routing_calls_tokens_and_dollars_are_part_of_the_runs_totals(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, usage=USAGE) as server:
        out = grade(server, tmp_path)
    assert out.exit_code == 0, out.output
    with CallStore.open(tmp_path / "run" / "routing" / "calls.sqlite") as routing:
        routed = routing.totals()
    totals = manifest(tmp_path)["totals"]
    # 16 routing calls and 15 grading calls, $1 each (1,000 tokens in, 100 out), and the
    # judge's preflight request (the fake bills it 1 token in and 1 out: $0.0019)
    assert (routed.calls, routed.cost_usd) == (16, pytest.approx(16.0))
    assert totals["calls"] == 31 and totals["preflight_requests"] == 1
    assert totals["cost_usd"] == pytest.approx(31.0019)
    assert totals["prompt_tokens"] == 31_001 and totals["completion_tokens"] == 3_101
    assert json.loads((tmp_path / "run.json").read_text())["totals"] == totals
    assert "│    31 │" in out.output  # the summary table


def test_a_failed_routing_leaves_the_run_incomplete_and_a_resume_retries_exactly_it(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=one_malformed_routing("crushing pressure"),
                                       usage=USAGE) as server:
        first = grade(server, tmp_path)
        first_status = manifest(tmp_path)["status"]
        before = len(server.requests)
        again = grade(server, tmp_path, "--resume", str(tmp_path / "run"))
        resumed = server.requests[before:]
    assert first.exit_code == 4, first.output  # incomplete, not an error, never complete
    assert first_status == "incomplete"
    assert "routing failed for item 'chest'" in " ".join(first.output.split())
    assert again.exit_code == 0, again.output
    routings = [r for r in resumed if r["stage"] == "route_tree"]
    # only the chest item is routed again (one call per depth of its tree walk), then graded
    assert routings and all("crushing pressure" in json.dumps(r["body"]) for r in routings)
    assert [r["stage"] for r in resumed].count("auditor") == 3
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["status"] == "complete" and summary["routing"]["routing_failed"] == {}
    assert {i["item_id"]: i["score"] for i in summary["items"]} == {
        "ldl": 1.0, "chest": 0.0, "sleep": 1.0, "statin": 1.0}


def test_a_budget_stop_during_routing_exits_3_with_the_routing_spend_counted(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, usage=USAGE) as server:
        out = grade(server, tmp_path, budget=13.5)
        sent = [r["stage"] for r in server.requests]
    assert out.exit_code == 3, out.output  # a budget stop, like any other
    assert manifest(tmp_path)["status"] == "budget"
    assert "budget reached" in out.output
    # routing calls cost $1 and reserve up to $1.6 (1,024 completion tokens): routing stops
    # within one reservation of $13.50, and no grading call fits in what is left
    routed = sent.count("route_tree")
    assert 12 <= routed <= 13 and "auditor" not in sent
    assert manifest(tmp_path)["totals"]["cost_usd"] == pytest.approx(routed)


def test_resuming_a_taxonomy_run_without_its_items_says_how_to_resume_it(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=STAGES, usage=USAGE) as server:
        assert grade(server, tmp_path).exit_code == 0
        out = CliRunner().invoke(app, ["grade", "--resume", str(tmp_path / "run"), "--quiet"])
    assert out.exit_code == 1
    message = " ".join(out.output.split())
    assert "a taxonomy run" in message and "--taxonomy, --router" in message
