"""End to end: an Autorubric dataset graded and meta-evaluated in two commands.

``assay grade DATASET.json`` against the fake judge, then ``assay agreement RUN`` with the
labels the run stored from the dataset's ground truth. Answering from the ground truth gives
perfect agreement on binary, ordinal (with an N/A option) and nominal criteria; answering from a
perturbed copy moves every figure to exactly what the changed labels imply.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from assay.cli import app
from assay.io.autorubric_dataset import read_dataset
from assay.review.labels import RunLabels
from assay.testing.dataset_policy import DatasetPolicy, write_perturbed_dataset
from assay.testing.server import FakeJudgeServer

EXAMPLES = Path(__file__).parents[2] / "examples" / "autorubric"
CHARM = EXAMPLES / "charm100_sample.json"
ESSAY = EXAMPLES / "essay_grading_dataset.json"


def _grade(dataset: Path, policy, run: Path, *extra: str) -> None:
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        result = CliRunner().invoke(app, [
            "grade", str(dataset), "--judge", f"openai-compatible:fake@{server.base_url}",
            "--run-dir", str(run), "-q", *extra])
    assert result.exit_code == 0, result.output


def _agreement(source: Path, out: Path, *extra: str) -> dict:
    result = CliRunner().invoke(app, ["agreement", str(source), "--json", str(out), *extra])
    assert result.exit_code == 0, result.output
    [report] = json.loads(out.read_text())["reports"]
    return report


def _by_criterion(report: dict) -> dict[str, dict]:
    return {c["criterion_id"]: c for c in report["per_criterion"]}


@pytest.mark.parametrize("dataset", [CHARM, ESSAY], ids=["charm-mixed", "essay-binary"])
def test_answering_from_the_ground_truth_gives_perfect_agreement(tmp_path, dataset):
    _grade(dataset, DatasetPolicy.from_file(dataset), tmp_path / "run")
    with RunLabels.open(tmp_path / "run") as stored:
        assert set(stored.verdicts()) == set(read_dataset(dataset).labels)
    report = _agreement(tmp_path / "run", tmp_path / "agreement.json")
    assert report["missing_verdicts"] == 0 and report["unlabelled"] == 0
    assert report["pooled"]["accuracy"]["value"] == 1.0
    for criterion in report["per_criterion"]:
        part = criterion["binary"] or criterion["ordinal"] or criterion["nominal"]
        accuracy = part.get("accuracy") or part["exact_accuracy"]
        assert accuracy["value"] == 1.0, criterion["criterion_id"]
    scores = report["scores"]
    assert scores["rmse"]["value"] == pytest.approx(0.0, abs=1e-12)
    assert scores["spearman"]["value"] == pytest.approx(1.0)


def test_every_criterion_kind_is_meta_evaluated_with_its_own_kappa(tmp_path):
    _grade(CHARM, DatasetPolicy.from_file(CHARM), tmp_path / "run")
    criteria = _by_criterion(_agreement(tmp_path / "run", tmp_path / "agreement.json"))
    assert {k: c["kind"] for k, c in criteria.items()} == {
        "satisfaction": "ordinal", "helpfulness": "ordinal", "naturalness": "ordinal",
        "response_length": "nominal", "factual_accuracy": "binary", "specificity": "ordinal"}
    specificity = criteria["specificity"]  # one item labelled N/A, answered N/A
    assert specificity["n"] == 11
    assert (specificity["na"]["n_na_true"], specificity["na"]["n_na_both"]) == (1, 1)
    assert specificity["ordinal"]["kappa_quadratic"]["value"] == pytest.approx(1.0)
    assert criteria["response_length"]["nominal"]["kappa"]["value"] == pytest.approx(1.0)
    assert criteria["factual_accuracy"]["binary"]["kappa"]["value"] == pytest.approx(1.0)


def test_a_perturbed_copy_moves_accuracy_and_kappa_to_what_the_changed_labels_imply(tmp_path):
    perturbed = tmp_path / "perturbed.json"
    assert write_perturbed_dataset(CHARM, perturbed, rate=0.3, seed=4) > 0
    _grade(CHARM, DatasetPolicy.from_file(perturbed), tmp_path / "run")
    report = _agreement(tmp_path / "run", tmp_path / "agreement.json")
    original, judged = read_dataset(CHARM), read_dataset(perturbed)
    criteria = _by_criterion(report)
    rubric = original.rubric
    for criterion in rubric.criteria:
        pairs = [(t, p) for t, p in zip(original.labels, judged.labels)
                 if t.criterion_id == criterion.id]
        got = criteria[criterion.id]
        if not criterion.is_multi_choice:
            true = [t.decision.value for t, _ in pairs]
            pred = [p.decision.value for _, p in pairs]
            assert got["binary"]["accuracy"]["value"] == pytest.approx(
                sum(a == b for a, b in zip(true, pred)) / len(true))
            assert got["binary"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(true, pred))
            continue
        na = {o.label for o in criterion.options if o.na}
        scored = [(t.option, p.option) for t, p in pairs if t.option not in na and p.option not in na]
        true, pred = [t for t, _ in scored], [p for _, p in scored]
        accuracy = sum(a == b for a, b in scored) / len(scored)
        if criterion.kind.value == "ordinal":
            steps = {o.label: i for i, o in enumerate(o for o in criterion.options if not o.na)}
            ordinal = got["ordinal"]
            assert ordinal["exact_accuracy"]["value"] == pytest.approx(accuracy)
            assert ordinal["adjacent_accuracy"]["value"] == 1.0  # every change is one step
            expected = cohen_kappa_score([steps[t] for t in true], [steps[p] for p in pred],
                                         weights="quadratic", labels=sorted(steps.values()))
            assert ordinal["kappa_quadratic"]["value"] == pytest.approx(expected)
        else:
            assert got["nominal"]["accuracy"]["value"] == pytest.approx(accuracy)
            assert got["nominal"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(true, pred))
    assert report["pooled"]["accuracy"]["value"] < 1.0
    assert report["scores"]["rmse"]["value"] > 0.0


def test_agreement_reads_a_dataset_as_labels_for_a_verdict_file(tmp_path):
    _grade(CHARM, DatasetPolicy.from_file(CHARM), tmp_path / "run",
           "--export", str(tmp_path / "verdicts.jsonl"))
    from_run = _agreement(tmp_path / "run", tmp_path / "a.json")
    from_file = _agreement(tmp_path / "verdicts.jsonl", tmp_path / "b.json",
                           "--labels", str(CHARM))
    assert from_file["per_criterion"] == from_run["per_criterion"]
    assert from_file["scores"] == from_run["scores"]


def test_resuming_a_dataset_run_does_not_store_its_labels_twice(tmp_path):
    run = tmp_path / "run"
    with FakeJudgeServer.run_in_thread(policy=DatasetPolicy.from_file(CHARM)) as server:
        runner = CliRunner()
        first = runner.invoke(app, ["grade", str(CHARM), "-q", "--run-dir", str(run),
                                    "--judge", f"openai-compatible:fake@{server.base_url}"])
        again = runner.invoke(app, ["grade", "--resume", str(run), "-q"])
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    with RunLabels.open(run) as stored:
        assert len(stored.verdicts()) == 72 and stored.history_count() == 72


def test_agreement_without_labels_on_a_run_that_stored_none_says_what_to_give(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "prompt": "Hi?", "response": "Hello."}) + "\n")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("id: r\ncriteria:\n  - {id: greets, text: Greets., weight: 1}\n")
    _grade(items, "MET", tmp_path / "run", "--rubric", str(rubric))
    assert not RunLabels.exists(tmp_path / "run")
    result = CliRunner().invoke(app, ["agreement", str(tmp_path / "run")])
    assert result.exit_code != 0
    assert "no human labels: give --labels FILE" in " ".join(result.output.split())
