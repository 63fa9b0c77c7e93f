"""Issue 27, point 12: near-miss jobs under faults at fixed calls (``Faults.at``), then run
again (their documented resume: the same command), end byte for byte as clean jobs do."""

from __future__ import annotations

from pathlib import Path

from assay.rubric_eval.nearmiss_run import arun_build, arun_judge
from assay.testing import Faults

EXAMPLES = Path(__file__).parents[2] / "examples" / "rubric_eval"
INPUTS = {"references": EXAMPLES / "reference_responses.jsonl",
          "conversations": EXAMPLES / "conversations.txt"}
GOLD = EXAMPLES / "reference_rubrics.jsonl"
SETS = {"ours": EXAMPLES / "our_rubrics.jsonl", "none": None}
EDITOR = "You are a medical text editor"
TURF, NAUSEA = "Research on microplastics from recycled turf", "Nausea can be quite bothersome."
BUILD_FAULTS = {
    # unparsed after both re-asks: before the fix the pair moved on to its second attempt
    # (another call, attempts=2), which a clean run never makes
    (EDITOR, f"[Reference answer]\n{TURF}"): ["malformed"] * 3,
    (EDITOR, f"[Reference answer]\n{NAUSEA}"): ["server_error", "rate_limit"],  # recovered
}
JUDGE_FAULTS = {
    # pair 0, reference first, with our rubric: fails ("ours:0"), asked again on resume
    ("[RUBRIC]", f"[RESPONSE A]\n{TURF} has shown that they can"): ["malformed"] * 3,
    # either order of pair 2 without a rubric: each fault is recovered in the run
    ("overall clinical accuracy", f"[RESPONSE A]\n{NAUSEA}"): ["server_error", "malformed"],
}


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.suffix in (".jsonl", ".json") and p.name != "manifest.json"}


async def test_a_faulted_then_resumed_nearmiss_build_writes_the_clean_pairs(serve, tmp_path):
    clean = await serve(stages=EXAMPLES / "stages.json")
    await arun_build(GOLD, judge=f"openai-compatible:fake@{clean.base_url}",
                     out=tmp_path / "clean", **INPUTS)
    faulty = await serve(stages=EXAMPLES / "stages.json",
                         faults=Faults(at=BUILD_FAULTS, retry_after=0.01))
    spec = f"openai-compatible:fake@{faulty.base_url}"
    first = await arun_build(GOLD, judge=spec, out=tmp_path / "faulted", **INPUTS)
    assert list(first.failed) == ["0"]
    resumed = await arun_build(GOLD, judge=spec, out=tmp_path / "faulted", **INPUTS)
    assert not resumed.failed
    assert outputs(tmp_path / "faulted") == outputs(tmp_path / "clean")


async def test_a_faulted_then_resumed_nearmiss_judging_writes_the_clean_figures(serve, tmp_path):
    server = await serve(stages=EXAMPLES / "stages.json")
    built = await arun_build(GOLD, judge=f"openai-compatible:fake@{server.base_url}",
                             out=tmp_path / "build", **INPUTS)
    settings = {"trials": 1, "n_bootstrap": 50}  # one trial: each call's prompt is its own
    await arun_judge(built.pairs_path, SETS, judge=f"openai-compatible:fake@{server.base_url}",
                     out=tmp_path / "clean", **settings)
    faulty = await serve(stages=EXAMPLES / "stages.json",
                         faults=Faults(at=JUDGE_FAULTS, retry_after=0.01))
    spec = f"openai-compatible:fake@{faulty.base_url}"
    first = await arun_judge(built.pairs_path, SETS, judge=spec, out=tmp_path / "faulted",
                             **settings)
    assert list(first.failed) == ["ours:0"]
    resumed = await arun_judge(built.pairs_path, SETS, judge=spec, out=tmp_path / "faulted",
                               **settings)
    assert resumed.complete
    assert outputs(tmp_path / "faulted") == outputs(tmp_path / "clean")
    assert sum(r["fault"] is not None for r in faulty.requests) == 5  # every fault was sent
