"""Issue 27, point 12: a RAG grading job under faults at fixed calls (``Faults.at``), then run
again (its documented resume: the same command), writes the clean job's grades byte for byte."""

from __future__ import annotations

import json

from tests.rag.conftest import SAMPLE

from assay.rag.grading import grade_rag
from assay.testing import FakeJudgeServer, Faults

DRIVING, BACK_PAIN = "when can I start driving", "How can I treat my back pain?"
FIXED_FAULTS = {
    (f"{DRIVING}\nContext:",): ["malformed"] * 3,  # unparsed after both re-asks: the item fails
    (f"{BACK_PAIN} Doctor:",): ["server_error", "rate_limit", "malformed"],  # recovered
    (f"{BACK_PAIN}\nanswer:",): ["schema_mismatch"],  # a RAGAS baseline call, re-asked
}


def test_a_faulted_then_resumed_rag_job_writes_the_clean_jobs_grades(sample_items, tmp_path):
    items = [i for i in sample_items if i.id.startswith("fig11")]
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as clean:
        grade_rag(items, f"openai-compatible:fake@{clean.base_url}", tmp_path / "clean")
    faults = Faults(at=FIXED_FAULTS, retry_after=0.01)
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json", faults=faults) as faulty:
        spec = f"openai-compatible:fake@{faulty.base_url}"
        first = grade_rag(items, spec, tmp_path / "faulted")
        assert len(first.failed) == 1 and first.manifest["status"] == "incomplete"
        resumed = grade_rag(items, spec, tmp_path / "faulted")
        sent = sum(r["fault"] is not None for r in faulty.requests)
    assert resumed.manifest["status"] == "complete" and not resumed.failed
    assert sent == sum(len(f) for f in FIXED_FAULTS.values())
    assert (tmp_path / "faulted" / "grades.jsonl").read_bytes() == \
        (tmp_path / "clean" / "grades.jsonl").read_bytes()


def test_a_failed_ragas_baseline_keeps_the_item_and_the_same_command_retries_it(tmp_path):
    from typer.testing import CliRunner

    from assay.cli import app

    items = tmp_path / "items.jsonl"
    items.write_text("".join(line + "\n" for line in
                             (SAMPLE / "items.jsonl").read_text().splitlines()
                             if '"fig11-' in line))
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json") as clean:
        args = ["rag", "grade", str(items), "--out", str(tmp_path / "clean"), "-q", "--judge",
                f"openai-compatible:fake@{clean.base_url}"]
        assert CliRunner().invoke(app, args).exit_code == 0
    # the RAGAS statements call of the driving question stays unparsed after both re-asks
    faults = Faults(at={(f"{DRIVING}\nanswer:",): ["malformed"] * 3})
    with FakeJudgeServer.run_in_thread(stages=SAMPLE / "stages.json", faults=faults) as faulty:
        args = ["rag", "grade", str(items), "--out", str(tmp_path / "job"), "-q", "--judge",
                f"openai-compatible:fake@{faulty.base_url}"]
        first = CliRunner().invoke(app, args)
        kept = [json.loads(line) for line in (tmp_path / "job" / "grades.jsonl").open()]
        manifest = json.loads((tmp_path / "job" / "manifest.json").read_text())
        asked_before = len(faulty.requests)
        again = CliRunner().invoke(app, args)
        asked_again = [r["stage"] for r in faulty.requests[asked_before:]]
    assert first.exit_code == 4, first.output
    assert "(1 without a RAGAS baseline), 0 failed" in first.output
    driving = next(g for g in kept if g["id"] == "fig11-19")
    assert driving["cf"] is not None and driving["ragas_faithfulness"] is None
    assert "ragas_statements" in driving["baselines_failed"]["ragas_faithfulness"]
    assert driving["ragas_context_relevance"] is not None
    assert manifest["status"] == "incomplete" and list(manifest["without_baseline"]) == ["fig11-19"]
    assert again.exit_code == 0, again.output
    assert asked_again == ["ragas_statements", "ragas_verdicts"]  # only the failed baseline
    assert (tmp_path / "job" / "grades.jsonl").read_bytes() == \
        (tmp_path / "clean" / "grades.jsonl").read_bytes()
