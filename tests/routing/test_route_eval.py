"""Router evaluation against expert selections (§5.5), on hand-worked counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.routing.evaluate import Counts, evaluate_routing
from assay.testing import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
UNIVERSE = ["a1", "a2", "a3", "b1"]
BRANCH = {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}


def test_per_query_pooled_branch_and_scenario_figures_match_hand_counts():
    predicted = {"q1": {"a1", "a2"}, "q2": {"b1"}, "q3": set()}
    expert = {"q1": {"a1", "a3"}, "q2": {"b1"}, "q3": {"a2"}}
    ev = evaluate_routing(predicted, expert, universe=UNIVERSE, branch_of=BRANCH,
                          scenario_of={"q1": "S", "q2": "S", "q3": "T"})
    q1, q2, q3 = ev.queries["q1"], ev.queries["q2"], ev.queries["q3"]
    assert (q1.precision, q1.recall, q1.f1, q1.exact_match, q1.accuracy) == (0.5, 0.5, 0.5,
                                                                            False, 0.5)
    assert (q1.missed, q1.extra) == (("a3",), ("a2",))
    assert (q2.precision, q2.f1, q2.exact_match, q2.accuracy) == (1.0, 1.0, True, 1.0)
    assert (q3.precision, q3.recall, q3.f1, q3.accuracy) == (None, 0.0, 0.0, 0.75)
    # pooled: tp 2, fp 1, fn 2, tn 7 over 12 decisions
    pooled = ev.pooled.as_dict()
    assert (pooled["tp"], pooled["fp"], pooled["fn"], pooled["tn"]) == (2, 1, 2, 7)
    assert pooled["precision"] == pytest.approx(2 / 3) and pooled["recall"] == 0.5
    assert pooled["f1"] == pytest.approx(4 / 7) and pooled["accuracy"] == pytest.approx(9 / 12)
    assert pooled["exact_match"] == pytest.approx(1 / 3)
    # branch A: q1 tp1 fp1 fn1 tn0; q2 tn3; q3 fn1 tn2 -> tp1 fp1 fn2 tn5
    a = ev.by_branch["A"]
    assert (a.tp, a.fp, a.fn, a.tn) == (1, 1, 2, 5)
    assert ev.by_branch["B"].f1 == 1.0
    assert ev.by_scenario["S"].queries == 2 and ev.by_scenario["T"].recall == 0.0
    macro = ev.macro()
    assert macro["precision"] == pytest.approx(0.75) and macro["f1"] == pytest.approx(0.5)


def test_empty_sets_on_both_sides_are_a_perfect_match():
    c = Counts()
    c.add(set(), set(), UNIVERSE)
    assert (c.precision, c.recall, c.f1, c.exact_match) == (1.0, 1.0, 1.0, 1.0)


def test_a_query_the_router_never_saw_is_listed_not_scored():
    ev = evaluate_routing({}, {"q": {"a1"}}, universe=UNIVERSE)
    assert ev.missing == ["q"] and ev.pooled.queries == 0


def test_route_run_then_route_eval_from_the_command_line(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=EXAMPLES / "fake-stages.yaml") as server:
        out = CliRunner().invoke(app, [
            "route", "run", str(EXAMPLES / "pha-items.jsonl"), "--taxonomy", "starter",
            "--router", "tree", "--judge", f"openai-compatible:fake@{server.base_url}",
            "--job-dir", str(tmp_path / "job"), "--out", str(tmp_path / "r.jsonl"), "--quiet"])
        assert out.exit_code == 0, out.output
        assert "routed 4 items (4 distinct queries, 16 calls)" in " ".join(out.output.split())
    out = CliRunner().invoke(app, [
        "route", "eval", str(tmp_path / "r.jsonl"), "--taxonomy", "starter",
        "--expert", str(EXAMPLES / "expert-selections.jsonl"), "--json", str(tmp_path / "e.json")])
    assert out.exit_code == 0, out.output
    figures = json.loads((tmp_path / "e.json").read_text())
    # router: 6 + 3 + 4 + 2 = 15 chosen; experts: 7 + 3 + 5 + 2 = 17; shared: 6 + 2 + 4 + 2 = 14
    pooled = figures["pooled"]
    assert (pooled["tp"], pooled["fp"], pooled["fn"]) == (14, 1, 3)
    assert pooled["decisions"] == 4 * 112 and pooled["exact_match"] == 0.25
    assert set(figures["by_branch"]) == {"Medical skills", "Health memory", "Agent actions"}
    assert figures["by_scenario"]["Medical Explanation"]["f1"] == 1.0
    assert "pooled" in out.output and "Symptoms" in out.output


def test_an_expert_file_naming_unknown_leaves_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "expert.jsonl"
    bad.write_text('{"id": "q", "selected": ["ms.sf.er.01"]}\n{"id": "r", "selected": ["zz"]}\n')
    (tmp_path / "r.jsonl").write_text('{"id": "q", "active": []}\n')
    out = CliRunner().invoke(app, ["route", "eval", str(tmp_path / "r.jsonl"), "--taxonomy",
                                   "starter", "--expert", str(bad)])
    assert out.exit_code == 1
    assert f"{bad}:2: selected: unknown leaf id(s) zz" in " ".join(out.output.split())


def test_route_run_says_how_many_leaves_missing_health_data_excluded(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=EXAMPLES / "fake-stages.yaml") as server:
        out = CliRunner().invoke(app, [
            "route", "run", str(EXAMPLES / "pha-items.jsonl"), "--taxonomy", "starter",
            "--router", "tree", "--judge", f"openai-compatible:fake@{server.base_url}",
            "--job-dir", str(tmp_path / "job"), "--out", str(tmp_path / "r.jsonl"), "--quiet"])
    assert out.exit_code == 0, out.output
    routings = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    pairs = sum(len(r["excluded"]) for r in routings)
    assert f"leaves excluded for missing health data: {pairs} (item, leaf) pairs; " \
        "lab:glucose 8" in " ".join(out.output.split())


def test_route_run_with_failed_routings_exits_incomplete_naming_them(tmp_path):
    from assay.testing import Faults

    with FakeJudgeServer.run_in_thread(stages=EXAMPLES / "fake-stages.yaml",
                                       faults=Faults(malformed=1.0)) as server:
        out = CliRunner().invoke(app, [
            "route", "run", str(EXAMPLES / "pha-items.jsonl"), "--taxonomy", "starter",
            "--router", "tree", "--judge", f"openai-compatible:fake@{server.base_url}",
            "--job-dir", str(tmp_path / "job"), "--out", str(tmp_path / "r.jsonl"), "--quiet"])
    assert out.exit_code == 4, out.output  # incomplete (docs/run-safety.md), not bad input
    assert "error item 'statin': stage 'route_tree'" in out.output
    assert json.loads((tmp_path / "job" / "manifest.json").read_text())["status"] == "incomplete"
