"""``--dry-run``: how many calls, tokens and dollars a run would take, without calling anyone.

It counts what the run would really send: the calls the response cache (``--cache``) already
answers, and on ``--resume RUN`` the calls the run has already finished, are counted apart and
cost nothing; an item the run would skip (no rubric, no response, a prompt over the limit) is an
issue, as it would be in the run. Prompt tokens are counted from the real prompts (about 4
characters per token); completion tokens are estimated at ``reply_tokens`` per criterion judged.
Each judge that would send a call also sends its preflight first (one completion request, paid
as any, and for a local server its ``/props`` question, free): counted apart, its dollars in
the totals. Dollars are shown at both prices: live, and through the provider's batch API
(half; the preflight is a live request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assay.errors import Issue
from assay.grading.grader import Grader, PlannedCall
from assay.item import Item
from assay.judges.preflight import preflight_estimate
from assay.judges.pricing import BATCH_PRICE_FACTOR, CostEstimate, estimate_cost, estimate_tokens
from assay.rubric import Rubric
from assay.runs.item_checks import item_issue, prompt_issue

REPLY_TOKENS = 80

FinishedCalls = Callable[[str], tuple[bool, set[str]] | None]  # RunStore.item_state
IsCached = Callable[[Any, PlannedCall], bool]  # (judge config, call) -> the cache answers it


@dataclass(frozen=True)
class JudgeEstimate:
    """One judge's share of a dry run: its id, the calls it would be sent (with their tokens
    and dollars), and the calls it would not: ``cached`` (answered by the response cache) and
    ``finished`` (already finished in the resumed run)."""

    judge: str
    cost: CostEstimate
    cached: int = 0
    finished: int = 0
    preflight_requests: int = 0  # sent before the first call (none if no call is sent)
    preflight_usd: float = 0.0

    @property
    def usd(self) -> float:
        """The calls' and the preflight's dollars, at the live price."""
        return round(self.cost.usd + self.preflight_usd, 6)

    @property
    def batch_usd(self) -> float:
        """The same calls' dollars through the provider's batch API (``--executor batch``),
        and the preflight's (live)."""
        return round(self.cost.usd * BATCH_PRICE_FACTOR + self.preflight_usd, 6)


@dataclass(frozen=True)
class DryRun:
    """A whole dry run: the items read, one estimate per judge, and the issues found (items
    the run would skip, bad input lines): a dry run with issues is not a clean plan."""

    items: int
    judges: list[JudgeEstimate]
    issues: list[Issue]
    resume: str | None = None
    cache: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The dry run as JSON-ready data (``assay grade --dry-run --json FILE``)."""
        judges = [{"judge": e.judge, "calls": e.cost.n_calls, "cached": e.cached,
                   "finished": e.finished, "preflight_requests": e.preflight_requests,
                   "prompt_tokens": e.cost.prompt_tokens,
                   "completion_tokens_est": e.cost.completion_tokens,
                   "preflight_usd_est": e.preflight_usd if e.cost.priced else None,
                   "usd_est": e.usd if e.cost.priced else None,
                   "usd_batch_est": e.batch_usd if e.cost.priced else None,
                   "priced": e.cost.priced}
                  for e in self.judges]
        priced = all(e.cost.priced for e in self.judges)
        return {"dry_run": True, "status": "error" if self.issues else "ok",
                "items": self.items, "resume": self.resume, "cache": self.cache,
                "calls": sum(j["calls"] for j in judges),
                "cached": sum(e.cached for e in self.judges),
                "finished": sum(e.finished for e in self.judges),
                "preflight_requests": sum(e.preflight_requests for e in self.judges),
                "usd_est": sum(e.usd for e in self.judges) if priced else None,
                "usd_batch_est": sum(e.batch_usd for e in self.judges) if priced else None,
                "judges": judges, "issues": [str(i) for i in self.issues]}


def dry_run(source: Any, options: Any, *, resume: str | Path | None = None) -> DryRun:
    """A dry run of ``options`` (a :class:`~assay.runs.options.RunOptions`) over ``source``:
    the same prompts a run of the same :func:`~assay.runs.plan.plan_run` would send, counted,
    with no call. ``resume``: the run directory it would continue (its finished calls are not
    counted; a changed config is refused, as the run would refuse it)."""
    from assay.runs.plan import plan_run
    from assay.runs.runner import refuse_changed_config
    from assay.runs.store import RunStore

    plan = plan_run(source, options)
    grader = Grader(plan.grading, example_pools=plan.pools)
    store = cache = None
    try:
        finished: FinishedCalls | None = None
        if resume is not None:
            store = RunStore.open(resume)
            refuse_changed_config(resume, store.config(), plan.config)
            finished = store.item_state
        is_cached: IsCached | None = None
        if options.cache_path and Path(options.cache_path).is_file():  # no file: nothing cached
            cache, is_cached = _cache_lookup(options.cache_path)
        issues: list[Issue] = []
        n_items, estimates = estimate(iter(source), grader, plan.judge_configs, options.rubric,
                                      finished=finished, is_cached=is_cached, issues=issues)
    finally:
        if store is not None:
            store.close()
        if cache is not None:
            cache.close()
    issues[:0] = source.issues  # bad input lines first, as the run lists them
    if source.skipped_without_response:
        issues.append(Issue(None, None, "items", f"{source.skipped_without_response} items have "
                            "no response to grade and would be left out"))
    return DryRun(n_items, estimates, issues, str(resume) if resume is not None else None,
                  str(options.cache_path) if options.cache_path else None)


def _cache_lookup(path: str | Path) -> tuple[Any, IsCached]:
    from assay.judges.cache import ResponseCache, request_cache_key
    from assay.runs.engine import judge_request

    cache = ResponseCache(path)
    params: dict[str, dict[str, Any]] = {}  # per judge, computed once

    def is_cached(config: Any, call: PlannedCall) -> bool:
        if config.judge_id not in params:
            params[config.judge_id] = config.request_params()
        return cache.has(request_cache_key(config, judge_request(call), params[config.judge_id]))

    return cache, is_cached


def estimate(items: Iterable[Item], grader: Grader, judge_configs: list[Any],
             rubric: Rubric | None, reply_tokens: int = REPLY_TOKENS, *,
             finished: FinishedCalls | None = None, is_cached: IsCached | None = None,
             issues: list[Issue] | None = None) -> tuple[int, list[JudgeEstimate]]:
    """(items planned, one estimate per judge). ``finished``: an item's state in a resumed run
    (``RunStore.item_state``); ``is_cached``: whether the response cache answers a call;
    ``issues`` collects the items a run would skip."""
    n_items = 0
    per_judge = {c.judge_id: [0, 0, 0, 0, 0] for c in judge_configs}  # sent, tokens, cached, done
    for item in items:
        n_items += 1
        item_rubric = item.rubric or rubric
        problem = item_issue(item, item_rubric)
        if problem is not None or item_rubric is None:
            if problem is not None and issues is not None:
                issues.append(problem)
            continue
        state = finished(item.id) if finished is not None else None
        planned = [(config, call) for config in judge_configs
                   for call in grader.plan(item, item_rubric, config.judge_id)]
        problem = prompt_issue(item, [call for _, call in planned])
        if problem is not None:
            if issues is not None:
                issues.append(problem)
            continue
        for config, call in planned:
            counts = per_judge[config.judge_id]
            if state is not None and (state[0] or call.key in state[1]):
                counts[4] += 1
            elif is_cached is not None and is_cached(config, call):
                counts[3] += 1
            else:
                counts[0] += 1
                counts[1] += sum(estimate_tokens(m["content"]) for m in call.messages)
                counts[2] += reply_tokens * len(call.criteria)
    out = []
    for config in judge_configs:
        calls, prompt, completion, cached, done = per_judge[config.judge_id]
        total = estimate_cost(config.model, prompt, completion, 1)
        requests, preflight = preflight_estimate(config) if calls else (0, None)
        out.append(JudgeEstimate(config.judge_id, replace(total, n_calls=calls), cached, done,
                                 requests, preflight.usd if preflight is not None else 0.0))
    return n_items, out
