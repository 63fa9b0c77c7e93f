"""``assay cia``: atomise the gold rubrics, verify each gold point against one or two candidate
rubric sets, and pool coverage with :func:`assay.metrics.coverage_gold.coverage_summary`.

The job directory (``--out``) holds the traced calls (``calls.sqlite``, resumable) and the
outputs: ``gold_atomic_points.jsonl`` (per query, the authors' format), ``coverage.jsonl`` and
``coverage_against.jsonl`` (coverage verdicts, MET = covered: what ``assay coverage`` reads)
and ``cia.json`` (the summary).

Example (against the fake judge)::

    result = asyncio.run(arun_cia("ours.jsonl", "gold.jsonl", judge="openai-compatible:fake@URL",
                                  out="runs/cia", against="gpt4o.jsonl"))
    result.summary.report.coverage.value, result.summary.comparison.mcnemar.p_value
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.io.jsonl import write_jsonl
from assay.io.verdicts import write_verdicts
from assay.jobs import JobDir, StageCaller, run_batch
from assay.metrics.coverage_gold import CoverageSummary, coverage_summary
from assay.rubric_eval import prompts
from assay.rubric_eval.cia import AtomicPoint, atomize, fallback_points, gold_rubrics, verify_query
from assay.rubric_eval.released import read_rubric_set
from assay.rubric_eval.session import file_digest, open_judges
from assay.verdict import Verdict


@dataclass
class CiaResult:
    out: Path
    summary: CoverageSummary | None
    points: dict[str, list[AtomicPoint]]
    fallbacks: dict[str, str] = field(default_factory=dict)  # query -> why atomisation fell back
    failed: dict[str, str] = field(default_factory=dict)  # batch item -> error
    without_candidate: dict[str, int] = field(default_factory=dict)  # set -> queries lacking one

    @property
    def complete(self) -> bool:
        return not self.failed


async def arun_cia(
    candidate: str | Path,
    gold: str | Path,
    *,
    judge: str,
    out: str | Path,
    against: str | Path | None = None,
    atomize_gold: bool = True,
    cache: str | Path | None = None,
    budget_usd: float | None = None,
    level: float = 0.95,
    quiet: bool = True,
) -> CiaResult:
    """Run CIA (see the module docstring); resumes an existing ``out`` with the same config."""
    gold_set = read_rubric_set(gold)
    if gold_set.shared is not None:
        from assay.errors import InputError, Issue

        raise InputError(Issue(str(gold), None, None, "the gold rubrics must be per query"))
    sets = {"candidate": read_rubric_set(candidate)}
    if against is not None:
        sets["against"] = read_rubric_set(against)
    indices = gold_set.indices
    config = {"judge": judge, "atomize": atomize_gold, "prompts": prompts.VERSION,
              "gold": file_digest(gold), "candidate": file_digest(candidate),
              "against": file_digest(against)}
    job = JobDir.open(out, kind="cia", config=config)
    result = CiaResult(out=job.path, summary=None, points={})
    try:
        async with open_judges({"verifier": judge}, cache=cache, budget_usd=budget_usd) as judges:
            caller = StageCaller(judges["verifier"], job.store)

            async def atoms(index: str) -> dict[str, Any]:
                entries = gold_set.per_index[index]
                if not atomize_gold:
                    return {"points": [p.model_dump() for p in fallback_points(index, entries)],
                            "fallback": None}
                return await atomize(caller, index, entries)

            done = await run_batch(indices, atoms, store=job.store, item_id=lambda i: f"atoms:{i}",
                                   label="atomise gold", quiet=quiet)
            result.failed.update(done.failed)
            for index in indices:
                stored = done.results.get(f"atoms:{index}")
                if stored is not None:
                    result.points[index] = [AtomicPoint(**p) for p in stored["points"]]
                    if stored.get("fallback"):
                        result.fallbacks[index] = stored["fallback"]
            verdicts: dict[str, list[Verdict]] = {}
            ready = [i for i in indices if i in result.points]
            for label, rubrics in sets.items():
                async def verify(index: str, label=label, rubrics=rubrics) -> list[dict[str, Any]]:
                    return await verify_query(caller, index, result.points[index],
                                              rubrics.entries(index), label=label)

                def item_id(index: str, label: str = label) -> str:
                    return f"{label}:{index}"

                batch = await run_batch(ready, verify, store=job.store, item_id=item_id,
                                        label=f"verify {label}", quiet=quiet)
                result.failed.update(batch.failed)
                result.without_candidate[label] = sum(1 for i in ready
                                                      if not rubrics.entries(i))
                verdicts[label] = [Verdict(**v) for rows in batch.results.values() for v in rows]
        finished = {i for i in ready if all(f"{label}:{i}" not in result.failed for label in sets)}
        _write_outputs(job.path, result, {i: len(e) for i, e in gold_set.per_index.items()},
                       verdicts)
        if finished:
            gold_points = gold_rubrics({i: result.points[i] for i in ready if i in finished})
            mine = [v for v in verdicts["candidate"] if v.item_id in finished]
            other = ([v for v in verdicts["against"] if v.item_id in finished]
                     if "against" in verdicts else None)
            result.summary = coverage_summary(mine, gold=gold_points, against=other, level=level)
            (job.path / "cia.json").write_text(_summary_json(result), encoding="utf-8")
    finally:
        job.finish(status="complete" if result.complete else "incomplete",
                   extra={"failed": result.failed})
    return result


def _write_outputs(path: Path, result: CiaResult, counts: dict[str, int],
                   verdicts: dict[str, list[Verdict]]) -> None:
    write_jsonl(({"index": i, "source_rubric_count": counts[i],
                  "gold_atomic_count": len(result.points[i]),
                  "fallback": result.fallbacks.get(i),
                  "gold_atomic_points": [p.model_dump() for p in result.points[i]]}
                 for i in counts if i in result.points), path / "gold_atomic_points.jsonl")
    for label, rows in verdicts.items():
        name = "coverage.jsonl" if label == "candidate" else f"coverage_{label}.jsonl"
        write_verdicts(rows, path / name)


def _summary_json(result: CiaResult) -> str:
    import orjson

    assert result.summary is not None
    return orjson.dumps({
        "summary": result.summary.model_dump(mode="json"),
        "queries": len(result.points),
        "gold_points": sum(len(p) for p in result.points.values()),
        "atomisation_fallbacks": result.fallbacks,
        "queries_without_candidate_rubric": result.without_candidate,
        "failed": result.failed,
    }, option=orjson.OPT_INDENT_2).decode()
