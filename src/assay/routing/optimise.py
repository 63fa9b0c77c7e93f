"""``assay refine --method rubricstree``: RubricsTree's response optimisation (seed 003 §6.3).

Per item (a query with its base response, and any health memory): route it over the taxonomy,
grade the base response on its active leaves with the auditor (phases 1-2), render the paper's
feedback report (:mod:`assay.routing.feedback`), have the actor revise the response once with
prompt P4 (phase 3: augment, change only what was flagged), then grade the revision on the
same active leaves. Base and revised scores (Eq. 4) are compared with paired tests
(:func:`assay.metrics.compare.compare_scores`), overall and per axis (level-1 node, S_d), and
each leaf's pass rate before and after (:mod:`assay.routing.gains`).

Everything is a resumable job in ``OUT``: ``OUT/routing`` (one routing, shared by both
gradings), ``OUT/base`` and ``OUT/revised`` (ordinary taxonomy grading runs), ``OUT/revise`` (the
actor's calls). Run the same command again to finish; no finished call is made twice.

An item whose base response fails no active leaf is left as it is (the paper revises against
the failed criteria; a needless rewrite can only lose what passed): the actor is not asked, its
revised response is its base response and its revised score and leaf outcomes are the base
ones; ``left_alone`` names these items.

Fail closed: an item whose base grading is incomplete (routing failed, no active leaf, a leaf
without a verdict) is not revised; a revision that failed or was cut at the token limit is not
graded; either leaves the job ``incomplete`` (``budget`` when the budget stopped it), and the
comparisons cover only the items scored on both sides (``n_items`` says how many).

Outputs in ``OUT``: ``revisions.jsonl`` (per item: active leaves, failed leaves, feedback
report, base and revised response, whether it was left alone), ``scores.jsonl`` (base and
revised Eq. 4 per item) and ``optimise.json`` (status, the comparisons, per-leaf and per-axis
gains, how many items were revised and left alone, items left out and why, calls and cost per
phase).

Example (against the fake server playing judge and actor)::

    result = asyncio.run(arun_rubricstree_refine(
        items, read_taxonomy(resolve_taxonomy("starter")), out="runs/opt",
        judge=f"openai-compatible:fake@{url}", actor=f"openai-compatible:patient-bot@{url}"))
    result.versus_base.mean_difference.value, result.per_axis["Medical skills"]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.item import Item
from assay.judges.completion import CompletionBudget
from assay.judges.types import Failure, FailureKind
from assay.metrics.compare import ScoreComparison, compare_scores
from assay.routing.feedback import PROMPT_VERSION, LeafFeedback, feedback_report, revision_prompt
from assay.routing.gains import LeafGain, LeafOutcome, axes_of, axis_scores, leaf_gains
from assay.rubric import Rubric, Taxonomy

STAGE = "revise"
REVISION_BUDGET = CompletionBudget(2048)  # a rewritten answer (free text: never grown)


@dataclass
class OptimiseResult:
    """What ``assay refine --method rubricstree`` produced (see the module docstring)."""

    out: Path
    status: str = "incomplete"
    base_scores: dict[str, float | None] = field(default_factory=dict)
    revised_scores: dict[str, float | None] = field(default_factory=dict)
    versus_base: ScoreComparison | None = None  # revised − base
    per_axis: dict[str, ScoreComparison] = field(default_factory=dict)
    per_leaf: list[LeafGain] = field(default_factory=list)
    revised: int = 0
    left_alone: list[str] = field(default_factory=list)  # items with no failed leaf: kept as is
    not_revised: dict[str, str] = field(default_factory=dict)  # item -> why not
    failed: dict[str, str] = field(default_factory=dict)  # item -> why its revision failed
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)  # calls and cost per phase

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def cost_usd(self) -> float:
        return sum(p.get("cost_usd", 0.0) for p in self.phases.values())


def run_outcomes(run_dir: str | Path) -> tuple[dict[str, dict[str, LeafOutcome]], dict[str, Rubric]]:
    """A graded run's leaf outcomes (item -> leaf -> :class:`LeafOutcome`, MET / UNMET verdicts
    only) and the rubric (active leaves, in routing order) of every item it registered."""
    from assay.runs.store import RunStore
    from assay.verdict import Decision

    store = RunStore.open(run_dir)
    try:
        rubrics = {item.id: store.rubric(digest) for _, item, digest in store.iter_items()}
        outcomes: dict[str, dict[str, LeafOutcome]] = {}
        for _, verdicts in store.iter_votes():
            for v in verdicts:
                if v.decision not in (Decision.MET, Decision.UNMET):
                    continue
                weight = rubrics[v.item_id].criterion(v.criterion_id).weight
                passed = (v.decision is Decision.MET) == (weight > 0)
                outcomes.setdefault(v.item_id, {})[v.criterion_id] = LeafOutcome(
                    passed, weight, v.explanation)
    finally:
        store.close()
    return outcomes, rubrics


def item_feedback(rubric: Rubric, outcomes: dict[str, LeafOutcome]) -> list[LeafFeedback] | None:
    """The feedback lines of one item's active leaves, or None when a leaf has no verdict."""
    if any(c.id not in outcomes for c in rubric.criteria):
        return None
    return [LeafFeedback(c.id, c.text, outcomes[c.id].passed, outcomes[c.id].reasoning)
            for c in rubric.criteria]


def query_text(item: Item) -> str:
    """P4's ``{query}``: what the auditor sees as "User Query & Instructions" (the conversation,
    system instructions included, then the health memory and any context)."""
    from assay.grading.prompts import _shared_blocks

    blocks = _shared_blocks(item, None)
    context = blocks["context"].strip()
    return blocks["conversation"] + (f"\n\n{context}" if context else "")


async def arun_rubricstree_refine(
    items: Sequence[Item], taxonomy: Taxonomy, *, judge: str, actor: str, out: str | Path,
    router: str = "tree", router_judge: str | None = None, threshold: float | None = None,
    template: str = "auditor", cache: str | Path | None = None, budget_usd: float | None = None,
    config_file: str | Path | None = None, n_bootstrap: int = 1000, seed: int = 0,
    quiet: bool = True,
) -> OptimiseResult:
    """Route, grade, give feedback, revise once, grade again; see the module docstring.

    ``judge`` grades (the auditor, with ``template``: ``auditor`` or ``auditor:ROLE``),
    ``router_judge`` routes (default: ``judge``), ``actor`` revises (the model under test).
    ``budget_usd`` bounds all three phases together.
    """
    from assay.routing.run import aroute_and_grade
    from assay.runs.options import RunOptions

    missing = [item.id for item in items if not item.response]
    if missing:
        raise InputError(Issue(None, None, f"item[{missing[0]}].response", "the base response is "
                               f"missing ({len(missing)} items): give items with responses, or "
                               "--responses"))
    out = Path(out)
    result = OptimiseResult(out=out)
    spent = 0.0

    def left() -> float | None:
        return None if budget_usd is None else max(0.0, budget_usd - spent)

    async def grade(batch: Sequence[Item], name: str) -> Any:
        run_dir = out / name
        options = RunOptions.build(template=template, judges=[judge], budget_usd=left(),
                                   cache_path=str(cache) if cache else None, quiet=quiet,
                                   judge_config_file=str(config_file) if config_file else None)
        return await aroute_and_grade(
            batch, taxonomy, options, run_dir, router=router, router_judge=router_judge,
            threshold=threshold, quiet=quiet, routing_dir=out / "routing", stands_for=items,
            resume=run_dir if (run_dir / "run.sqlite").exists() else None)

    base = await grade(items, "base")
    result.phases["base"] = _run_totals(base, count_routing=True)
    spent += result.phases["base"]["cost_usd"]
    outcomes, rubrics = run_outcomes(base.report.run_dir)
    graded: list[tuple[Item, list[LeafFeedback]]] = []
    for item in items:
        rubric = rubrics.get(item.id)
        lines = None if rubric is None else item_feedback(rubric, outcomes.get(item.id, {}))
        if lines is None:
            result.not_revised[item.id] = _why_not_graded(item.id, base, rubric is not None)
        else:
            graded.append((item, lines))
    work = [(item, lines) for item, lines in graded if not all(line.passed for line in lines)]
    result.left_alone = [item.id for item, lines in graded if all(line.passed for line in lines)]
    revisions, totals = await _revise(work, actor, out / "revise", taxonomy, template, result,
                                      cache=cache, budget=left(), config_file=config_file,
                                      quiet=quiet)
    result.phases["revise"] = totals
    spent += totals["cost_usd"]
    revised_items = [item.model_copy(update={"response": revisions[item.id]["revised"]})
                     for item, _ in work if item.id in revisions]
    result.revised = len(revised_items)
    revised_run = await grade(revised_items, "revised") if revised_items else None
    if revised_run is not None:
        result.phases["revised"] = _run_totals(revised_run, count_routing=False)
        result.revised_scores = {k: v for k, v in revised_run.report.scores.scores.items()}
    after, _ = run_outcomes(revised_run.report.run_dir) if revised_run is not None else ({}, {})
    result.base_scores = dict(base.report.scores.scores)
    for item_id in result.left_alone:  # unchanged, so graded as before
        result.revised_scores[item_id] = result.base_scores.get(item_id)
        after[item_id] = outcomes.get(item_id, {})
    result.versus_base = compare_scores(result.revised_scores, result.base_scores,
                                        n_resamples=n_bootstrap, seed=seed)
    axes = axes_of(taxonomy)
    before_axes, after_axes = axis_scores(outcomes, axes), axis_scores(after, axes)
    result.per_axis = {axis: compare_scores(after_axes.get(axis, {}), scores,
                                            n_resamples=n_bootstrap, seed=seed)
                       for axis, scores in before_axes.items()}
    result.per_leaf = leaf_gains(outcomes, after)
    stopped = any(p.get("status") == "budget" for p in result.phases.values())
    revised_done = revised_run.report.status == "complete" if revised_run is not None \
        else not work
    done = (base.report.status == "complete" and not result.not_revised and not result.failed
            and revised_done)
    result.status = "complete" if done else ("budget" if stopped else "incomplete")
    _write_outputs(result, graded, revisions)
    return result


async def _revise(work: list[tuple[Item, list[LeafFeedback]]], actor: str, job_dir: Path,
                  taxonomy: Taxonomy, template: str, result: OptimiseResult, *,
                  cache: Any, budget: float | None, config_file: Any,
                  quiet: bool) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """One P4 revision per item by the actor (a resumable job); failures go to ``result``."""
    from assay.jobs import JobDir, StageCaller, StageError, messages_of, run_batch
    from assay.judges.secrets import redact
    from assay.sampling.job import _close, _model_judge

    job = JobDir.open(job_dir, kind="rubricstree-revise", config={
        "actor": redact(actor), "prompt": PROMPT_VERSION, "template": template,
        "taxonomy": taxonomy.id, "taxonomy_version": taxonomy.version})
    model = _model_judge(actor, config_file=config_file, temperature=None, max_tokens=None,
                         seed=None, reasoning_effort=None, concurrency=None, cache=cache,
                         budget=budget)
    caller = StageCaller(model, job.store)

    async def revise(task: tuple[Item, list[LeafFeedback]]) -> dict[str, Any]:
        item, lines = task
        report = feedback_report(lines)
        prompt = revision_prompt(query_text(item), item.response or "", report)
        answer = await caller.answer(STAGE, messages_of(None, prompt), item_id=item.id,
                                     budget=REVISION_BUDGET)
        if answer.get("finish_reason") == "length":
            limit = model.config.max_tokens or REVISION_BUDGET.tokens
            cut = Failure(FailureKind.TRUNCATED, f"the revision was cut at max_tokens={limit}")
            raise StageError(STAGE, item.id, str(cut), cut.kind)
        return {"revised": answer["text"], "feedback": report,
                "finish_reason": answer.get("finish_reason")}

    status, totals = "incomplete", None
    try:
        batch = await run_batch(work, revise, store=job.store, item_id=lambda t: t[0].id,
                                label=f"revise ({model.model})", quiet=quiet)
        result.failed.update(batch.failed)
        spend = model.budget
        status = "complete" if batch.complete else (
            "budget" if spend is not None and spend.exhausted else "incomplete")
    finally:
        await _close(model)
        totals = job.store.totals()  # before finish() closes the store
        job.finish(status=status, extra={"failed": result.failed})
    return batch.results, {"status": status, "calls": totals.calls, "cost_usd": totals.cost_usd}


def _run_totals(run: Any, *, count_routing: bool) -> dict[str, Any]:
    """A grading run's status, calls and cost; the revised run's routing is the base run's
    (stored, not made again), so only the first counts it."""
    totals = run.report.totals
    routing = run.summary.get("routing_totals") or {}
    calls, cost = totals.calls, totals.cost_usd
    if not count_routing:
        calls -= routing.get("calls", 0)
        cost -= routing.get("cost_usd", 0.0)
    return {"status": run.report.status, "calls": calls, "cost_usd": cost}


def _why_not_graded(item_id: str, base: Any, registered: bool) -> str:
    """Why an item's base response was not revised: its routing failed, it has no active leaf,
    or a leaf of it has no verdict."""
    if registered:
        return "the base grading is incomplete (a leaf has no verdict): not revised"
    key = f"item[{item_id}]"
    return next((i.message for i in [*base.routing_issues, *base.issues] if i.field == key),
                "not graded")


def _write_outputs(result: OptimiseResult, work: list[tuple[Item, list[LeafFeedback]]],
                   revisions: dict[str, dict[str, Any]]) -> None:
    from assay.io.jsonl import write_jsonl

    alone = set(result.left_alone)
    write_jsonl(({"id": item.id, "active_leaves": [line.leaf_id for line in lines],
                  "failed_leaves": [line.leaf_id for line in lines if not line.passed],
                  "feedback": revisions.get(item.id, {}).get("feedback"),
                  "base": item.response, "left_alone": item.id in alone,
                  "revised": item.response if item.id in alone
                  else revisions.get(item.id, {}).get("revised")}
                 for item, lines in work), result.out / "revisions.jsonl")
    write_jsonl(({"id": i, "base": s, "revised": result.revised_scores.get(i)}
                 for i, s in result.base_scores.items()), result.out / "scores.jsonl")
    summary = {
        "status": result.status, "revised": result.revised,
        "left_alone": len(result.left_alone), "left_alone_items": result.left_alone,
        "versus_base": None if result.versus_base is None
        else result.versus_base.model_dump(mode="json"),
        "per_axis": {k: v.model_dump(mode="json") for k, v in result.per_axis.items()},
        "per_leaf": [{**vars(g), "gain": g.gain} for g in result.per_leaf],
        "not_revised": result.not_revised, "failed": result.failed, "phases": result.phases,
        "cost_usd": result.cost_usd,
    }
    (result.out / "optimise.json").write_text(json.dumps(summary, indent=2) + "\n",
                                              encoding="utf-8")
