"""Grading one item at a time, in memory, with a run's options: what an adapter does per sample.

A framework that owns the loop (Inspect AI calls its scorer once per sample, concurrently, in
its own event loop) needs a sample's score now, without a run directory. :class:`ItemGrading`
builds what a run builds from :class:`~assay.runs.options.RunOptions` (the plan's judges, the
grader with its templates, few-shot pools and shuffles, the scoring) and, for each item, plans
its calls for every judge of the ensemble, asks them through the judges layer (cache, limits,
retries, re-asks, budget), asks a call that failed in a way asking again may fix once more (as
the engine's final pass does), aggregates the votes per criterion and scores the item with the
functions ``assay grade`` scores a run with. The same item, response and options therefore get
the score ``assay grade`` gives them.

**Fail closed.** A call that still fails, a criterion whose reply did not parse, or a call the
budget refused leaves the item without a score: :attr:`ItemGrade.failed` names each, and
:attr:`ItemGrade.score` is None, never a number made of the verdicts that did arrive.

Example:
    >>> from assay.judges import run_sync
    >>> from assay.rubric import Rubric
    >>> from assay.testing import FakeJudgeServer
    >>> rubric = Rubric(id="r", criteria=[{"id": "doc", "text": "Suggests a doctor.", "weight": 2},
    ...                                   {"id": "dose", "text": "Gives a dose.", "weight": 1}])
    >>> with FakeJudgeServer.run_in_thread(policy={"doc": "MET", "dose": "UNMET"}) as server:
    ...     grading = ItemGrading(RunOptions(judges=[f"openai-compatible:fake@{server.base_url}"],
    ...                                      rubric=rubric))
    ...     graded = run_sync(grading.grade(Item(id="q", prompt="Headache?", response="See a GP.")))
    >>> graded.score, graded.met, graded.failed
    (0.6666666666666666, {'doc': True, 'dose': False}, {})
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import InputError
from assay.grading.aggregate import Aggregated
from assay.grading.grader import Grader, PlannedCall
from assay.grading.parse import ReplyError
from assay.item import Item
from assay.rubric import Rubric
from assay.runs.item_checks import item_issue, prompt_issue
from assay.runs.options import RunOptions
from assay.runs.results import RunTally, Scoring, final_verdicts
from assay.verdict import Verdict

if TYPE_CHECKING:
    from assay.judges.budget import Budget
    from assay.judges.cache import ResponseCache
    from assay.scoring.healthbench import HealthBenchExampleScore


@dataclass
class ItemGrade:
    """One item graded: its final verdict per criterion (the judges' votes aggregated), every
    vote, what failed (``"criterion_id@judge"`` → why) and, when nothing failed, its score."""

    item: Item
    rubric: Rubric
    finals: dict[str, Aggregated]
    votes: list[Verdict]
    failed: dict[str, str] = field(default_factory=dict)
    score: float | None = None
    raw: float | None = None
    healthbench: HealthBenchExampleScore | None = None  # formula healthbench: its metrics
    axes: dict[str, float] = field(default_factory=dict)
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def met(self) -> dict[str, bool]:
        """Criterion id → whether its final verdict is MET (binary criteria with a verdict)."""
        return {cid: a.verdict.decision.value == "MET" for cid, a in self.finals.items()
                if a.verdict is not None and a.verdict.decision is not None}


class ItemGrading:
    """Grade items one by one with ``options`` (see the module docstring). ``budget``: a
    :class:`~assay.judges.Budget` to share (default: one of ``options.budget_usd``, shared by
    every item this object grades); ``options.cache_path``: one response cache for them all.
    """

    def __init__(self, options: RunOptions, *, budget: Budget | None = None) -> None:
        from assay.judges.budget import Budget
        from assay.runs.checks import check_options
        from assay.runs.plan import plan_run
        from assay.runs.sources import ItemSource

        check_options(options)
        plan = plan_run(ItemSource(items=[]), options)
        self.options = options
        self.judge_configs = plan.judge_configs
        self.weights = dict(zip((c.judge_id for c in plan.judge_configs), plan.weights))
        self.grader = Grader(plan.grading, example_pools=plan.pools)
        self.scoring = Scoring.from_config(plan.config)
        self.config = plan.config
        if budget is None and options.budget_usd is not None:
            budget = Budget(options.budget_usd)
        self.budget = budget
        self._cache: ResponseCache | None = None

    @property
    def cache(self) -> ResponseCache | None:
        if self._cache is None and self.options.cache_path:
            from assay.judges.cache import ResponseCache

            self._cache = ResponseCache(self.options.cache_path)
        return self._cache

    def close(self) -> None:
        """Close the response cache (its rows are written after every item already)."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    async def grade(self, item: Item, rubric: Rubric | None = None) -> ItemGrade:
        """Grade ``item`` against its own rubric, else ``rubric``, else the options' rubric.
        A bad item (no rubric, no response, over a size limit) is an :class:`InputError`."""
        from assay.judges import make_judge
        from assay.runs.engine import judge_request

        rubric = item.rubric or rubric or self.options.rubric
        issue = item_issue(item, rubric)
        if issue is not None:
            raise InputError(issue)
        assert rubric is not None  # item_issue says so otherwise
        # The judges' HTTP clients belong to the running loop: made and closed per item.
        judges = {c.judge_id: make_judge(c, cache=self.cache, budget=self.budget)
                  for c in self.judge_configs}
        try:
            calls = [c for judge_id in judges for c in self.grader.plan(item, rubric, judge_id)]
            issue = prompt_issue(item, calls)
            if issue is not None:
                raise InputError(issue)
            replies = await asyncio.gather(*(self._ask(judges[call.judge], call, judge_request(call))
                                             for call in calls))
        finally:
            for judge in judges.values():
                await judge.aclose()  # writes the cache's rows
        return self._graded(item, rubric, calls, replies)

    async def _ask(self, judge: Any, call: PlannedCall, request: Any) -> Any:
        """The call's reply; one that failed in a way asking again may fix is asked again up to
        ``final_passes`` times (the engine's final pass), its cost added to the last reply."""
        from dataclasses import replace

        from assay.judges.retry import worth_asking_again

        reply = await judge.ask(request)
        for _ in range(self.options.final_passes):
            if reply.failure is None or not worth_asking_again(reply.failure):
                break
            again = await judge.ask(request)
            if again.failure is not None and again.failure.kind == "budget":
                break  # the budget is spent: the failure it had stands
            reply = replace(again, usage=reply.usage + again.usage,
                            cost_usd=reply.cost_usd + again.cost_usd,
                            latency_s=reply.latency_s + again.latency_s,
                            attempts=reply.attempts + again.attempts)
        return reply

    def _graded(self, item: Item, rubric: Rubric, calls: Sequence[PlannedCall],
                replies: Sequence[Any]) -> ItemGrade:
        votes: list[Verdict] = []
        failed: dict[str, str] = {}
        cost = 0.0
        for call, reply in zip(calls, replies):
            cost += reply.cost_usd
            if reply.failure is not None:
                why = f"{reply.failure.kind.value}: {reply.failure.message}"
                failed.update({f"{cid}@{call.judge}": why for cid in call.criterion_ids})
                continue
            for result in self.grader.interpret(call, reply.data, reply.raw):
                if isinstance(result, Verdict):
                    votes.append(result)
                elif isinstance(result, ReplyError):
                    failed[f"{result.criterion_id}@{call.judge}"] = (
                        f"unreadable_reply: {result.message}")
        votes.sort(key=lambda v: (v.criterion_id, v.judge))  # the store's order
        finals = final_verdicts(rubric, votes, self.scoring)
        graded = ItemGrade(item, rubric, finals, votes, failed, cost_usd=cost, calls=len(calls))
        if failed:
            return graded
        tally = RunTally(self.scoring).score(item, rubric, finals)
        graded.score, graded.raw = tally.scored.result.score, tally.scored.result.raw
        graded.healthbench, graded.axes = tally.scored.healthbench, dict(tally.axes)
        return graded
