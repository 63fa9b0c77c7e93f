"""Issue 27, point 12: a generation job under faults, then run again (its documented resume),
ends byte for byte as a clean job does. The faults hit fixed calls (``Faults.at``), so the
test is the same however the concurrent calls interleave."""

from __future__ import annotations

from tests.generate.conftest import fake

from assay.generate import agenerate
from assay.testing import Faults

ROUTE, DRAFT, AUDIT = ("Medical Research Assistant", "Senior Medical AI Evaluator",
                       "Senior Medical Lead Auditor")
FIXED_FAULTS = {
    # unparsed after both re-asks: the item fails, and the resume routes it again (before the
    # fix its search fell back to the raw query: other evidence, another rubric)
    (ROUTE, "stung by a bee"): ["malformed"] * 3,
    (DRAFT, "150/95"): ["server_error", "malformed"],  # retried, then re-asked: recovered
    (AUDIT, "2-month-old"): ["rate_limit", "malformed", "malformed", "malformed"],  # fails
}


async def generate(server, sample_queries, sample_kb, out):
    result = await agenerate(str(sample_queries), kb=sample_kb, model=fake(server), out=out)
    return result, out.read_bytes(), (result.job_dir / "records.jsonl").read_bytes()


async def test_a_faulted_then_resumed_generation_job_writes_the_clean_jobs_rubrics(
        serve, sample_kb, sample_queries, sample_stages, tmp_path):
    clean = await serve(stages=sample_stages)
    _, rubrics, records = await generate(clean, sample_queries, sample_kb, tmp_path / "clean.jsonl")

    faulty = await serve(stages=sample_stages,
                         faults=Faults(at=FIXED_FAULTS, retry_after=0.01))
    out = tmp_path / "faulted.jsonl"
    first, _, _ = await generate(faulty, sample_queries, sample_kb, out)
    assert first.status == "incomplete" and len(first.failed) == 2
    resumed, rubrics_after, records_after = await generate(faulty, sample_queries, sample_kb, out)

    assert resumed.status == "complete" and resumed.resumed == 1
    assert rubrics_after == rubrics and records_after == records
    faults = [r["fault"] for r in faulty.requests if r["fault"] is not None]
    assert len(faults) == sum(len(f) for f in FIXED_FAULTS.values())  # every one was sent
