"""The batched reward scorer behind every RL adapter and ``assay serve``.

One call of :meth:`RewardScorer.score` takes a batch of (prompt conversation, completion) pairs,
picks each prompt's criteria (given with the item, or from the scorer's criteria source: a whole
bank — Health-SCORE Non-Adaptive — or a :class:`~assay.bank.CriterionSelector` — Adaptive,
cached by prompt), grades only the final answer (the text after the last ``</think>``; spec
§3.1) against each criterion, one judge call per criterion, through the judges layer (cache,
limits, retries, cost, budget), and turns the verdicts into the paper's reward with the one
item scorer, :class:`assay.scoring.ItemScorer` (``formula="reward"``: +1 met desirable, −1 met
undesirable, 0 unmet, normalised by ``normalization``; spec §3.2).

**Failures fail closed.** A criterion call that fails after the judges layer's retries (or
that is not sent: an answer over :data:`~assay.limits.MAX_RESPONSE_CHARS`, a judge prompt over
:data:`~assay.limits.MAX_PROMPT_CHARS`) never turns into a verdict. What the sample gets is the
scorer's ``on_failure`` policy (:data:`FAILURE_POLICIES`):

* ``no-reward`` (default): no reward at all (``reward=None``: TRL masks it as NaN; verl and
  OpenRLHF get their ``missing_reward``, 0.0 by default). Counting a failed penalty call as
  "not met" would *raise* the reward, and a policy trained on that learns to provoke failures;
* ``unmet``: a failed criterion counts as not met (spec §3.2: "retry, then fall back to not
  met"; the behaviour before the policy existed; a failed penalty then raises the reward);
* ``penalty-met``: a failed penalty counts as met, a failed desirable criterion as not met —
  the worst the sample could have scored, so a failure never pays;
* ``skip``: the failed criteria are left out and the reward is normalised over the others
  (a failed penalty can raise the reward here too).

Whatever the policy, a sample with no verdict at all (every call failed, its prompt's
selection failed, its input is over a size limit), with a call the budget refused (never sent:
it says nothing of the answer) or with no criteria gets ``reward=None``,
and every failure is named in :attr:`RewardResult.failed` and counted in
:attr:`RewardScorer.failures` (``/metrics``, TRL's ``log_metric``, verl's dict, OpenRLHF's
``extra_logs``). A prompt whose selection fails is selected again (``selection_attempts``)
before all its completions go without a reward.

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
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from assay.errors import AssayError, ConfigError
from assay.grading.grader import Grader, GradingConfig, PlannedCall
from assay.item import Item
from assay.judges.judge import Judge
from assay.judges.limits import JUDGE_LANE
from assay.judges.types import FailureKind, JudgeRequest
from assay.limits import MAX_PROMPT_CHARS, MAX_RESPONSE_CHARS, prompt_chars
from assay.rewards.failures import FailureCounts, FailurePolicy, checked_failure_policy
from assay.rubric import Criterion, Rubric
from assay.scoring import AbstainStrategy, Abstention, ItemScorer, RewardNormalization
from assay.verdict import Decision, Verdict

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from assay.bank.selection import CriteriaSelection, CriterionSelector

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
    """One completion's reward. ``failed`` names every criterion whose call failed (or
    ``selection``: its prompt's selection; ``input``: its input was over a size limit), and
    ``on_failure`` the policy that decided the reward when something failed."""

    reward: float | None
    raw: float
    answer: str
    criteria: list[str]
    met: dict[str, bool | None] = field(default_factory=dict)
    """Each graded criterion's verdict: True (MET), False (UNMET), None (the judge abstained)."""
    failed: dict[str, str] = field(default_factory=dict)
    on_failure: FailurePolicy | None = None

    @property
    def withheld(self) -> bool:
        """True when a failure left this sample without a reward."""
        return self.reward is None and bool(self.failed)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reward": self.reward, "raw": self.raw,
                               "criteria": self.criteria, "met": self.met, "failed": self.failed}
        if self.failed:
            out["on_failure"] = self.on_failure
        return out


def input_too_large(messages: Sequence[Mapping[str, Any]], answer: str) -> str | None:
    """Why this prompt and answer may not be sent to a judge (the limits grading applies,
    :mod:`assay.limits`), or None.

    >>> input_too_large([{"role": "user", "content": "hi"}], "x" * 200_001)
    'the answer has 200,001 characters, over the limit of 200,000: not sent to a judge'
    """
    if len(answer) > MAX_RESPONSE_CHARS:
        return (f"the answer has {len(answer):,} characters, over the limit of "
                f"{MAX_RESPONSE_CHARS:,}: not sent to a judge")
    prompt = prompt_chars(messages)
    if prompt > MAX_PROMPT_CHARS:
        return (f"the prompt has {prompt:,} characters, over the judge prompt limit of "
                f"{MAX_PROMPT_CHARS:,}: not sent to a judge")
    return None


class RewardScorer:
    """Rewards for batches of completions; see the module docstring.

    ``criteria``: a bank (:class:`Rubric` or criteria: all of them for every prompt), a
    :class:`~assay.bank.CriterionSelector` (per prompt), or None (every item brings its own).
    ``template``: ``healthbench`` (simple-evals' grader prompt, spec §5.2; default) or
    ``assay`` (Assay's binary template with its polarity note). ``on_failure``: what a sample
    with a failed criterion call gets (module docstring; default ``no-reward``).
    ``selection_attempts``: how many times a prompt's selection is tried before its
    completions go without a reward.
    """

    def __init__(
        self,
        judge: Judge,
        *,
        criteria: Rubric | Sequence[Criterion] | CriterionSelector | None = None,
        template: Template = "healthbench",
        normalization: RewardNormalization = "minmax",
        strip_thinking: bool = True,
        on_failure: FailurePolicy = "no-reward",
        selection_attempts: int = 2,
    ):
        template, normalization = checked_template(template), checked_normalization(normalization)
        if selection_attempts < 1:
            raise ConfigError("selection_attempts must be at least 1")
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
        self.on_failure: FailurePolicy = checked_failure_policy(on_failure)
        self.selection_attempts = selection_attempts
        self.calls = 0
        self.failures = FailureCounts()
        if (why := self.ungradable(self.fixed)) is not None:
            raise ConfigError(f"the reward bank: {why}")

    async def aclose(self) -> None:
        """Close the judge (flushing its cache) and the selector's, if it has its own."""
        await self.judge.aclose()
        # a relevance selector's caller is its router's; a rubric writer holds its own
        owner = getattr(self.selector, "router", None) or self.selector
        selector_judge = getattr(getattr(owner, "caller", None), "judge", None)
        if selector_judge is not None and selector_judge is not self.judge:
            await selector_judge.aclose()

    async def score(self, items: Sequence[RewardItem], *,
                    on_failure: FailurePolicy | None = None,
                    on_result: Callable[[int, RewardResult], None] | None = None,
                    lanes: Sequence[Hashable] | None = None,
                    ) -> list[RewardResult]:
        """One result per item, in order; ``on_failure`` overrides the scorer's policy.
        ``on_result(i, result)`` is called with each item's result as soon as its own judge
        calls have ended (a server answers each request without waiting for the batch).
        ``lanes[i]``: the judge lane of item ``i``'s calls (:data:`~assay.judges.limits.
        JUDGE_LANE`): the judge's free slots are shared fairly between lanes."""
        policy = self.on_failure if on_failure is None else checked_failure_policy(on_failure)
        answers = [self.answer(item) for item in items]
        refused = {i: why for i, (item, answer) in enumerate(zip(items, answers))
                   if (why := input_too_large(item.messages, answer)) is not None}
        criteria, failures = await self._criteria(items, skip=refused, lanes=lanes)
        for chosen in criteria:  # before any call: a grader error fails the whole batch
            if (why := self.ungradable(chosen)) is not None:
                raise ConfigError(why)
        # Each lane has at most as many items planned or being graded as the judge has slots:
        # their judge prompts are built when they start, so memory follows the judge's width,
        # not the batch's size (the other items wait unplanned).
        window = self.judge.limiter.max_in_flight
        gates: dict[Hashable, asyncio.Semaphore] = {}

        async def one(i: int) -> RewardResult:
            lane = None if lanes is None else lanes[i]
            if lane is not None:  # this item's task and the judge calls it starts
                JUDGE_LANE.set(lane)
            chosen, answer = criteria[i], answers[i]
            if i in refused or i in failures:
                failed = {"input": refused[i]} if i in refused else {"selection": failures[i]}
                result = RewardResult(None, 0.0, answer, [c.id for c in chosen], {}, failed,
                                      policy)
            else:
                async with gates.setdefault(lane, asyncio.Semaphore(window)):
                    graded, calls = self._plan(items[i], answer, chosen)
                    replies = await asyncio.gather(*(self._ask(call) for call in calls))
                result = self._result(graded, chosen, list(replies), policy)
            self.failures.add([result])
            if on_result is not None:
                on_result(i, result)
            return result

        return list(await asyncio.gather(*(one(i) for i in range(len(items)))))

    def _plan(self, item: RewardItem, answer: str, chosen: list[Criterion]
              ) -> tuple[Item, list[PlannedCall]]:
        """The item as graded and its judge calls (none without criteria)."""
        graded = Item(id=_item_id(item.messages, answer), messages=list(item.messages),
                      response=answer)
        # model_construct: a selection may hold only penalty criteria, which a Rubric
        # refuses; the grader reads only the criteria and guidelines from it.
        calls = self.grader.plan(graded, Rubric.model_construct(
            id="reward", criteria=chosen, guidelines=None, version="1", metadata={}),
            self.judge.id) if chosen else []
        return graded, calls

    def answer(self, item: RewardItem) -> str:
        """The text graded for ``item``: its final answer, or the whole completion."""
        return final_answer(item.completion) if self.strip_thinking else item.completion

    def ungradable(self, criteria: Sequence[Criterion] | None) -> str | None:
        """Why this scorer's template cannot grade one of ``criteria``, or None: HealthBench's
        grader prompt asks a yes/no question, so it grades binary criteria only.

        >>> from assay.judges import make_judge
        >>> from assay.rubric import Criterion
        >>> scorer = RewardScorer(make_judge("openai-compatible:m@http://127.0.0.1:9/v1"))
        >>> print(scorer.ungradable([Criterion(id="tone", text="Tone?", options=[
        ...     {"label": "warm", "value": 1}, {"label": "cold", "value": 0}])]))
        criterion 'tone' is ordinal: the healthbench template grades binary criteria only (the assay template grades it: assay serve --template assay)
        """
        if criteria is None or self.template != "healthbench":
            return None
        for criterion in criteria:
            if criterion.is_multi_choice:
                return (f"criterion {criterion.id!r} is {criterion.kind.value}: the healthbench "
                        "template grades binary criteria only (the assay template grades it: "
                        "assay serve --template assay)")
        return None

    def refusal(self, item: RewardItem) -> str | None:
        """Why ``item`` will not be sent to a judge (a size limit), or None."""
        return input_too_large(item.messages, self.answer(item))

    async def _criteria(self, items: Sequence[RewardItem], *, skip: Mapping[int, str],
                        lanes: Sequence[Hashable] | None = None,
                        ) -> tuple[list[list[Criterion]], dict[int, str]]:
        """Each item's criteria, and why selection failed for the items it failed for. Items
        in ``skip`` are not selected for (their prompt is never sent); a prompt is selected in
        the lane of its first item."""
        out: list[list[Criterion]] = []
        need: dict[str, list[int]] = {}   # one selection per distinct prompt (a GRPO group)
        selector = self.selector
        if selector is not None:  # loaded with the selector already
            from assay.bank.selection import prompt_key
        for i, item in enumerate(items):
            if item.criteria is not None:
                out.append(list(item.criteria))
            elif self.fixed is not None:
                out.append(list(self.fixed))
            elif selector is not None:
                out.append([])  # the selector's choice, below
                if i not in skip:
                    need.setdefault(prompt_key(item.messages), []).append(i)
            else:
                raise ConfigError(f"item {i} has no criteria and the scorer has no bank or selector")
        groups = list(need.values())
        selections = await asyncio.gather(*(
            self._select(items[group[0]].messages,
                         None if lanes is None else lanes[group[0]]) for group in groups))
        failures: dict[int, str] = {}
        for group, selection in zip(groups, selections):
            for i in group:
                if isinstance(selection, str):  # this prompt only: its items get no reward
                    failures[i] = selection
                else:
                    out[i] = list(selection.criteria)
        return out, failures

    async def _select(self, messages: Sequence[Mapping[str, Any]], lane: Hashable = None
                      ) -> CriteriaSelection | str:
        """The prompt's selection, tried ``selection_attempts`` times; the last error if none
        succeeds (a bug, not an :class:`AssayError`, propagates)."""
        assert self.selector is not None
        if lane is not None:
            JUDGE_LANE.set(lane)
        error = ""
        for attempt in range(self.selection_attempts):
            if attempt:
                self.failures.selection_retries += 1
            try:
                return await self.selector.select(messages)
            except AssayError as exc:
                error = str(exc)
        self.failures.selections += 1
        return error

    async def _ask(self, call: PlannedCall) -> list[Verdict] | str:
        longest = prompt_chars(call.messages)
        if longest > MAX_PROMPT_CHARS:  # the criterion text and template on top of the prompt
            return (f"a judge prompt of {longest:,} characters, over the limit of "
                    f"{MAX_PROMPT_CHARS:,}: not sent to a judge")
        request = JudgeRequest(messages=call.messages, schema=call.schema, schema_name="verdict",
                               template_version=call.template_version, budget=call.budget,
                               bool_field=call.bool_field)
        reply = await self.judge.ask(request)
        self.calls += 1
        if reply.failure is not None:
            return f"{reply.failure.kind.value}: {reply.failure.message}"
        results = self.grader.interpret(call, reply.data, reply.raw)
        verdicts = [r for r in results if isinstance(r, Verdict)]
        return verdicts if verdicts else "; ".join(getattr(r, "message", str(r)) for r in results)

    def _result(self, graded: Item, chosen: list[Criterion],
                outcomes: list[list[Verdict] | str], policy: FailurePolicy) -> RewardResult:
        verdicts: dict[str, Verdict] = {}
        failed: dict[str, str] = {}
        for c, outcome in zip(chosen, outcomes):
            if isinstance(outcome, str):
                failed[c.id] = outcome
            else:
                verdicts[c.id] = outcome[0].model_copy(update={"criterion_id": c.id})
        # an abstention is neither met nor unmet: None, never a default False
        met = {cid: None if v.decision in (None, Decision.CANNOT_ASSESS)
               else v.decision is Decision.MET for cid, v in verdicts.items()}
        ids = [c.id for c in chosen]
        answer = graded.response or ""
        applied = policy if failed else None
        budget_refused = any(reason.startswith(f"{FailureKind.BUDGET.value}:")
                             for reason in failed.values())
        if not chosen or not verdicts or budget_refused or (failed and policy == "no-reward"):
            return RewardResult(None, 0.0, answer, ids, met, failed, applied)
        scored = chosen
        if failed and policy == "skip":
            scored = [c for c in chosen if c.id not in failed]
        elif failed:  # unmet / penalty-met: each failed criterion gets the policy's verdict
            verdicts = {**verdicts, **{c.id: _assumed(graded.id, c, policy)
                                       for c in chosen if c.id in failed}}
        scorer = ItemScorer("reward", Abstention(AbstainStrategy.ZERO),
                            reward_normalization=self.normalization)
        result = scorer.score(scored, verdicts)
        return RewardResult(result.score, result.raw, answer, ids, met, failed, applied)


def _assumed(item_id: str, criterion: Criterion, policy: FailurePolicy) -> Verdict:
    """The verdict a failed criterion is counted as under ``unmet`` or ``penalty-met``."""
    met = policy == "penalty-met" and criterion.is_penalty
    return Verdict(item_id=item_id, criterion_id=criterion.id,
                   decision=Decision.MET if met else Decision.UNMET,
                   explanation=f"assumed by the failure policy {policy}")


def _item_id(messages: Sequence[Mapping[str, Any]], answer: str) -> str:
    digest = hashlib.sha256(repr([(m["role"], m["content"]) for m in messages]).encode())
    digest.update(answer.encode())
    return "r-" + digest.hexdigest()[:16]
