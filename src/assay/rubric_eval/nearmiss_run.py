"""``assay nearmiss build`` and ``assay nearmiss judge`` as jobs (resumable, traced).

Build writes the pair file; judge writes, per rubric set, a pair-call file in the format
``assay discrimination`` reads (``pair_calls_NAME.jsonl``: ``{pair_id, ref, cand, decision}``),
the full call records (``pair_calls_NAME_detail.jsonl``: order, trial, the judge's own totals)
and ``discrimination.json``; the figures come from
:func:`assay.metrics.pairs.discrimination_summary`.

Example (against the fake judge)::

    built = asyncio.run(arun_build("gold.jsonl", judge=SPEC, out="runs/pairs",
                                   references="refs.jsonl", conversations="conv.txt"))
    judged = asyncio.run(arun_judge(built.pairs_path, {"ours": "ours.jsonl", "none": None},
                                    judge=SPEC, out="runs/judge"))
    judged.summaries["ours"].report.mu_delta.value
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import Issue
from assay.io.jsonl import write_jsonl
from assay.jobs import JobDir, StageCaller, run_batch
from assay.metrics.discrimination import PairCall
from assay.metrics.pairs import DiscriminationSummary, NearMissPairs, discrimination_summary
from assay.rubric_eval import prompts
from assay.rubric_eval.clinical_edit import terms
from assay.rubric_eval.nearmiss import NearMissPair, build_pair, read_pairs
from assay.rubric_eval.pair_judge import Totals, judge_pair
from assay.rubric_eval.perturb import MAX_SPAN_CHARS, MAX_SPAN_SHARE, SpanBound
from assay.rubric_eval.released import load_queries, read_rubric_set
from assay.rubric_eval.session import file_digest, open_judges


@dataclass
class BuildResult:
    pairs_path: Path
    pairs: list[NearMissPair]
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # query -> why it has no pair to build

    @property
    def methods(self) -> dict[str, int]:
        return dict(Counter(p.method for p in self.pairs))

    @property
    def error_types(self) -> dict[str, int]:
        return dict(Counter(p.error_type for p in self.pairs))


async def arun_build(
    gold: str | Path, *, judge: str, out: str | Path, references: str | Path | None = None,
    conversations: str | Path | None = None, pairs_path: str | Path | None = None,
    attempts: int = 2, max_span_chars: int = MAX_SPAN_CHARS,
    max_span_share: float = MAX_SPAN_SHARE, cache: str | Path | None = None,
    budget_usd: float | None = None,
    quiet: bool = True,
) -> BuildResult:
    """One near-miss pair per gold query with a reference answer (see :mod:`.nearmiss`);
    the queries without one (an empty released reference) are in ``skipped``, not failed."""
    empty: dict[str, Issue] = {}
    queries = load_queries(gold, conversations=conversations, references=references,
                           skipped=empty)
    skipped = {index: str(empty[index]) if index in empty else "no reference answer"
               for index, query in queries.items() if not query.reference}
    bound = SpanBound(max_span_chars, max_span_share)
    config = {"judge": judge, "attempts": attempts, "prompts": prompts.VERSION,
              "span_bound": bound._asdict(), "clinical_terms": terms().version,
              "gold": file_digest(gold), "references": file_digest(references),
              "conversations": file_digest(conversations)}
    job = JobDir.open(out, kind="nearmiss-build", config=config)
    target = Path(pairs_path) if pairs_path is not None else job.path / "pairs.jsonl"
    result = BuildResult(pairs_path=target, pairs=[], skipped=skipped)
    try:
        async with open_judges({"perturber": judge}, cache=cache,
                               budget_usd=budget_usd) as judges:
            caller = StageCaller(judges["perturber"], job.store)

            async def worker(index: str) -> dict[str, Any]:
                pair = await build_pair(caller, queries[index], attempts=attempts, bound=bound)
                return pair.model_dump(mode="json")

            batch = await run_batch([i for i in queries if i not in skipped], worker,
                                    store=job.store, item_id=str,
                                    label="build pairs", quiet=quiet)
        result.failed = batch.failed
        result.pairs = [NearMissPair(**row) for row in batch.results.values()]
        write_jsonl((p.model_dump(mode="json") for p in result.pairs), target)
    finally:
        job.finish(status="complete" if not result.failed else "incomplete",
                   extra={"failed": result.failed, "pairs": str(target),
                          "skipped_without_reference": result.skipped})
    return result


@dataclass
class JudgeResult:
    out: Path
    summaries: dict[str, DiscriminationSummary] = field(default_factory=dict)
    mismatches: dict[str, int] = field(default_factory=dict)  # calls whose totals ≠ Σ w·hit
    without_rubric: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.failed


async def arun_judge(
    pairs: str | Path, rubric_sets: Mapping[str, str | Path | None], *, judge: str,
    out: str | Path, trials: int = 3, swap: bool = True, totals: Totals = "hits",
    n_bootstrap: int = 1000, seed: int = 0, cache: str | Path | None = None,
    budget_usd: float | None = None, quiet: bool = True,
) -> JudgeResult:
    """Judge every pair with each rubric set (``None`` = the no-rubric baseline)."""
    pair_list = read_pairs(pairs)
    sets = {name: (read_rubric_set(path) if path is not None else None)
            for name, path in rubric_sets.items()}
    config = {"judge": judge, "trials": trials, "swap": swap, "totals": totals,
              "prompts": prompts.VERSION, "pairs": file_digest(pairs),
              "rubrics": {name: file_digest(path) for name, path in rubric_sets.items()}}
    job = JobDir.open(out, kind="nearmiss-judge", config=config)
    result = JudgeResult(out=job.path)
    try:
        async with open_judges({"judge": judge}, cache=cache, budget_usd=budget_usd) as judges:
            caller = StageCaller(judges["judge"], job.store)
            for name, rubrics in sets.items():
                usable = [p for p in pair_list if rubrics is None or rubrics.entries(p.index)]
                result.without_rubric[name] = [p.pair_id for p in pair_list if p not in usable]

                async def worker(pair: NearMissPair, name=name, rubrics=rubrics) -> Any:
                    rubric = rubrics.entries(pair.index) if rubrics is not None else None
                    return await judge_pair(caller, pair, rubric, label=name, trials=trials,
                                            swap=swap, totals=totals)

                def item_id(pair: NearMissPair, name: str = name) -> str:
                    return f"{name}:{pair.pair_id}"

                batch = await run_batch(usable, worker, store=job.store, item_id=item_id,
                                        label=f"judge {name}", quiet=quiet)
                result.failed.update(batch.failed)
                _finish_set(job.path, name, batch.results, result, n_bootstrap, seed)
        _write_summary(job.path, result)
    finally:
        job.finish(status="complete" if result.complete else "incomplete",
                   extra={"failed": result.failed})
    return result


def _finish_set(path: Path, name: str, results: dict[str, Any], result: JudgeResult,
                n_bootstrap: int, seed: int) -> None:
    rows = [row for calls in results.values() for row in calls]
    write_jsonl(({k: r[k] for k in ("pair_id", "ref", "cand", "decision")} for r in rows),
                path / f"pair_calls_{name}.jsonl")
    write_jsonl(rows, path / f"pair_calls_{name}_detail.jsonl")
    result.mismatches[name] = sum(1 for r in rows if r["totals_mismatch"])
    if not results:
        return
    ids = [key.split(":", 1)[1] for key in results]
    calls = [[PairCall(ref=r["ref"], cand=r["cand"], decision=r["decision"]) for r in rows_]
             for rows_ in results.values()]
    result.summaries[name] = discrimination_summary(
        NearMissPairs(pair_ids=ids, calls=calls, judges=[name]),
        n_bootstrap=n_bootstrap, seed=seed)


def _write_summary(path: Path, result: JudgeResult) -> None:
    import orjson

    (path / "discrimination.json").write_bytes(orjson.dumps({
        "sets": {name: s.model_dump(mode="json") for name, s in result.summaries.items()},
        "totals_mismatches": result.mismatches,
        "pairs_without_rubric": result.without_rubric,
        "failed": result.failed,
    }, option=orjson.OPT_INDENT_2))
