"""Grading RAG conversations: the ASTRID triad (CF, CR, RA) and the RAGAS baselines per turn,
as a resumable job on :mod:`assay.jobs`.

Every model call is a stage of a :class:`~assay.jobs.StageCaller` (judges layer: cache, limits,
retries and re-asks, cost, budget; traced in the job's store, never repeated on resume);
:func:`~assay.jobs.run_batch` runs the items concurrently and resumably. A failed stage fails
only its item, and a failed RAGAS baseline (optional) not even that: the item is kept with that
baseline's value None and its failure under ``baselines_failed``, the job is incomplete, and
running it again asks only the failed calls. The results go to ``grades.jsonl`` in the job
directory, one line per item: the metrics of the last graded turn at the top level, every
graded turn under ``turns``.

Example (against the fake judge)::

    items = read_rag_items("examples/rag/items.jsonl")
    run = grade_rag(items, "openai-compatible:fake@http://127.0.0.1:8089/v1", "runs/rag")
    run.grades[0].cf, run.grades[0].cr, run.grades[0].refused
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InputError, Issue
from assay.jobs import PartialResult, StageError
from assay.rag.diagnosis import CF_HIGH, diagnose
from assay.rag.faithfulness import EmptyPolicy, FaithfulnessResult, conversational_faithfulness
from assay.rag.items import RagItem, TurnSelection
from assay.rag.prompts import PROMPT_VERSION
from assay.rag.ragas import (
    RagasContextRelevance,
    RagasFaithfulness,
    ragas_context_relevance,
    ragas_faithfulness,
)
from assay.rag.relevance_refusal import (
    ContextRelevance,
    Refusal,
    context_relevance,
    refusal,
    refusal_correct,
)

T = TypeVar("T")


class RagOptions(BaseModel):
    """What a grading job computes; part of the job's config (a change needs a new directory)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turns: TurnSelection = "last"
    baselines: bool = True
    empty_cf: EmptyPolicy = "zero"
    cf_high: float = Field(CF_HIGH, ge=0, le=1)
    """CF at or above this reads as "High" in the Figure 11 diagnosis."""
    templates: dict[str, str] = Field(default_factory=dict)
    """Listings replaced for this judge (:mod:`~assay.rag.prompt_overrides`), by key."""
    context_tokens: int | None = Field(None, ge=1)
    """About how many tokens of each turn's retrieved passages the judge sees, all together
    (None: all of them); for a judge whose context the passages overflow. Every metric is then
    of the passages as cut: the job's config records it."""

    def job_config(self) -> dict[str, Any]:
        """The options as the job's config (``context_tokens`` only when set, so a job made
        before the option resumes as it was)."""
        return self.model_dump(exclude={"context_tokens"} if self.context_tokens is None
                               else None)


class TurnMetrics(BaseModel):
    """The metrics of one graded assistant turn and its Figure 11 reading."""

    cf: float | None
    cf_reason: str | None = None
    cf_unmatched: list[str] = Field(default_factory=list)
    """Answer sentences the judge's CF replies did not name (CF is then None)."""
    cr: bool
    refused: bool
    refusal_correct: bool
    ragas_faithfulness: float | None = None
    ragas_faithfulness_reason: str | None = None
    ragas_context_relevance: float | None = None
    baselines_failed: dict[str, str] = Field(default_factory=dict)
    """The RAGAS baselines whose calls failed (their values are None), with why."""
    diagnosis: list[str]


class TurnGrade(TurnMetrics):
    """One assistant turn's metrics, with every judgement behind them; ``scope`` and
    ``refusal_expected`` are those of the question this turn answers."""

    turn: int
    scope: str | None = None
    refusal_expected: bool | None = None
    faithfulness: FaithfulnessResult
    context_relevance: ContextRelevance
    refusal: Refusal
    ragas: dict[str, Any] = Field(default_factory=dict)


class RagGrade(TurnMetrics):
    """One item's grades: the last graded turn's metrics (and its question's scope and expected
    refusal) at the top, all graded turns below."""

    id: str
    judge: str
    scope: str
    hazard: str | None = None
    refusal_expected: bool
    turns: list[TurnGrade]


async def grade_turn(caller: Any, item: RagItem, turn: int, options: RagOptions) -> TurnGrade:
    """CF, CR and RA (and the baselines) of one assistant turn; the calls run concurrently."""
    exchange = item.exchange(turn, options.context_tokens)
    key = item.id
    jobs: list[Any] = [
        conversational_faithfulness(caller, exchange, item_id=key, empty=options.empty_cf,
                                    templates=options.templates),
        context_relevance(caller, exchange, item_id=key, templates=options.templates),
        refusal(caller, exchange, item_id=key, templates=options.templates),
    ]
    if options.baselines:
        jobs += [_optional(ragas_faithfulness(caller, exchange, item_id=key)),
                 _optional(ragas_context_relevance(caller, exchange, item_id=key))]
    done = await asyncio.gather(*jobs)
    cf, cr, ra = done[0], done[1], done[2]
    baselines = dict(zip(("ragas_faithfulness", "ragas_context_relevance"), done[3:]))
    failed = {name: str(b) for name, b in baselines.items() if isinstance(b, StageError)}
    rf = baselines.get("ragas_faithfulness")
    rf = rf if isinstance(rf, RagasFaithfulness) else None
    rcr = baselines.get("ragas_context_relevance")
    rcr = rcr if isinstance(rcr, RagasContextRelevance) else None
    expected = item.turn_refusal_expected(turn)
    scope = item.turn_scope(turn)
    return TurnGrade(
        turn=turn, scope=scope, refusal_expected=expected, cf=cf.value, cf_reason=cf.reason,
        cf_unmatched=cf.unmatched_sentences, cr=cr.relevant, refused=ra.refused,
        refusal_correct=refusal_correct(refused=ra.refused, expected=expected),
        ragas_faithfulness=rf.value if rf else None,
        ragas_faithfulness_reason=rf.reason if rf else None,
        ragas_context_relevance=rcr.value if rcr else None,
        baselines_failed=failed,
        # With no informative sentence, CF's value comes from the empty policy, not from the
        # answer: it says nothing about faithfulness, so the diagnosis does not read it. A
        # sentence left unnamed may be informative: CF is then undefined, and read as such.
        diagnosis=diagnose(in_scope=scope == "in_scope", cf=cf.value, cr=cr.relevant,
                           refused=ra.refused, refusal_expected=expected,
                           cf_high=options.cf_high,
                           informative=bool(cf.informative or cf.unmatched_sentences)),
        faithfulness=cf, context_relevance=cr, refusal=ra,
        ragas={"faithfulness": rf.model_dump() if rf else None,
               "context_relevance": rcr.model_dump() if rcr else None},
    )


async def _optional(call: Awaitable[T]) -> T | StageError:
    """An optional stage's result, or its failure as a value (it fails nothing else)."""
    try:
        return await call
    except StageError as exc:
        return exc


async def grade_item(caller: Any, item: RagItem, options: RagOptions) -> RagGrade:
    """All graded turns of one item (turn by turn, so traces read in conversation order)."""
    turns = [await grade_turn(caller, item, t, options) for t in item.graded_turns(options.turns)]
    last = turns[-1]
    return RagGrade(id=item.id, judge=caller.model, scope=item.turn_scope(last.turn),
                    hazard=item.hazard, refusal_expected=item.turn_refusal_expected(last.turn),
                    turns=turns,
                    **last.model_dump(include=set(TurnMetrics.model_fields)))


async def _graded(caller: Any, item: RagItem, options: RagOptions) -> dict[str, Any]:
    """One item's grade as a batch result; a :class:`PartialResult` when a baseline failed."""
    grade = await grade_item(caller, item, options)
    failed = [reason for turn in grade.turns for reason in turn.baselines_failed.values()]
    if failed:
        raise PartialResult(grade.model_dump(mode="json"), "; ".join(failed))
    return grade.model_dump(mode="json")


@dataclass
class RagRun:
    """A finished (or partly finished) grading job."""

    path: Path
    grades: list[RagGrade]
    failed: dict[str, str] = field(default_factory=dict)
    partial: dict[str, str] = field(default_factory=dict)
    """Graded items lacking a RAGAS baseline (kept in ``grades``), with why."""
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def grades_path(self) -> Path:
        return self.path / "grades.jsonl"


async def grade_rag_async(
    items: Sequence[RagItem], judge: Any, job_dir: str | Path, *,
    options: RagOptions | None = None, quiet: bool = True,
) -> RagRun:
    """Grade ``items`` with an open :class:`~assay.judges.Judge` into ``job_dir`` (resumable)."""
    from assay.jobs import JobDir, StageCaller, run_batch

    options = options or RagOptions()
    config = {"judge": judge.model, "judge_id": judge.id, "prompts": PROMPT_VERSION,
              **options.job_config()}
    job = JobDir.open(job_dir, kind="rag", config=config)
    try:
        caller = StageCaller(judge, job.store)

        async def worker(item: RagItem) -> dict[str, Any]:
            return await _graded(caller, item, options)

        batch = await run_batch(items, worker, store=job.store, item_id=lambda i: i.id,
                                label="rag", quiet=quiet)
        grades = [RagGrade.model_validate(batch.results[i.id]) for i in items
                  if i.id in batch.results]
        write_grades(grades, job.path / "grades.jsonl")
        summary = {"items": len(items), "graded": len(grades), "failed": batch.failed,
                   "without_baseline": batch.partial, "in_flight": {judge.id: judge.in_flight}}
    except BaseException:
        job.close()
        raise
    manifest = job.finish(status="complete" if batch.complete else "incomplete", extra=summary)
    return RagRun(path=Path(job_dir), grades=grades, failed=batch.failed, partial=batch.partial,
                  manifest=manifest)


def grade_rag(
    items: Sequence[RagItem], judge: str | Any, job_dir: str | Path, *,
    options: RagOptions | None = None, quiet: bool = True, **judge_options: Any,
) -> RagRun:
    """Synchronous :func:`grade_rag_async`; ``judge`` may be a spec string (``make_judge``
    options such as ``cache=`` or ``budget=`` go in ``judge_options``)."""
    from assay.judges import make_judge, run_sync

    async def main() -> RagRun:
        if isinstance(judge, str):
            async with make_judge(judge, **judge_options) as opened:
                return await grade_rag_async(items, opened, job_dir, options=options, quiet=quiet)
        return await grade_rag_async(items, judge, job_dir, options=options, quiet=quiet)

    return run_sync(main())


def write_grades(grades: Sequence[RagGrade], path: str | Path) -> int:
    from assay.io.jsonl import write_jsonl

    return write_jsonl((g.model_dump(mode="json") for g in grades), path)


def read_grades(path: str | Path) -> list[RagGrade]:
    """The grades of a ``grades.jsonl`` (or of a job directory holding one); bad lines raise one
    :class:`InputError` naming file, line and field."""
    from assay.io.jsonl import iter_models

    path = Path(path)
    if path.is_dir():
        path = path / "grades.jsonl"
    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such grades file"))
    issues: list[Issue] = []
    grades = [g for _, g in iter_models(path, RagGrade, issues)]
    if issues:
        raise InputError(issues)
    return grades
