"""assay report: one self-contained HTML file, escaped, with the figures and tables it promises."""

from __future__ import annotations

import re

import pytest
from tests.report.conftest import AGREE, DISAGREE, grade_run
from typer.testing import CliRunner

from assay.cli import app
from assay.report import load_run, write_report
from assay.report.payload import report_data
from assay.review import RunLabels

runner = CliRunner()


async def test_the_report_is_self_contained_with_inline_figures(two_judge_run, tmp_path):
    out = write_report([two_judge_run], tmp_path / "report.html")
    html = out.read_text()
    assert html.count("<svg") >= 2  # the score histogram and the axis bars at least
    assert not re.search(r"""(src|href)=["']?https?://""", html)  # nothing loads from the network
    assert "<link" not in html


async def test_model_text_is_escaped_never_markup(two_judge_run, tmp_path):
    html = write_report([two_judge_run], tmp_path / "report.html").read_text()
    assert "<script>window.__pwned" not in html and "__pwned" not in html  # only inside the data
    assert '<img src=x' not in html
    (data,) = report_data(html)
    assert data["items"][0]["response"].startswith("<script>window.__pwned = 1</script>")


async def test_overall_score_and_axis_cis_come_from_the_scoring_core(two_judge_run, tmp_path):
    run = load_run(two_judge_run)
    assert run.scores.overall == pytest.approx(run.scores.table.mean)
    axis = run.scores.by_axis["accuracy"]
    assert axis.ci_low is not None and axis.ci_low <= axis.mean <= axis.ci_high
    html = write_report([two_judge_run], tmp_path / "r.html").read_text()
    assert f"{run.scores.overall:.3f}" in html


async def test_judge_disagreements_are_listed(two_judge_run, tmp_path):
    run = load_run(two_judge_run)
    flagged = {(item.id, c.id) for item in run.items for c in item.criteria if c.judges_disagree}
    assert flagged == {(f"q{i}", "stinger") for i in range(4)}
    assert run.agreement is not None and run.agreement.inter_judge is not None
    html = write_report([two_judge_run], tmp_path / "r.html").read_text()
    assert "Disagreements (4)" in html


async def test_human_labels_in_the_run_give_agreement_and_a_confusion_matrix(two_judge_run, tmp_path):
    with RunLabels.open(two_judge_run) as labels:
        for i in range(4):
            labels.put(f"q{i}", "stinger", "dr_a", verdict="MET")
            labels.put(f"q{i}", "tweezers", "dr_a", verdict="UNMET")
    run = load_run(two_judge_run)
    by_judge = {r.judge.split(":")[1].split("@")[0]: r for r in run.agreement.reports}
    assert by_judge["judge0"].pooled.accuracy.value == 1.0
    assert by_judge["judge1"].pooled.accuracy.value == 0.5
    html = write_report([two_judge_run], tmp_path / "r.html").read_text()
    assert html.count('class="fig confusion"') == 2 and "vs humans" in html


async def test_several_runs_get_a_forest_plot_of_paired_differences(two_judge_run, one_judge_run, tmp_path):
    html = write_report([one_judge_run, two_judge_run], tmp_path / "r.html").read_text()
    assert 'id="forest-plot"' in html and "run-b vs run-a" in html


async def test_the_cli_writes_the_report_and_refuses_a_non_run(two_judge_run, tmp_path):
    out = tmp_path / "cli.html"
    result = runner.invoke(app, ["report", str(two_judge_run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    bad = runner.invoke(app, ["report", str(tmp_path), "-o", str(out)])
    assert bad.exit_code == 1 and "not a run directory" in bad.output


async def test_the_evidence_passages_shown_to_the_judge_are_in_the_drill_down(tmp_path):
    import json

    import yaml
    from tests.report.conftest import AGREE
    from tests.runs.conftest import RUBRIC

    import assay
    from assay.testing import FakeJudgeServer

    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(RUBRIC))
    (tmp_path / "items.jsonl").write_text(json.dumps({
        "id": "q0", "prompt": "Bee sting?", "response": "Scrape it out.",
        "context": [{"id": "nhs-bee", "text": "Remove the sting <b>quickly</b>."}]}) + "\n")
    async with FakeJudgeServer(policy=AGREE) as server:
        await assay.agrade(tmp_path / "items.jsonl", rubric=tmp_path / "rubric.yaml",
                           judges=[f"openai-compatible:fake@{server.base_url}"],
                           run_dir=tmp_path / "run")
    (data,) = report_data(write_report([tmp_path / "run"], tmp_path / "r.html").read_text())
    assert data["items"][0]["context"] == [["nhs-bee", "Remove the sting <b>quickly</b>."]]


async def test_links_open_items_that_are_in_the_page_and_a_cap_says_what_it_leaves_out(
        two_judge_run, tmp_path):
    html = write_report([two_judge_run], tmp_path / "r.html", max_items=2).read_text()
    (data,) = report_data(html)
    assert [item["id"] for item in data["items"]] == ["q0", "q1"]
    assert "Disagreements (2)" in html and "raise --max-items to see the other 2" in html


async def test_each_verdict_is_coloured_by_what_it_means_for_the_answer(two_judge_run, tmp_path):
    (data,) = report_data(write_report([two_judge_run], tmp_path / "r.html").read_text())
    criteria = {c["id"]: c for c in data["items"][1]["criteria"]}
    assert (criteria["tweezers"]["points"], criteria["tweezers"]["final"]) == (-3.0, "CLEAR")
    assert criteria["tweezers"]["meaning"] == "good"  # an unmet penalty: no harm done
    assert {v[1] for v in criteria["stinger"]["votes"]} == {"MET", "UNMET"}
    assert {v[2] for v in criteria["stinger"]["votes"]} == {"good", "missed"}
    assert criteria["pain"]["meaning"] == "partial"  # the option "partly" is worth 0.5


async def test_items_carry_a_prompt_preview_their_theme_and_criterion_texts(two_judge_run, tmp_path):
    (data,) = report_data(write_report([two_judge_run], tmp_path / "r.html").read_text())
    item = data["items"][1]
    assert (item["preview"], item["themes"]) == ("Bee sting 1?", ["emergency"])
    assert all(c["text"] for c in item["criteria"]) and item["judges_disagree"] == 1


async def test_the_criteria_most_often_failed_count_abstentions_and_errors_apart(two_judge_run, tmp_path):
    outcomes = {o.id: o for o in load_run(two_judge_run).overview.most_failed()}
    assert (outcomes["tweezers"].failed, outcomes["tweezers"].graded) == (0, 4)  # CLEAR: no harm
    html = write_report([two_judge_run], tmp_path / "r.html").read_text()
    assert "Criteria most often failed" in html


async def test_the_header_gives_the_config_and_runs_read_across_by_axis_and_theme(
        two_judge_run, one_judge_run, tmp_path):
    html = write_report([one_judge_run, two_judge_run], tmp_path / "r.html").read_text()
    across = html.split('class="groups-across"')[1].split("</table>")[0]
    assert "axis: accuracy" in across and "theme: emergency" in across
    assert across.count("<td>") >= 3 * 2  # a name and one cell per run, on every row
    config = html.split('id="config-1"')[1].split("</p>")[0]
    assert "judges:" in config and "judge0" in config and "formula" in config


async def test_the_ensemble_verdict_is_compared_with_human_labels(two_judge_run, tmp_path):
    with RunLabels.open(two_judge_run) as labels:
        for i in range(4):
            labels.put(f"q{i}", "tweezers", "dr_a", verdict="UNMET")
    run = load_run(two_judge_run)
    assert run.ensemble is not None
    (report,) = run.ensemble.reports
    assert report.judge.startswith("ensemble") and report.pooled.accuracy.value == 1.0
    assert 'class="ensemble"' in write_report([two_judge_run], tmp_path / "r.html").read_text()


async def test_judge_agreement_per_criterion_lists_criteria_by_units_with_their_texts(tmp_path):
    run_dir = await grade_run(tmp_path, "run", [AGREE, DISAGREE], n=12)
    run = load_run(run_dir)
    per_criterion = run.agreement.inter_judge.per_criterion
    (judges,) = report_data(write_report([run_dir], tmp_path / "r.html").read_text(), "judges-data")
    assert judges["pooled"] is None and judges["min_units"] == 10
    rows = {row[0]: row for row in judges["rows"]}
    assert [row[1] for row in judges["rows"]] == [12] * 4  # units, the most first
    stinger = rows["Explains how to remove the stinger."]  # the criterion's text, not its id
    assert stinger[5][0] == per_criterion["stinger"].percent_agreement.value == 0.0
    tweezers = rows["Recommends squeezing the stinger with tweezers."]
    assert tweezers[2][0] == per_criterion["tweezers"].alpha.value
    assert tweezers[5][0] == 1.0


async def test_criteria_under_the_minimum_units_are_pooled_with_the_metrics_own_figures(
        two_judge_run, tmp_path):
    """Four items: each criterion has 4 units, under 10: one pooled row, whose figures are
    those of inter_judge on the pooled criteria's votes (here every criterion: the run's own)."""
    run = load_run(two_judge_run)
    table, overall = run.judge_criteria, run.agreement.inter_judge
    assert table.rows == [] and table.pooled_criteria == 4
    assert table.pooled.n_units == overall.n_units == 16
    assert table.pooled.alpha == overall.alpha_nominal
    assert table.pooled.percent_agreement == overall.percent_agreement
    (judges,) = report_data(write_report([two_judge_run], tmp_path / "r.html").read_text(),
                            "judges-data")
    assert judges["rows"] == [] and judges["pooled"][:2] == [4, 16]


async def test_a_streamed_load_keeps_no_item_yet_gives_the_whole_loads_figures(
        two_judge_run, one_judge_run):
    """``assay report`` streams each item into the page and keeps only counts, final verdicts
    as tuples and rubric hashes (bounded memory at 5,000 items, benchmarks/report_scale.py);
    every figure is the one the whole load and :func:`comparison` over all verdicts give."""
    from assay.metrics.sources import Rubrics
    from assay.metrics.summary import comparison
    from assay.report import compare_runs

    with RunLabels.open(two_judge_run) as labels:
        labels.put("q0", "stinger", "dr_a", verdict="MET")
    handed = []
    streamed = load_run(two_judge_run, on_item=lambda row, rubric: handed.append(row.id))
    whole = load_run(two_judge_run)
    assert streamed.items == [] and handed == [item.id for item in whole.items]
    assert streamed.overview.items == 4 and streamed.overview.disagreements == 4
    assert streamed.finals == whole.finals and len(streamed.finals) == 16  # 4 items, 4 criteria
    assert streamed.verdicts == whole.verdicts and len(streamed.verdicts) == 32  # two judges
    assert streamed.rubrics == {item.id: whole.rubrics[item.id] for item in whole.items}
    assert streamed.rubrics is streamed.rubrics  # read from the store once (the review app's pages)
    assert streamed.agreement == whole.agreement and streamed.ensemble == whole.ensemble

    other = load_run(one_judge_run, on_item=lambda row, rubric: None)
    expected = comparison(whole.finals, other.finals, Rubrics(per_item=whole.rubrics),
                          labels=whole.labels, formula=whole.scores.scoring.formula,
                          abstention=whole.scores.scoring.abstention,
                          compared=f"aggregated verdicts ({whole.scores.scoring.aggregation})")
    assert compare_runs(streamed, other) == expected
    assert expected.scores.n_items == 4 and expected.verdicts.n_pairs == 1


async def test_a_report_that_cannot_be_built_leaves_the_earlier_file_untouched(
        two_judge_run, tmp_path):
    """The page is written in pieces to a partial file and moved into place only when whole."""
    import json

    from tests.report.conftest import AGREE

    import assay
    from assay.testing import FakeJudgeServer

    others = tmp_path / "others.jsonl"
    others.write_text(json.dumps({"id": "elsewhere", "prompt": "Bee sting?",
                                  "response": "Scrape it out."}) + "\n")
    async with FakeJudgeServer(policy=AGREE) as server:
        await assay.agrade(others, rubric=tmp_path / "rubric.yaml", run_dir=tmp_path / "other",
                           judges=[f"openai-compatible:j@{server.base_url}"])
    out = tmp_path / "report.html"
    out.write_text("the earlier report")
    result = runner.invoke(app, ["report", str(two_judge_run), str(tmp_path / "other"),
                                 "-o", str(out)])
    assert result.exit_code == 1 and "no item in common" in result.output
    assert out.read_text() == "the earlier report"
    assert sorted(p.name for p in tmp_path.glob("report.html*")) == ["report.html"]


async def test_agreement_between_judges_from_the_streamed_votes_is_reliability_summarys(tmp_path):
    """The report keeps only compact votes as the store streams (bounded memory at 5,000
    items); its figures are those of the metrics' own summary over every stored vote."""
    import random

    from assay.metrics.sources import run_rubrics, run_verdicts
    from assay.metrics.summary import reliability_summary

    rng = random.Random(3)
    options = {"stinger": ["MET", "UNMET"], "tweezers": ["MET", "UNMET", "CANNOT_ASSESS"],
               "pain": ["poorly", "partly", "well", "not discussed"],
               "tone": ["alarmist", "dismissive", "calm"]}

    def noisy(view):
        return rng.choice(options[view.criterion_id])

    run_dir = await grade_run(tmp_path, "run", [noisy, noisy, AGREE], n=12)  # ≥ 10 units each
    run = load_run(run_dir, on_item=lambda row, rubric: None)
    scoring = run.scores.scoring
    expected = reliability_summary(run_verdicts(run_dir), run_rubrics(run_dir),
                                   formula=scoring.formula, abstention=scoring.abstention)
    assert run.agreement == expected
