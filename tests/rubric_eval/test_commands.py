"""The commands end to end over loopback, on the shipped samples and the shipped stage script
(``examples/rubric_eval/stages.json``), as the README runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer, Faults

EXAMPLES = Path(__file__).parents[2] / "examples" / "rubric_eval"
GOLD = ["--gold", str(EXAMPLES / "reference_rubrics.jsonl"),
        "--conversations", str(EXAMPLES / "conversations.txt")]


def short_means_unmet(view):
    """The grader: MET for any criterion on a response over 150 characters, else UNMET."""
    return "MET" if len(view.response_text or "") > 150 else "UNMET"


@pytest.fixture(scope="module")
def server():
    with FakeJudgeServer.run_in_thread(stages=EXAMPLES / "stages.json",
                                       policy=short_means_unmet) as s:
        yield s


@pytest.fixture(scope="module")
def spec(server):
    return f"openai-compatible:fake@{server.base_url}"


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result


def rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def test_cia_compares_two_rubric_sets_and_resumes_without_calls(server, spec, tmp_path):
    out = tmp_path / "cia"
    args = ["cia", EXAMPLES / "our_rubrics.jsonl", "--gold", EXAMPLES / "reference_rubrics.jsonl",
            "--against", EXAMPLES / "gpt4o_rubrics.jsonl", "--judge", spec, "--out", out,
            "--quiet"]
    result = run(*args)
    summary = json.loads((out / "cia.json").read_text())["summary"]
    # the stage script covers 14 of the 15 gold points with ours and 3 with GPT-4o's (a 4th
    # YES cites criterion 9 of 4, so it counts as NO)
    assert (summary["report"]["covered"], summary["report"]["total"]) == (14, 15)
    assert summary["against"]["covered"] == 3
    assert summary["comparison"]["mcnemar"]["details"]["b"] == 11
    assert summary["comparison"]["mcnemar"]["details"]["c"] == 0
    assert "0.933" in result.output and "McNemar exact" in result.output
    atoms = rows(out / "gold_atomic_points.jsonl")
    assert [a["gold_atomic_count"] for a in atoms] == [6, 4, 5]
    assert [a["source_rubric_count"] for a in atoms] == [10, 9, 10]
    calls = len(server.requests)
    run(*args)
    assert len(server.requests) == calls  # every call came back from the job's store
    again = run("coverage", out / "coverage.jsonl", "--against", out / "coverage_against.jsonl")
    assert "0.933" in again.output


def test_nearmiss_build_then_judge_with_three_rubric_sets_and_no_rubric(spec, tmp_path):
    run("nearmiss", "build", *GOLD, "--references", EXAMPLES / "reference_responses.jsonl",
        "--judge", spec, "--out", tmp_path / "build", "--quiet")
    pairs = {p["index"]: p for p in rows(tmp_path / "build" / "pairs.jsonl")}
    assert {i: (p["method"], p["error_type"]) for i, p in pairs.items()} == {
        "0": ("llm", "fact_swap"), "1": ("rule", "numeric_threshold"), "2": ("llm", "fact_swap")}
    assert pairs["1"]["edit_span_before"] == "2" and "last 3 days" in pairs["1"]["candidate"]
    assert pairs["0"]["target"].startswith("Clearly states that there is no conclusive")

    result = run("nearmiss", "judge", tmp_path / "build" / "pairs.jsonl",
                 "--rubrics", f"ours={EXAMPLES / 'our_rubrics.jsonl'}",
                 "--rubrics", f"gpt4o={EXAMPLES / 'gpt4o_rubrics.jsonl'}", "--rubrics", "none",
                 "--judge", spec, "--out", tmp_path / "judge", "--quiet", "--n-bootstrap", "50")
    sets = json.loads((tmp_path / "judge" / "discrimination.json").read_text())["sets"]
    # ours: the judge hits item 1 for the reference only → Δ = w₁ = 10, 7, 10 (mean 9);
    # GPT-4o's first weights are 4, 5, 4; none: the judge's totals, 5 − 0 except a tie on pair 1
    assert sets["ours"]["report"]["deltas"] == [10.0, 7.0, 10.0]
    assert sets["gpt4o"]["report"]["mu_delta"]["value"] == pytest.approx(13 / 3)
    assert (sets["none"]["report"]["wins"], sets["none"]["report"]["ties"]) == (2, 1)
    assert "ours" in result.output and "none" in result.output
    assert len(rows(tmp_path / "judge" / "pair_calls_ours.jsonl")) == 3 * 6
    again = run("discrimination", tmp_path / "judge" / "pair_calls_ours.jsonl",
                "--n-bootstrap", "50")
    assert "+9.000" in again.output


def test_refine_scores_every_condition_against_the_gold_rubrics(server, spec, tmp_path):
    args = ["refine", *GOLD, "--base", EXAMPLES / "base_responses.jsonl",
            "--rubrics", f"ours={EXAMPLES / 'our_rubrics.jsonl'}", "--judge", spec,
            "--out", tmp_path / "refine", "--quiet", "--n-bootstrap", "50"]
    result = run(*args)
    calls = len(server.requests)
    assert run(*args).output == result.output  # resumed: the same tables, no new call
    assert len(server.requests) == calls
    scores = {r["index"]: r for r in rows(tmp_path / "refine" / "scores.jsonl")}
    # base responses are short (all UNMET → 0); rubric-guided rewrites are long (all MET →
    # HealthBench score (Σ positive − Σ |negative|) / Σ positive: 33/45, 7/30, 28/45); the
    # self-critique rewrites stay short
    assert [scores[i]["base"] for i in "012"] == [0.0, 0.0, 0.0]
    assert [scores[i]["ours"] for i in "012"] == pytest.approx([33 / 45, 7 / 30, 28 / 45])
    assert scores["0"]["oracle"] == pytest.approx(33 / 45)
    assert [scores[i]["self-critique"] for i in "012"] == [0.0, 0.0, 0.0]
    stats = json.loads((tmp_path / "refine" / "refine.json").read_text())
    assert stats["versus_base"]["ours"]["mean_difference"]["value"] == pytest.approx(
        (33 / 45 + 7 / 30 + 28 / 45) / 3)
    assert stats["rewritten"] == {"ours": 3, "self-critique": 3, "oracle": 3}
    assert "ours vs self-critique" in stats["between"]
    refined = rows(tmp_path / "refine" / "refined.jsonl")
    assert all(r["dropped_steps"] == ["unknown action 'FORMAT'"] for r in refined
               if r["condition"] != "self-critique")
    assert "self-critique" in result.output and "oracle" in result.output


def test_a_bad_rubric_option_is_a_clear_error(spec, tmp_path):
    result = CliRunner().invoke(app, ["nearmiss", "judge", str(EXAMPLES / "stages.json"),
                                      "--rubrics", "ours", "--judge", spec, "--out",
                                      str(tmp_path / "j")])
    assert result.exit_code == 1 and "expected NAME=FILE (or none)" in result.output


def test_cia_finishes_with_the_atomisers_fallback_recorded_when_its_reply_never_parses(tmp_path):
    """Issue 40, point 5: the job ends complete, each query's gold points the authors'
    fallback, counted in cia.json per kind and per rubric set."""
    stages = json.loads((EXAMPLES / "stages.json").read_text())
    stages["cia_atomize"] = "never json"
    with FakeJudgeServer.run_in_thread(stages=stages) as server:
        out = tmp_path / "cia"
        result = run("cia", EXAMPLES / "our_rubrics.jsonl", "--gold",
                     EXAMPLES / "reference_rubrics.jsonl", "--against",
                     EXAMPLES / "gpt4o_rubrics.jsonl", "--judge",
                     f"openai-compatible:fake@{server.base_url}", "--out", out, "--quiet")
        atomiser = [r for r in server.requests if r.get("stage") == "cia_atomize"]
    assert len(atomiser) == 3 * 6  # per query: the reply and 2 re-asks, twice (the final pass)
    cia = json.loads((out / "cia.json").read_text())
    assert cia["atomisation_fallback_counts"] == {"refused": 0, "unreadable": 3,
                                                  "no_usable_point": 0, "total": 3}
    assert cia["atomisation_fallbacks_per_set"] == {"candidate": 3, "against": 3}
    atoms = rows(out / "gold_atomic_points.jsonl")
    assert [a["fallback_kind"] for a in atoms] == ["unreadable"] * 3
    assert [a["gold_atomic_count"] for a in atoms] == [a["source_rubric_count"] for a in atoms]
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    assert "3 by the atomiser's fallback, one point per criterion: 3 unreadable" in " ".join(
        result.output.split())


def test_cia_exits_4_for_an_incomplete_job(tmp_path):
    """As every other job with failed items (issue 40, point 4)."""
    stages = json.loads((EXAMPLES / "stages.json").read_text())
    faults = Faults(at={"Hypothesis": ["context_overflow"]})  # one verification refused
    with FakeJudgeServer.run_in_thread(stages=stages, faults=faults) as server:
        result = CliRunner().invoke(app, [str(a) for a in (
            "cia", EXAMPLES / "our_rubrics.jsonl", "--gold", EXAMPLES / "reference_rubrics.jsonl",
            "--judge", f"openai-compatible:fake@{server.base_url}", "--out", tmp_path / "cia",
            "--quiet")])
    assert result.exit_code == 4, result.output
    assert json.loads((tmp_path / "cia" / "manifest.json").read_text())["status"] == "incomplete"
