"""Issue 27, point 12: a RAG grading job under faults at fixed calls (``Faults.at``), then run
again (its documented resume: the same command), writes the clean job's grades byte for byte."""

from __future__ import annotations

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
