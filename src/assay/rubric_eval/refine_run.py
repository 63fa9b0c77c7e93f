"""``assay refine``: refine frozen base responses under each guidance condition, score base and
refined responses independently with the HealthBench grader against the gold (physician)
rubrics, and compare conditions with paired statistics.

Conditions: each named rubric set, ``self-critique`` (no rubric, the lower bound) and
``oracle`` (the gold rubric itself, the upper bound). Scoring is an ordinary Assay grading run
(``DIR/scoring``: simple-evals' grader prompt, the official HealthBench per-item score), so it
resumes, caches and exports like ``assay grade``. The comparisons are
:func:`assay.metrics.compare.compare_scores` (paired bootstrap CI of the mean difference,
Wilcoxon signed-rank, paired permutation, Cohen's d): refined vs base per condition, and
refined vs refined between conditions.

Outputs in ``DIR``: ``refined.jsonl`` (plan, constraints, refined text per query × condition),
``scores.jsonl`` (per query: base and refined scores) and ``refine.json`` (the statistics).

Example (against the fake judge)::

    result = asyncio.run(arun_refine("gold.jsonl", "base.jsonl", {"ours": "ours.jsonl"},
                                     judge=SPEC, out="runs/refine", conversations="conv.txt"))
    result.versus_base["ours"].mean_difference.value
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.io.jsonl import write_jsonl
from assay.item import Item
from assay.jobs import JobDir, StageCaller, run_batch
from assay.metrics.compare import ScoreComparison, compare_scores
from assay.rubric_eval import prompts
from assay.rubric_eval.refine import refine_one
from assay.rubric_eval.released import (
    Query,
    RubricEntry,
    load_queries,
    read_responses,
    read_rubric_set,
    rubric_of_entries,
)
from assay.rubric_eval.session import file_digest, open_judges

SELF, ORACLE = "self-critique", "oracle"


@dataclass
class RefineResult:
    out: Path
    base_scores: dict[str, float | None] = field(default_factory=dict)
    refined_scores: dict[str, dict[str, float | None]] = field(default_factory=dict)
    versus_base: dict[str, ScoreComparison] = field(default_factory=dict)
    between: dict[str, ScoreComparison] = field(default_factory=dict)  # "a vs b"
    rewritten: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # query -> why (an empty base response)

    @property
    def complete(self) -> bool:
        return not self.failed


def _conditions(rubric_sets: dict[str, str | Path], self_critique: bool, oracle: bool):
    conditions: dict[str, Any] = {name: read_rubric_set(path) for name, path in rubric_sets.items()}
    for name in (SELF, ORACLE):
        if name in conditions:
            raise InputError(Issue(None, None, "--rubrics", f"{name!r} is the name of a control; "
                                   "call your rubric set something else"))
    if self_critique:
        conditions[SELF] = None
    if oracle:
        conditions[ORACLE] = "gold"
    if not conditions:
        raise InputError(Issue(None, None, "--rubrics", "no condition to run: give a rubric set "
                               "or keep a control (self-critique, oracle)"))
    return conditions


def _rubric(condition: Any, query: Query) -> list[RubricEntry] | None:
    if condition is None:
        return None
    if condition == "gold":
        return query.gold
    return condition.entries(query.index)


async def arun_refine(
    gold: str | Path, base: str | Path, rubric_sets: dict[str, str | Path], *,
    judge: str, out: str | Path, editor: str | None = None, scorer: str | None = None,
    conversations: str | Path | None = None, self_critique: bool = True, oracle: bool = True,
    max_steps: int | None = None, n_bootstrap: int = 1000, seed: int = 0,
    cache: str | Path | None = None, budget_usd: float | None = None, quiet: bool = True,
) -> RefineResult:
    """Run refinement and its evaluation (see the module docstring)."""
    queries = load_queries(gold, conversations=conversations)
    empty: dict[str, Issue] = {}
    responses = read_responses(base, skipped=empty)  # an empty base: its query is left out
    queries = {i: q for i, q in queries.items() if i not in empty}
    missing = [i for i in queries if i not in responses]
    if missing:
        raise InputError(Issue(str(base), None, "index", f"no base response for {len(missing)} "
                               f"queries (first: {missing[0]})"))
    conditions = _conditions(rubric_sets, self_critique, oracle)
    editor, scorer = editor or judge, scorer or judge
    config = {"critic": judge, "editor": editor, "scorer": scorer, "max_steps": max_steps,
              "prompts": prompts.VERSION, "gold": file_digest(gold), "base": file_digest(base),
              "conversations": file_digest(conversations), "conditions": {
                  name: file_digest(path) for name, path in rubric_sets.items()}
              | {c: c for c in (SELF, ORACLE) if c in conditions}}
    job = JobDir.open(out, kind="refine", config=config)
    result = RefineResult(out=job.path, skipped={i: str(issue) for i, issue in empty.items()})
    try:
        async with open_judges({"critic": judge, "editor": editor}, cache=cache,
                               budget_usd=budget_usd) as judges:
            critic = StageCaller(judges["critic"], job.store)
            writer = StageCaller(judges["editor"], job.store)
            work = [(name, q) for name in conditions for q in queries.values()
                    if conditions[name] is None or _rubric(conditions[name], q)]

            async def worker(task: tuple[str, Query]) -> dict[str, Any]:
                name, query = task
                return await refine_one(critic, writer, query, responses[query.index],
                                        _rubric(conditions[name], query), condition=name,
                                        max_steps=max_steps)

            batch = await run_batch(work, worker, store=job.store,
                                    item_id=lambda t: f"{t[0]}:{t[1].index}",
                                    label="refine", quiet=quiet)
        result.failed.update(batch.failed)
        records = list(batch.results.values())
        write_jsonl(records, job.path / "refined.jsonl")
        for name in conditions:
            result.rewritten[name] = sum(1 for r in records
                                         if r["condition"] == name and r["rewritten"])
        left = None if budget_usd is None else max(0.0, budget_usd - job.store.totals().cost_usd)
        scores = await _score(queries, responses, records, scorer, job.path / "scoring",
                              cache=cache, budget_usd=left, quiet=quiet)
        result.base_scores = {i: scores.get(f"{i}::base") for i in queries}
        for name in conditions:
            result.refined_scores[name] = {r["index"]: scores.get(f"{r['index']}::{name}")
                                           for r in records if r["condition"] == name}
            result.versus_base[name] = compare_scores(
                result.refined_scores[name], result.base_scores, n_resamples=n_bootstrap,
                seed=seed)
        for a, b in itertools.combinations(conditions, 2):
            result.between[f"{a} vs {b}"] = compare_scores(
                result.refined_scores[a], result.refined_scores[b], n_resamples=n_bootstrap,
                seed=seed)
        _write_outputs(job.path, result)
    finally:
        job.finish(status="complete" if result.complete else "incomplete",
                   extra={"failed": result.failed, "skipped_empty_base": result.skipped})
    return result


async def _score(queries: dict[str, Query], responses: dict[str, str],
                 records: list[dict[str, Any]], scorer: str, run_dir: Path, *,
                 cache: str | Path | None, budget_usd: float | None,
                 quiet: bool) -> dict[str, float | None]:
    """HealthBench-grade the base and refined responses against the gold rubrics."""
    from assay.api import agrade

    items = []
    for index, query in queries.items():
        gold = rubric_of_entries(index, query.gold, where=query.where)  # 0 points: left out
        messages = list(query.messages)
        items.append(Item(id=f"{index}::base", messages=messages, response=responses[index],
                          rubric=gold))
        items.extend(Item(id=f"{index}::{r['condition']}", messages=messages,
                          response=r["refined"], rubric=gold)
                     for r in records if r["index"] == index)
    resume = run_dir if (run_dir / "run.sqlite").exists() else None
    graded = await agrade(items, judges=[scorer], healthbench=True, formula="healthbench",
                          run_dir=None if resume else run_dir, resume=resume, cache_path=cache,
                          budget_usd=budget_usd, progress=not quiet)
    return dict(graded.scores)


def _write_outputs(path: Path, result: RefineResult) -> None:
    import orjson

    write_jsonl(({"index": i, "base": s,
                  **{name: scores.get(i) for name, scores in result.refined_scores.items()}}
                 for i, s in result.base_scores.items()), path / "scores.jsonl")
    (path / "refine.json").write_bytes(orjson.dumps({
        "versus_base": {k: v.model_dump(mode="json") for k, v in result.versus_base.items()},
        "between": {k: v.model_dump(mode="json") for k, v in result.between.items()},
        "rewritten": result.rewritten, "failed": result.failed,
        "skipped_empty_base": result.skipped,
    }, option=orjson.OPT_INDENT_2))
