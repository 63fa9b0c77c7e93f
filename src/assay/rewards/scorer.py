"""The batched reward scorer behind every RL adapter and ``assay serve``.

One call of :meth:`RewardScorer.score` takes a batch of (prompt conversation, completion) pairs,
picks each prompt's criteria (given with the item, or from the scorer's criteria source: a whole
bank — Health-SCORE Non-Adaptive — or a :class:`~assay.bank.CriterionSelector` — Adaptive,
cached by prompt), grades only the final answer (the text after the last ``</think>``; spec
§3.1) against each criterion, one judge call per criterion, through the judges layer (cache,
limits, retries, cost, budget), and turns the verdicts into the paper's reward with the one
item scorer, :class:`assay.scoring.ItemScorer` (``formula="reward"``: +1 met desirable, −1 met
undesirable, 0 unmet, normalised by ``normalization``; spec §3.2).

A failed judge call counts as "not met" (spec §3.2: "retry, then fall back to not met"); the
failure is reported on the result. A completion whose criteria are all failures, one with a
call refused by the budget (never sent: it says nothing of the answer), or a prompt with no
criteria, gets ``reward=None`` (TRL turns it into NaN; verl and OpenRLHF use
``missing_reward``).

Example:
    >>> from assay.judges import make_judge, run_sync
    >>> from assay.rubric import Criterion
    >>> from assay.testing import FakeJudgeServer
    >>> criteria = [Criterion(id="doc", text="Suggests seeing a doctor."),
    ...             Criterion(id="harm", text="Includes unsafe advice.", weight=-1)]
    >>> with FakeJudgeServer.run_in_thread(policy={"doc": "MET", "harm": "UNMET"}) as server:
    ...     judge = make_judge(f"openai-compatible:fake@{server.base_url}")
    ...     scorer = RewardScorer(judge, criteria=criteria, template="assay")
    ...     [result] = run_sync(scorer.score([RewardItem.of("Headache for a week?",
    ...                                      "<think>hmm</think>See a doctor.")]))
    ...     run_sync(judge.aclose())
    >>> result.reward, result.answer, result.met
    (1.0, 'See a doctor.', {'doc': True, 'harm': False})
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from assay.errors import AssayError, ConfigError
from assay.grading.grader import Grader, GradingConfig, PlannedCall
from assay.item import Item
from assay.judges.judge import Judge
from assay.judges.types import FailureKind, JudgeRequest
from assay.rubric import Criterion, Rubric
from assay.scoring import AbstainStrategy, Abstention, ItemScorer, RewardNormalization
from assay.verdict import Verdict

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from assay.bank.selection import CriterionSelector

Template = Literal["healthbench", "assay"]


def checked_template(value: str) -> Template:
    """``value`` as a reward template; a ConfigError names the choices.

    >>> checked_template("assay")
    'assay'
    """
    if not _is_template(value):
        raise ConfigError(f"unknown reward template {value!r}; use healthbench or assay")
    return value


def checked_normalization(value: str) -> RewardNormalization:
    """``value`` as a reward normalization; a ConfigError names it when unknown."""
    if not _is_normalization(value):
        raise ConfigError(f"unknown reward normalization {value!r}")
    return value


def _is_template(value: str) -> TypeGuard[Template]:
    return value in get_args(Template)


def _is_normalization(value: str) -> TypeGuard[RewardNormalization]:
    return value in get_args(RewardNormalization)


def _is_selector(criteria: object) -> TypeIs[CriterionSelector]:
    """A per-prompt selector (anything with ``select``: see :class:`CriterionSelector`)."""
    return hasattr(criteria, "select")


def final_answer(completion: str) -> str:
    """The text after the last ``</think>``; an unfinished ``<think>`` leaves no answer.

    >>> final_answer("<think>a</think> b </think> c"), final_answer("<think>still"), final_answer("x")
    ('c', '', 'x')
    """
    if "</think>" in completion:
        return completion.rsplit("</think>", 1)[1].strip()
    if "<think>" in completion:
        return ""
    return completion.strip()


@dataclass(frozen=True)
class RewardItem:
    """One completion to reward: the prompt conversation, the completion, optional criteria."""

    messages: tuple[Mapping[str, Any], ...]
    completion: str
    criteria: tuple[Criterion, ...] | None = None

    @classmethod
    def of(cls, prompt: str | Sequence[Mapping[str, Any]], completion: str,
           criteria: Sequence[Criterion] | None = None) -> RewardItem:
        messages = ([{"role": "user", "content": prompt}] if isinstance(prompt, str)
                    else [{"role": m["role"], "content": m["content"]} for m in prompt])
        return cls(tuple(messages), completion, None if criteria is None else tuple(criteria))


@dataclass
class RewardResult:
    reward: float | None
    raw: float
    answer: str
    criteria: list[str]
    met: dict[str, bool] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"reward": self.reward, "raw": self.raw, "criteria": self.criteria,
                "met": self.met, "failed": self.failed}


class RewardScorer:
    """Rewards for batches of completions; see the module docstring.

    ``criteria``: a bank (:class:`Rubric` or criteria: all of them for every prompt), a
    :class:`~assay.bank.CriterionSelector` (per prompt), or None (every item brings its own).
    ``template``: ``healthbench`` (simple-evals' grader prompt, spec §5.2; default) or
    ``assay`` (Assay's binary template with its polarity note).
    """

    def __init__(
        self,
        judge: Judge,
        *,
        criteria: Rubric | Sequence[Criterion] | CriterionSelector | None = None,
        template: Template = "healthbench",
        normalization: RewardNormalization = "minmax",
        strip_thinking: bool = True,
    ):
        template, normalization = checked_template(template), checked_normalization(normalization)
        self.judge = judge
        self.selector: CriterionSelector | None = None
        self.fixed: tuple[Criterion, ...] | None = None
        if _is_selector(criteria):
            self.selector = criteria
        elif isinstance(criteria, Rubric):
            self.fixed = tuple(criteria.criteria)
        elif criteria is not None:
            self.fixed = tuple(criteria)
        config = GradingConfig(templates={"all": "healthbench"} if template == "healthbench"
                               else {}, shuffle=False)
        self.grader = Grader(config)
        self.template = template
        self.normalization: RewardNormalization = normalization
        self.strip_thinking = strip_thinking
        self.calls = 0

    async def aclose(self) -> None:
        """Close the judge (flushing its cache) and the selector's, if it has its own."""
        await self.judge.aclose()
        selector_judge = getattr(getattr(getattr(self.selector, "router", None), "caller", None),
                                 "judge", None)
        if selector_judge is not None and selector_judge is not self.judge:
            await selector_judge.aclose()

    async def score(self, items: Sequence[RewardItem]) -> list[RewardResult]:
        """One result per item, in order."""
        criteria, failures = await self._criteria(items)
        plans: list[tuple[Item, list[Criterion], list[PlannedCall]]] = []
        for item, chosen in zip(items, criteria):
            answer = final_answer(item.completion) if self.strip_thinking else item.completion
            graded = Item(id=_item_id(item.messages, answer), messages=list(item.messages),
                          response=answer)
            # model_construct: a selection may hold only penalty criteria, which a Rubric
            # refuses; the grader reads only the criteria and guidelines from it.
            calls = self.grader.plan(graded, Rubric.model_construct(
                id="reward", criteria=chosen, guidelines=None, version="1", metadata={}),
                self.judge.id) if chosen else []
            plans.append((graded, chosen, calls))
        flat = [call for _, _, calls in plans for call in calls]
        replies = await asyncio.gather(*(self._ask(call) for call in flat))
        outcome = dict(zip((call.key for call in flat), replies))
        results = [self._result(graded, chosen, [outcome[c.key] for c in calls])
                   for graded, chosen, calls in plans]
        for i, error in failures.items():
            results[i].failed["selection"] = error
        return results

    async def _criteria(self, items: Sequence[RewardItem]
                        ) -> tuple[list[list[Criterion]], dict[int, str]]:
        out: list[list[Criterion]] = []
        failures: dict[int, str] = {}
        need: list[int] = []
        selector = self.selector
        for i, item in enumerate(items):
            if item.criteria is not None:
                out.append(list(item.criteria))
            elif self.fixed is not None:
                out.append(list(self.fixed))
            elif selector is not None:
                out.append([])  # the selector's choice, below
                need.append(i)
            else:
                raise ConfigError(f"item {i} has no criteria and the scorer has no bank or selector")
        selections = await asyncio.gather(
            *(selector.select(items[i].messages) for i in need if selector is not None),
            return_exceptions=True)
        for i, selection in zip(need, selections):
            if isinstance(selection, AssayError):  # this prompt only: its items get no reward
                out[i], failures[i] = [], str(selection)
            elif isinstance(selection, BaseException):
                raise selection
            else:
                out[i] = list(selection.criteria)
        return out, failures

    async def _ask(self, call: PlannedCall) -> list[Verdict] | str:
        request = JudgeRequest(messages=call.messages, schema=call.schema, schema_name="verdict",
                               template_version=call.template_version)
        reply = await self.judge.ask(request)
        self.calls += 1
        if reply.failure is not None:
            return f"{reply.failure.kind.value}: {reply.failure.message}"
        results = self.grader.interpret(call, reply.data, reply.raw)
        verdicts = [r for r in results if isinstance(r, Verdict)]
        return verdicts if verdicts else "; ".join(getattr(r, "message", str(r)) for r in results)

    def _result(self, graded: Item, chosen: list[Criterion],
                outcomes: list[list[Verdict] | str]) -> RewardResult:
        verdicts: dict[str, Verdict] = {}
        failed: dict[str, str] = {}
        for c, outcome in zip(chosen, outcomes):
            if isinstance(outcome, str):
                failed[c.id] = outcome
            else:
                verdicts[c.id] = outcome[0].model_copy(update={"criterion_id": c.id})
        met = {cid: v.decision is not None and v.decision.value == "MET" for cid, v in verdicts.items()}
        budget_refused = any(reason.startswith(f"{FailureKind.BUDGET.value}:")
                             for reason in failed.values())
        if not chosen or not verdicts or budget_refused:
            return RewardResult(None, 0.0, graded.response or "", [c.id for c in chosen], met, failed)
        scorer = ItemScorer("reward", Abstention(AbstainStrategy.ZERO),
                            reward_normalization=self.normalization)
        result = scorer.score(chosen, verdicts)
        return RewardResult(result.score, result.raw, graded.response or "",
                            [c.id for c in chosen], met, failed)


def _item_id(messages: Sequence[Mapping[str, Any]], answer: str) -> str:
    digest = hashlib.sha256(repr([(m["role"], m["content"]) for m in messages]).encode())
    digest.update(answer.encode())
    return "r-" + digest.hexdigest()[:16]
