"""``assay rag grade | train | score | report`` end to end over loopback: the shipped sample,
and the classifier workflow on a synthetic set made by the documented, seeded script."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer

from .conftest import SAMPLE

runner = CliRunner()


def load_generator():
    spec = importlib.util.spec_from_file_location("make_synthetic", SAMPLE / "make_synthetic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def generate(out):
    """Run the documented script as ``make_synthetic.py --n 60 --seed 3 --out OUT``."""
    generator, argv = load_generator(), sys.argv
    sys.argv = ["make_synthetic.py", "--n", "60", "--seed", "3", "--out", str(out)]
    try:
        generator.main()
    finally:
        sys.argv = argv
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("synthetic"))


def test_the_synthetic_set_is_seeded_byte_for_byte(synthetic, tmp_path):
    generate(tmp_path)
    for name in ("train.jsonl", "test.jsonl", "stages.json"):
        assert (tmp_path / name).read_bytes() == (synthetic / name).read_bytes()
    rows = [json.loads(line) for line in (synthetic / "train.jsonl").read_text().splitlines()]
    assert len(rows) == 60 and 0 < sum(r["labels"]["harmful"] for r in rows) < 60


def test_grade_and_report_on_the_shipped_sample(tmp_path):
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as server:
        out = invoke("rag", "grade", SAMPLE / "items.jsonl", "--judge",
                     f"openai-compatible:fake@{server.base_url}", "--out", tmp_path / "job", "-q")
    assert "20 graded, 0 failed" in out
    report = invoke("rag", "report", SAMPLE / "items.jsonl", "--grades", tmp_path / "job",
                    "--json", tmp_path / "report.json")
    assert "Table 3" in report and "Figure 5" in report
    assert "over the 20 items graded by every run" in " ".join(report.split())
    data = json.loads((tmp_path / "report.json").read_text())
    assert [a["rater"] for a in data["averages"]] == ["fake", "human"]


def test_the_classifier_workflow_on_the_synthetic_set(synthetic, tmp_path):
    with FakeJudgeServer.run_in_thread(stages=synthetic / "stages.json") as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        invoke("rag", "grade", synthetic / "train.jsonl", "--judge", spec, "--out",
               tmp_path / "train", "-q", "--no-baselines")
        invoke("rag", "grade", synthetic / "test.jsonl", "--judge", spec, "--out",
               tmp_path / "test", "-q", "--no-baselines")
    out = invoke("rag", "train", synthetic / "train.jsonl", "--grades", tmp_path / "train",
                 "--target", "harmful", "--models", "naive_bayes,svm", "--no-grid", "--folds", "3",
                 "--out", tmp_path / "harm", "--json", tmp_path / "train.json")
    report = json.loads((tmp_path / "train.json").read_text())
    assert report["chosen"] in ("naive_bayes", "svm") and report["n"] == 60
    assert f"saved {report['chosen']}" in out
    invoke("rag", "score", tmp_path / "test", "--model", tmp_path / "harm", "--out",
           tmp_path / "pred.jsonl")
    predictions = [json.loads(line) for line in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert len(predictions) == 30 and all(0 <= p["p_harmful"] <= 1 for p in predictions)
    out = invoke("rag", "report", synthetic / "test.jsonl", "--grades", tmp_path / "test",
                 "--model", tmp_path / "harm", "--json", tmp_path / "report.json")
    [predictive] = json.loads((tmp_path / "report.json").read_text())["predictive"]
    assert predictive["target"] == "harmful" and predictive["performance"]["n"] == 30
    assert predictive["performance"]["auc"]["value"] > 0.6  # the labels follow the triad


def test_bad_items_are_reported_with_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "scope": "in_scope", "question": "q"}\n')
    judge = "openai-compatible:x@http://127.0.0.1:9/v1"
    result = runner.invoke(app, ["rag", "grade", str(bad), "--judge", judge, "--out",
                                 str(tmp_path / "job")])
    assert result.exit_code == 1
    assert "bad.jsonl:1: answer: expected a string, got null" in result.output


def test_bad_options_are_named(tmp_path):
    result = runner.invoke(app, ["rag", "train", str(SAMPLE / "items.jsonl"), "--models", "xgb",
                                 "--target", "happy", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "--models: unknown family 'xgb'" in result.output
    assert "--target: 'happy': use harmful or helpful" in result.output
    assert "--grades: needed with --features judge" in result.output


def test_a_second_grading_with_a_response_cache_needs_no_judge(tmp_path):
    items = SAMPLE / "items.jsonl"
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as server:
        spec = f"openai-compatible:fake@{server.base_url}"
        invoke("rag", "grade", items, "--judge", spec, "--out", tmp_path / "a", "-q",
               "--no-baselines", "--cache", tmp_path / "cache.sqlite")
        asked = len(server.requests)
        out = invoke("rag", "grade", items, "--judge", spec, "--out", tmp_path / "b", "-q",
                     "--no-baselines", "--cache", tmp_path / "cache.sqlite")
        assert len(server.requests) == asked and "20 graded, 0 failed" in out


def test_an_unreachable_judge_fails_before_any_work(tmp_path):
    result = runner.invoke(app, ["rag", "grade", str(SAMPLE / "items.jsonl"), "--judge",
                                 "openai-compatible:x@http://127.0.0.1:9/v1", "--out",
                                 str(tmp_path / "job")])
    assert result.exit_code == 1 and "cannot reach http://127.0.0.1:9/v1" in result.output
    assert not (tmp_path / "job").exists()


def test_report_on_grades_of_other_items_fails_naming_the_run(tmp_path):
    from assay.rag.grading import RagGrade, write_grades

    write_grades([RagGrade(id="not-an-item", judge="j", scope="in_scope", refusal_expected=False,
                           cf=1.0, cr=True, refused=False, refusal_correct=True,
                           diagnosis=["ideal"], turns=[])], tmp_path / "grades.jsonl")
    result = runner.invoke(app, ["rag", "report", str(SAMPLE / "items.jsonl"), "--grades",
                                 str(tmp_path / "grades.jsonl")])
    assert result.exit_code == 1
    assert "grades.jsonl: id: none of the run's 1 graded ids is among the 20 item ids" in " ".join(
        result.output.split())


def test_the_html_view_shows_table_3_the_diagnoses_and_every_conversation_escaped(tmp_path):
    items = [json.loads(line) for line in (SAMPLE / "items.jsonl").read_text().splitlines()]
    items[0]["answer"] += " <script>window.__pwned = 1</script>"
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as server:
        invoke("rag", "grade", SAMPLE / "items.jsonl", "--judge",
               f"openai-compatible:fake@{server.base_url}", "--out", tmp_path / "job", "-q")
    invoke("rag", "report", tmp_path / "items.jsonl", "--grades", tmp_path / "job",
           "--html", tmp_path / "rag.html")
    html = (tmp_path / "rag.html").read_text()
    data = json.loads((tmp_path / "job" / "grades.jsonl").read_text().splitlines()[0])
    assert 'id="table-3"' in html and 'id="hazards"' in html
    assert html.count('class="conversation"') == 20
    assert f'id="item-{data["id"]}"' in html and "<script>window" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    diagnoses = {d for row in map(json.loads, (tmp_path / "job" / "grades.jsonl").read_text()
                                  .splitlines()) for d in row["diagnosis"]}
    assert diagnoses and all(d in html for d in diagnoses)


def test_a_job_against_llama_cpp_follows_its_slots_and_its_manifest_says_so(tmp_path):
    from assay.testing.server_props import llama_cpp

    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json", latency=0.01,
                                       server=llama_cpp(slots=2)) as server:
        invoke("rag", "grade", SAMPLE / "items.jsonl", "--judge",
               f"llamacpp:fake@{server.base_url}", "--out", tmp_path / "job", "-q")
    manifest = json.loads((tmp_path / "job" / "manifest.json").read_text())
    assert server.peak_in_flight == 2
    assert list(manifest["in_flight"].values()) == [
        {"max_in_flight": 2, "source": "the server's parallel slots (/props total_slots)"}]
