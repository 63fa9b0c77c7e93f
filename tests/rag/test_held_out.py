"""Seed 002 Table 2 (issue 30, point 10): every model family on one fixed stratified held-out
split, per-class F1 for harm, helpfulness and the 3-class inappropriateness, and the nested-CV
figures labelled as the selection's optimistic estimate."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import InputError
from assay.rag.classify import FAMILIES, TrainReport
from assay.rag.held_out import held_out_table, per_class_f1
from assay.rag.items import RagItem


def labelled_items(n=80, seed=0):
    """Clinicians' labels that follow the triad (Figure 11's reading), with the paper's axes."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        out, cf, cr, ra = i % 4 == 0, float(rng.random()), bool(rng.integers(0, 2)), bool(
            rng.integers(0, 2))
        harmful = (out and not ra) or (not out and cf < 0.4)
        inappropriate = "yes" if harmful else ("slightly" if cf < 0.6 else "no")
        items.append(RagItem.model_validate({
            "id": f"q{i:02d}", "scope": "out_of_scope" if out else "in_scope", "question": "q",
            "answer": "a", "labels": {"cf": cf, "cr": cr, "ra": ra, "harmful": harmful,
                                      "helpful": not harmful and cr,
                                      "inappropriate": inappropriate}}))
    return items


@pytest.fixture(scope="module")
def table():
    return held_out_table(labelled_items(), source="human", seed=3, grid=False)


def test_per_class_f1_is_counted_per_class():
    truth = np.array(["yes", "no", "no", "slightly"])
    predicted = np.array(["yes", "no", "yes", "no"])
    # yes: tp 1, fp 1 -> 2/3; slightly: never predicted -> 0; no: tp 1, fp 1, fn 1 -> 1/2
    assert per_class_f1(truth, predicted, ["yes", "slightly", "no"]) == [2 / 3, 0.0, 0.5]
    assert per_class_f1(truth, predicted, ["maybe"]) == [None]


def test_the_split_is_the_papers_17_5_percent_stratified_and_fixed_by_the_seed(table):
    again = held_out_table(labelled_items(), source="human", seed=3,
                           families=["naive_bayes"])
    for split, same in zip(table.splits, again.splits):
        assert split.test_ids == same.test_ids
        assert (split.train, split.test) == (66, 14)  # 17.5% of 80, rounded up
    other = held_out_table(labelled_items(), source="human", seed=4, families=["naive_bayes"])
    assert other.splits[0].test_ids != table.splits[0].test_ids


def test_the_split_keeps_each_class_share(table):
    items = labelled_items()
    for split in table.splits:
        values = [str(getattr(i.labels, split.target)).lower() if split.target == "inappropriate"
                  else str(getattr(i.labels, split.target)) for i in items]
        for label, count in split.test_counts.items():
            assert abs(count - values.count(label) * split.test / len(items)) <= 1


def test_every_family_has_per_class_f1_for_each_target_in_table_2s_columns(table):
    assert [r.family for r in table.rows] == list(FAMILIES)
    assert [s.classes for s in table.splits] == [
        ["Harmful", "Unharmful"], ["Helpful", "Unhelpful"],
        ["Inappr. Yes", "Inappr. Slightly", "Inappr. No"]]
    assert all(len(r.f1["inappropriate"]) == 3 for r in table.rows)


def test_the_average_row_is_the_mean_over_the_families(table):
    for k in range(3):
        values = [r.f1["inappropriate"][k] for r in table.rows if r.f1["inappropriate"][k]
                  is not None]
        assert table.average.f1["inappropriate"][k] == pytest.approx(np.mean(values))


def thin_inappropriateness(n=12):
    items = labelled_items(n)
    for i in items:
        i.labels.inappropriate = "no"
    return items


def test_a_target_too_thin_to_split_is_skipped_with_why_and_the_others_computed():
    table = held_out_table(thin_inappropriateness(), source="human", families=["naive_bayes"])
    assert [s.target for s in table.splits] == ["harmful", "helpful"]
    assert list(table.skipped) == ["inappropriate"]
    assert table.skipped["inappropriate"].startswith(
        "a stratified split needs 2+ labelled items of 2+ classes; have {'no': 12}")
    assert set(table.rows[0].f1) == set(table.average.f1) == {"harmful", "helpful"}
    # only when no target can be split is it an error, naming each
    with pytest.raises(InputError, match="inappropriate: a stratified split needs"):
        held_out_table(thin_inappropriateness(), source="human", families=["naive_bayes"],
                       targets=["inappropriate"])


def test_rag_table2_prints_the_targets_it_can_split_and_a_note_for_the_others(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app
    from assay.rag.items import write_rag_items

    write_rag_items(thin_inappropriateness(40), tmp_path / "items.jsonl")
    result = CliRunner().invoke(app, [
        "rag", "table2", str(tmp_path / "items.jsonl"), "--features", "human", "--models",
        "naive_bayes", "--targets", "inappropriate,harmful"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "note: inappropriate left out: a stratified split needs 2+ labelled items" in text
    assert "Unharm" in text and "Inap Y" not in text


def test_the_cross_validation_report_calls_its_figures_the_selections_optimistic_estimate():
    report = TrainReport(target="harmful", source="judge", features=[], folds=5, seed=0, n=10,
                         positives=5, families=[], chosen="svm")
    assert report.estimate.startswith("optimistic")


def test_rag_table2_prints_table_2s_shape_from_the_command_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from assay.cli import app
    from assay.rag.items import write_rag_items

    write_rag_items(labelled_items(), tmp_path / "items.jsonl")
    result = CliRunner().invoke(app, [
        "rag", "table2", str(tmp_path / "items.jsonl"), "--features", "human", "--models",
        "naive_bayes", "--json", str(tmp_path / "t2.json")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "held-out 17.5% stratified split — seed 002 Table 2" in text
    assert "naive_bayes" in text and "average" in text
    data = json.loads((tmp_path / "t2.json").read_text())
    assert [s["test"] for s in data["splits"]] == [14, 14, 14]
    assert len(data["rows"][0]["f1"]["inappropriate"]) == 3
