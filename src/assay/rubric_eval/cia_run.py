"""``assay cia``: atomise the gold rubrics, verify each gold point against one or two candidate
rubric sets, and pool coverage with :func:`assay.metrics.coverage_gold.coverage_summary`.

The job directory (``--out``) holds the traced calls (``calls.sqlite``, resumable) and the
outputs: ``gold_atomic_points.jsonl`` (per query, the authors' format), ``coverage.jsonl`` and
``coverage_against.jsonl`` (coverage verdicts, MET = covered: what ``assay coverage`` reads)
and ``cia.json`` (the summary).

What is scored: the gold queries that every rubric set has a rubric for (the same gold points
for both sets, so the paired tests compare like with like). A gold query that a set has no
rubric for is left out and reported (the authors skip them too), never counted as uncovered;
a set with no query index in common with the gold is an error, not a CIA of 0.

Example (against the fake judge)::

    result = asyncio.run(arun_cia("ours.jsonl", "gold.jsonl", judge="openai-compatible:fake@URL",
                                  out="runs/cia", against="gpt4o.jsonl"))
    result.summary.report.coverage.value, result.summary.comparison.mcnemar.p_value
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.io.jsonl import write_jsonl
from assay.io.verdicts import write_verdicts
from assay.jobs import JobDir, StageCaller, run_batch
from assay.metrics.coverage_gold import CoverageSummary, coverage_summary
from assay.rubric_eval import prompts
from assay.rubric_eval.cia import (
    FALLBACK_KINDS,
    AtomicPoint,
    atomize,
    fallback_points,
    gold_rubrics,
    verify_query,
)
from assay.rubric_eval.released import RubricSet, read_rubric_set
from assay.rubric_eval.session import file_digest, open_judges
from assay.verdict import Verdict


@dataclass
class CiaResult:
    out: Path
    summary: CoverageSummary | None
    points: dict[str, list[AtomicPoint]]
    fallbacks: dict[str, str] = field(default_factory=dict)  # query -> why atomisation fell back
    fallback_kinds: dict[str, str] = field(default_factory=dict)  # query -> FALLBACK_KINDS
    coercions: dict[str, list[str]] = field(default_factory=dict)  # query -> fields coerced
    failed: dict[str, str] = field(default_factory=dict)  # batch item -> error
    gold_queries: int = 0
    scope: list[str] = field(default_factory=list)  # the gold queries scored (every set has one)
    without_candidate: dict[str, list[str]] = field(default_factory=dict)  # set -> gold queries
    not_in_gold: dict[str, list[str]] = field(default_factory=dict)  # set -> its extra queries

    @property
    def complete(self) -> bool:
        return not self.failed

    def fallback_counts(self) -> dict[str, int]:
        """How many queries' gold points are the fallback's, by why (and in all).

        >>> CiaResult(Path("."), None, {}, fallback_kinds={"1": "unreadable"}).fallback_counts()
        {'refused': 0, 'unreadable': 1, 'no_usable_point': 0, 'total': 1}
        """
        counts = {kind: 0 for kind in FALLBACK_KINDS}
        for kind in self.fallback_kinds.values():
            counts[kind] = counts.get(kind, 0) + 1
        return {**counts, "total": len(self.fallback_kinds)}


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
    gold_points: str | Path | None = None,
) -> CiaResult:
    """Run CIA (see the module docstring); resumes an existing ``out`` with the same config.

    ``gold_points``: a ``gold_atomic_points.jsonl`` written by an earlier job, used instead of
    atomising (no atomiser call), so rubric sets scored in separate jobs share one fixed gold
    atomisation.
    """
    gold_set = read_rubric_set(gold)
    if gold_set.shared is not None:
        raise InputError(Issue(str(gold), None, None, "the gold rubrics must be per query"))
    sets = {"candidate": read_rubric_set(candidate)}
    if against is not None:
        sets["against"] = read_rubric_set(against)
    indices = gold_set.indices
    without, extra = _overlap(gold_set, sets, {"candidate": candidate, "against": against}, gold)
    imported = read_gold_points(gold_points, gold_set) if gold_points is not None else None
    config = {"judge": judge, "atomize": atomize_gold, "prompts": prompts.VERSION,
              "gold_points": file_digest(gold_points),
              "gold": file_digest(gold), "candidate": file_digest(candidate),
              "against": file_digest(against)}
    job = JobDir.open(out, kind="cia", config=config)
    result = CiaResult(out=job.path, summary=None, points={}, without_candidate=without,
                       not_in_gold=extra, gold_queries=len(indices),
                       scope=[i for i in indices if not any(i in w for w in without.values())])
    try:
        async with open_judges({"verifier": judge}, cache=cache, budget_usd=budget_usd) as judges:
            caller = StageCaller(judges["verifier"], job.store)

            async def atoms(index: str, final: bool = False) -> dict[str, Any]:
                entries = gold_set.per_index[index]
                if imported is not None:
                    return imported[index]
                if not atomize_gold:
                    return {"points": [p.model_dump() for p in fallback_points(index, entries)],
                            "fallback": None}
                return await atomize(caller, index, entries, final=final)

            def atoms_id(index: str) -> str:
                return f"atoms:{index}"

            done = await run_batch(indices, atoms, store=job.store, item_id=atoms_id,
                                   label="atomise gold", quiet=quiet)
            if done.failed:  # the final pass: each failed query once more, all sent
                again = [i for i in indices if atoms_id(i) in done.failed]

                async def final_atoms(index: str) -> dict[str, Any]:
                    return await atoms(index, final=True)

                last = await run_batch(again, final_atoms, store=job.store, item_id=atoms_id,
                                       label="atomise gold (final pass)", quiet=quiet)
                done.results.update(last.results)
                done.failed = last.failed
            result.failed.update(done.failed)
            for index in indices:
                stored = done.results.get(atoms_id(index))
                if stored is not None:
                    result.points[index] = [AtomicPoint(**p) for p in stored["points"]]
                    if stored.get("fallback"):
                        result.fallbacks[index] = stored["fallback"]
                        result.fallback_kinds[index] = _fallback_kind(stored)
                    if stored.get("coercions"):
                        result.coercions[index] = stored["coercions"]
            verdicts: dict[str, list[Verdict]] = {}
            ready = [i for i in result.scope if i in result.points]
            for label, rubrics in sets.items():
                async def verify(index: str, label=label, rubrics=rubrics) -> list[dict[str, Any]]:
                    return await verify_query(caller, index, result.points[index],
                                              rubrics.entries(index), label=label)

                def item_id(index: str, label: str = label) -> str:
                    return f"{label}:{index}"

                batch = await run_batch(ready, verify, store=job.store, item_id=item_id,
                                        label=f"verify {label}", quiet=quiet)
                result.failed.update(batch.failed)
                verdicts[label] = [Verdict(**v) for rows in batch.results.values() for v in rows]
        finished = {i for i in ready if all(f"{label}:{i}" not in result.failed for label in sets)}
        _write_outputs(job.path, result, {i: len(e) for i, e in gold_set.per_index.items()},
                       verdicts)
        if finished:
            scored = gold_rubrics({i: result.points[i] for i in ready if i in finished})
            mine = [v for v in verdicts["candidate"] if v.item_id in finished]
            other = ([v for v in verdicts["against"] if v.item_id in finished]
                     if "against" in verdicts else None)
            result.summary = coverage_summary(mine, gold=scored, against=other, level=level)
            scored_fallbacks = len(finished & result.fallback_kinds.keys())
            per_set = dict.fromkeys(sets, scored_fallbacks)  # every set is scored on the same queries
            (job.path / "cia.json").write_text(_summary_json(result, per_set), encoding="utf-8")
    finally:
        job.finish(status="complete" if result.complete else "incomplete",
                   extra={"failed": result.failed})
    return result


def read_gold_points(path: str | Path, gold: RubricSet) -> dict[str, dict[str, Any]]:
    """``index -> {points, fallback, coercions}`` from a ``gold_atomic_points.jsonl``; every
    gold query needs its line, and every line a gold query (errors name file, line, field)."""
    from pydantic import ValidationError

    from assay.io.jsonl import iter_jsonl

    source = str(path)
    if not Path(path).is_file():
        raise InputError(Issue(source, None, None, "no such gold points file"))
    issues: list[Issue] = []
    out: dict[str, dict[str, Any]] = {}
    for line, row in iter_jsonl(path, source=source):
        if isinstance(row, Issue):
            issues.append(row)
            continue
        if not isinstance(row, dict) or not isinstance(row.get("gold_atomic_points"), list):
            issues.append(Issue(source, line, "gold_atomic_points", "expected a list of points"))
            continue
        index = str(row.get("index", "")).strip()
        if index not in gold.per_index:
            issues.append(Issue(source, line, "index", f"{index!r} is not a gold query"))
            continue
        if index in out:
            issues.append(Issue(source, line, "index", f"index {index} again"))
            continue
        points = []
        for i, point in enumerate(row["gold_atomic_points"]):
            try:
                points.append(AtomicPoint.model_validate(point).model_dump())
            except ValidationError as exc:
                for err in exc.errors():
                    where = ".".join(str(p) for p in err["loc"])
                    issues.append(Issue(source, line, f"gold_atomic_points[{i}].{where}",
                                        err["msg"]))
        if not points:
            issues.append(Issue(source, line, "gold_atomic_points", "no point"))
        out[index] = {"points": points, "fallback": row.get("fallback"),
                      "fallback_kind": row.get("fallback_kind"),
                      "coercions": row.get("coercions") or []}
    missing = [i for i in gold.indices if i not in out]
    if missing and not issues:
        issues.append(Issue(source, None, "index", f"no gold points for {len(missing)} gold "
                            f"queries (first: {missing[0]})"))
    if issues:
        raise InputError(issues)
    return out


def _fallback_kind(stored: dict[str, Any]) -> str:
    """The kind of a stored fallback (results written before the kinds were: from its reason)."""
    kind = stored.get("fallback_kind")
    if kind in FALLBACK_KINDS:
        return kind
    return "no_usable_point" if "no usable point" in str(stored.get("fallback")) else "refused"


def _overlap(gold: RubricSet, sets: dict[str, RubricSet], paths: dict[str, Any],
             gold_path: str | Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per set, the gold queries it has no rubric for and its queries not in the gold; a set
    sharing no query with the gold raises :class:`InputError`."""
    without: dict[str, list[str]] = {}
    extra: dict[str, list[str]] = {}
    issues = []
    for label, rubrics in sets.items():
        without[label] = [i for i in gold.indices if not rubrics.entries(i)]
        extra[label] = [i for i in rubrics.indices if i not in gold.per_index]
        if len(without[label]) == len(gold.indices):
            issues.append(Issue(str(paths[label]), None, "index", (
                f"no query index in common with the gold rubrics {gold_path} "
                f"({len(rubrics.indices)} queries here, e.g. {rubrics.indices[:3]}; "
                f"{len(gold.indices)} in the gold, e.g. {gold.indices[:3]})")))
    if issues:
        raise InputError(issues)
    return without, extra


def _write_outputs(path: Path, result: CiaResult, counts: dict[str, int],
                   verdicts: dict[str, list[Verdict]]) -> None:
    write_jsonl(({"index": i, "source_rubric_count": counts[i],
                  "gold_atomic_count": len(result.points[i]),
                  "fallback": result.fallbacks.get(i),
                  "fallback_kind": result.fallback_kinds.get(i),
                  "coercions": result.coercions.get(i, []),
                  "gold_atomic_points": [p.model_dump() for p in result.points[i]]}
                 for i in counts if i in result.points), path / "gold_atomic_points.jsonl")
    for label, rows in verdicts.items():
        name = "coverage.jsonl" if label == "candidate" else f"coverage_{label}.jsonl"
        write_verdicts(rows, path / name)


def _summary_json(result: CiaResult, fallbacks_per_set: dict[str, int]) -> str:
    """cia.json; ``fallbacks_per_set``: per rubric set, the scored queries whose gold points
    are the atomiser's fallback (one point per criterion)."""
    import orjson

    assert result.summary is not None
    return orjson.dumps({
        "summary": result.summary.model_dump(mode="json"),
        "queries": len(result.points),
        "gold_points": sum(len(p) for p in result.points.values()),
        "atomisation_fallbacks": result.fallbacks,
        "atomisation_fallback_counts": result.fallback_counts(),
        "atomisation_fallbacks_per_set": fallbacks_per_set,
        "atomisation_coercions": result.coercions,
        "scope": {"gold_queries": result.gold_queries, "scored_queries": len(result.scope),
                  "left_out_without_rubric": result.without_candidate,
                  "not_in_gold": result.not_in_gold},
        "failed": result.failed,
    }, option=orjson.OPT_INDENT_2).decode()
