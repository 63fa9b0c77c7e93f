"""The §8 validation report: CF vs RAGAS faithfulness against PF, Table 3 averages, judge vs
human, across judges, per hazard context, and a saved classifier on a run."""

from __future__ import annotations

import pytest

from assay.rag.grading import RagGrade
from assay.rag.items import RagItem
from assay.rag.validation import (
    across_judges,
    averages,
    by_hazard,
    faithfulness_validity,
    human_averages,
    judge_vs_human,
    rag_report,
)


def grade(item_id, cf, cr=True, refused=False, rf=None, hazard=None, judge="j"):
    return RagGrade(id=item_id, judge=judge, scope="in_scope", hazard=hazard,
                    refusal_expected=False, cf=cf, cr=cr, refused=refused,
                    refusal_correct=not refused, ragas_faithfulness=rf, diagnosis=["ideal"],
                    turns=[])


def item(item_id, **labels):
    return RagItem.model_validate({"id": item_id, "scope": "in_scope", "question": "q",
                                   "answer": "a", "labels": labels})


def test_cf_separating_pf_perfectly_has_auc_one_and_rf_with_a_swapped_pair_less():
    items = [item("a", pf=True), item("b", pf=True), item("c", pf=False), item("d", pf=False)]
    grades = [grade("a", 1.0, rf=0.9), grade("b", 0.8, rf=0.2),
              grade("c", 0.3, rf=0.5), grade("d", 0.0, rf=0.1)]
    rows = {r.metric: r for r in faithfulness_validity(items, grades)}
    assert rows["CF"].auc.value == 1.0
    assert rows["RF"].auc.value == 0.75  # pairs (a,c) (a,d) (b,d) ordered, (b,c) not: 3/4
    # point-biserial r: Σdx·dy = 0.5·(0.475+0.275+0.225+0.525) = 0.75, Σdx² = 0.6275, Σdy² = 1
    assert rows["CF"].pearson.value == pytest.approx(0.75 / 0.6275 ** 0.5)
    # τ-b: 4 concordant pairs, 0 discordant, 2 ties in PF: 4 / sqrt(6 · 4)
    assert rows["CF"].kendall.value == pytest.approx(4 / (6 * 4) ** 0.5)


def test_human_applied_cf_and_rf_are_validated_too():
    items = [item("a", pf=True, cf=1.0, rf=0.5), item("b", pf=False, cf=0.0, rf=0.6)]
    rows = [(r.metric, r.source, r.auc.value) for r in faithfulness_validity(items, [])]
    assert rows == [("CF", "human", 1.0), ("RF", "human", 0.0)]


def test_table_3_averages_are_percentages_of_items():
    grades = [grade("a", 1.0, cr=True, refused=False), grade("b", 0.5, cr=False, refused=True),
              grade("c", 0.0, cr=False, refused=False), grade("d", None, cr=True, refused=False)]
    row = averages(grades, "j")
    assert row.cf_pct.value == pytest.approx(50.0) and row.cf_pct.n == 3
    assert (row.cr_pct.value, row.ra_pct.value, row.refusal_accuracy.value) == (50.0, 25.0, 75.0)
    assert 0 <= row.cr_pct.ci.low < 50.0 < row.cr_pct.ci.high <= 100


def test_human_averages_come_from_the_labels():
    row = human_averages([item("a", cf=1.0, cr=True, ra=False), item("b", cf=0.5, cr=False,
                                                                     ra=True), item("c")])
    assert (row.n, row.cf_pct.value, row.cr_pct.value, row.ra_pct.value) == (2, 75.0, 50.0, 50.0)


def test_judge_vs_human_per_item_agreement():
    items = [item("a", cf=1.0, cr=True, ra=False), item("b", cf=0.0, cr=False, ra=True),
             item("c", cf=0.5, cr=True, ra=False)]
    grades = [grade("a", 1.0, cr=True), grade("b", 0.5, cr=True, refused=True),
              grade("c", 0.5, cr=True)]
    r = judge_vs_human(items, grades, "j")
    assert r.cr.accuracy.value == pytest.approx(2 / 3) and r.ra.accuracy.value == 1.0
    assert r.cf_mae.value == pytest.approx(0.5 / 3)


def test_agreement_across_judges_uses_the_items_they_all_graded():
    a = [grade("1", 1.0, cr=True), grade("2", 0.0, cr=False), grade("3", 0.5, cr=True)]
    b = [grade("1", 1.0, cr=True), grade("2", 0.0, cr=True), grade("4", 0.5, cr=True)]
    r = across_judges({"a": a, "b": b})
    assert r.n == 2 and r.cr_percent.value == 0.5 and r.ra_percent.value == 1.0
    assert r.cf_alpha.value == 1.0


def test_by_hazard_groups_in_section_5_order():
    rows = by_hazard([grade("a", 1.0, hazard="off_topic"), grade("b", 0.0, refused=True,
                                                                 hazard="clinical_kb_has_info"),
                      grade("c", None)])
    assert [r.hazard for r in rows] == ["clinical_kb_has_info", "off_topic", "unspecified"]
    assert rows[0].refusal_rate == 1.0 and rows[2].cf_mean is None


def test_the_report_on_the_shipped_sample_holds_every_section(sample_items, sample_graded):
    run, _ = sample_graded
    report = rag_report(sample_items, {"fake": run.grades, "fake again": run.grades})
    assert [a.rater for a in report.averages] == ["fake", "fake again", "human"]
    assert {(r.metric, r.source) for r in report.faithfulness_validity} == {
        ("CF", "fake"), ("RF", "fake"), ("CF", "human"), ("RF", "human"), ("CF", "fake again"),
        ("RF", "fake again")}
    assert report.across_judges.cr_fleiss.value == 1.0
    assert len(report.by_hazard["fake"]) == 10


# --- which items the report covers (issue 30, point 9) --------------------------------------

def test_a_run_sharing_no_id_with_the_items_is_an_error_naming_it():
    from assay.errors import InputError

    with pytest.raises(InputError, match=r"runs/other: id: none of the run's 2 graded ids is "
                                         r"among the 2 item ids"):
        rag_report([item("a", cr=True), item("b", cr=False)],
                   {"j": [grade("x", 1.0), grade("y", 1.0)]}, sources={"j": "runs/other"})


def test_human_figures_are_over_the_items_the_judge_graded():
    items = [item("a", cr=True), item("b", cr=True), item("c", cr=False), item("d", cr=False)]
    report = rag_report(items, {"j": [grade("a", 1.0), grade("c", 1.0)]})
    human = report.averages[-1]
    assert (human.rater, human.n, human.cr_pct.value, human.cr_pct.n) == ("human", 2, 50.0, 2)


def test_partial_overlap_is_counted_and_grades_of_other_items_are_left_out():
    report = rag_report([item("a"), item("b"), item("c")],
                        {"j": [grade("a", 1.0), grade("b", 0.0), grade("z", 0.5)]})
    (c,) = report.coverage
    assert (c.items, c.graded, c.shared, c.not_graded, c.not_items) == (3, 3, 2, 1, 1)
    assert report.items_compared == 2 and report.averages[0].cf_pct.value == 50.0


def test_with_two_runs_every_figure_is_over_the_items_both_graded():
    items = [item("a", cr=True), item("b", cr=False), item("c", cr=True)]
    report = rag_report(items, {"j": [grade("a", 1.0), grade("b", 0.0), grade("c", 1.0)],
                                "k": [grade("a", 1.0), grade("b", 0.0)]})
    assert report.items_compared == 2
    assert [a.cf_pct.n for a in report.averages[:2]] == [2, 2]
    assert report.averages[-1].cr_pct.value == 50.0


def test_table_3_shows_each_metrics_own_n():
    from rich.console import Console

    from assay.cli.tables.rag import averages_table

    row = averages([grade("a", 1.0), grade("b", None), grade("c", 0.5)], "j")
    console = Console(width=300, record=True)
    console.print(averages_table([row]))
    text = console.export_text()
    assert "75.0" in text and "n=2" in text and "n=3" in text
