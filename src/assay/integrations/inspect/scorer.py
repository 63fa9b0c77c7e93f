"""``rubric_scorer``: an Inspect AI scorer that grades each sample with Assay.

Where each sample's rubric comes from (one of three):

* nothing given: the sample's own HealthBench rubrics, ``metadata["rubrics"]`` as
  ``inspect_evals``' HealthBench task stores them (:mod:`.samples`); HealthBench mode then:
  simple-evals' grader template and the official ``healthbench`` formula, as ``assay grade
  --healthbench``;
* ``rubric=``: one rubric (a file, a dict, a :class:`~assay.rubric.Rubric`, ``single-axis`` or
  ``multi-axes``) for every sample;
* ``taxonomy=`` (a tree file or ``starter``) with a ``router``: each sample is routed and
  graded against its active leaves, tree-weighted, scored with Eq. 4 (``pass-rate``), as
  ``assay grade --taxonomy``.

The judges are Assay's: one spec or several (an ensemble, combined per ``aggregation``), with
``template``, ``mode``, few-shot, ``cache`` (a response cache file shared by every sample) and
``budget_usd`` (one budget for the whole evaluation); any other setting of
:class:`~assay.runs.options.RunOptions` may be passed by name. Every sample is graded by
:class:`~assay.runs.item_grading.ItemGrading`, so its score is the one ``assay grade`` gives the
same response.

The ``Score``: ``value`` is the sample's score under the formula; ``answer`` the graded
response; ``explanation`` one line per criterion; ``metadata`` the per-criterion verdicts,
explanations and votes (:mod:`.scores`). Metrics: ``mean``, ``stderr`` and
:func:`~.metrics.healthbench_clipped` (HealthBench's clipped mean overall, per axis and per
theme).

**A failed judge call is never a score.** A sample with a call that failed after the judges
layer's retries and a final pass, a reply that did not parse after the re-asks, or a call the
budget refused gets ``Score.unscored(reason="grader_failed")`` (a NaN value that Inspect leaves
out of every metric and counts as unscored), its explanation and ``metadata["failed"]`` naming
each failure. A sample with no response is unscored too (``reason="no_response"``: ``assay
grade`` leaves such items out), and so is one whose criteria all abstained under ``skip``
(``reason="scoring_failed"``).

Example::

    from inspect_ai import Task, eval
    from inspect_evals.healthbench.dataset import load_healthbench_dataset
    from assay.integrations.inspect import rubric_scorer

    task = Task(dataset=load_healthbench_dataset(local_path="healthbench.jsonl"),
                scorer=rubric_scorer(["openai:gpt-4.1-mini", "anthropic:claude-sonnet-4-5"],
                                     cache=".assay/cache.sqlite", budget_usd=5.0))
    eval(task, model="openai/gpt-4o-mini")
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from assay.errors import AssayError, InputError
from assay.integrations.inspect.metrics import EXAMPLE_METRICS, example_metrics, healthbench_clipped
from assay.integrations.inspect.samples import item_from_sample
from assay.integrations.inspect.scores import criterion_rows, explanation
from assay.item import Item
from assay.rubric import Rubric
from assay.runs.item_grading import ItemGrade, ItemGrading


@scorer(metrics=[mean(), stderr(), healthbench_clipped()])
def rubric_scorer(
    judges: str | Sequence[Any],
    *,
    rubric: str | Path | Rubric | Mapping[str, Any] | None = None,
    taxonomy: str | Path | None = None,
    router: str = "tree",
    router_judge: str | None = None,
    router_threshold: float | None = None,
    dimension_level: int = 1,
    template: str | Mapping[str, str] | None = None,
    formula: str | None = None,
    aggregation: str = "majority",
    abstention: str = "skip",
    cache: str | Path | None = None,
    budget_usd: float | None = None,
    **options: Any,
) -> Scorer:
    """An Inspect scorer grading each sample with Assay (see the module docstring).

    ``judges``: a judge spec (``"openai:gpt-4.1-mini"``, ``"openai-compatible:M@URL"``) or
    several; ``options``: other :class:`~assay.runs.options.RunOptions` fields by name
    (``weights``, ``mode``, ``shuffle``, ``seed``, ``few_shot``, ``max_reasks``, ``protocol``,
    ``role``, ``final_passes``, ``judge_config_file`` ...). A bad setting is an error here,
    before any sample runs.
    """
    from assay.runs.options import RunOptions

    if rubric is not None and taxonomy is not None:
        raise InputError("rubric_scorer: give a rubric or a taxonomy, not both")
    healthbench = rubric is None and taxonomy is None
    if taxonomy is not None:
        formula = formula or "pass-rate"
    run_options = RunOptions.build(
        judges=[judges] if isinstance(judges, str) else list(judges), rubric=rubric,
        template=template, healthbench=healthbench, formula=formula, aggregation=aggregation,
        abstention=abstention, cache_path=None if cache is None else str(cache),
        budget_usd=budget_usd, **options)
    grading = ItemGrading(run_options)
    routing = None if taxonomy is None else _Routing(
        taxonomy, router, router_judge or run_options.judges[0], router_threshold,
        dimension_level, grading)

    async def score(state: TaskState, target: Target) -> Score:
        item = item_from_sample(state.sample_id, state.epoch, state.input, state.metadata,
                                state.output.completion)
        if healthbench and item.rubric is None:
            raise InputError(f"sample {state.sample_id}: no HealthBench rubrics in its metadata "
                             "(metadata['rubrics']); give rubric_scorer a rubric= or taxonomy=")
        if not item.response:
            return Score.unscored(reason="no_response", answer="",
                                  explanation="no response to grade")
        if routing is not None:
            routed = await routing.route(item)
            if isinstance(routed, str):
                return Score.unscored(reason="grader_failed" if routed.startswith("routing")
                                      else "scoring_failed", answer=item.response,
                                      explanation=routed)
            item = routed
        graded = await grading.grade(item)
        return score_of(graded)

    return score


def score_of(graded: ItemGrade) -> Score:
    """The Inspect ``Score`` of an item graded by Assay (see the module docstring)."""
    item, rubric = graded.item, graded.rubric
    metadata: dict[str, Any] = {
        "item_id": item.id, "rubric_id": rubric.id, "formula": "", "raw": graded.raw,
        "criteria": criterion_rows(rubric, graded.finals), "cost_usd": graded.cost_usd,
        "judge_calls": graded.calls,
    }
    metadata["formula"] = _formula(graded)
    if graded.failed:
        metadata["failed"] = dict(graded.failed)
        lines = [f"{where}: {why}" for where, why in graded.failed.items()]
        return Score.unscored(reason="grader_failed", answer=item.response,
                              explanation=f"{len(graded.failed)} judge answer(s) missing, so no "
                              "score:\n" + "\n".join(lines), metadata=metadata)
    if graded.score is None:
        return Score.unscored(reason="scoring_failed", answer=item.response,
                              explanation="nothing to score (every criterion abstained, or no "
                              "positive points)\n" + explanation(rubric, graded.finals),
                              metadata=metadata)
    metadata[EXAMPLE_METRICS] = example_metrics(
        graded.score, healthbench=graded.healthbench.metrics if graded.healthbench else None,
        axes=graded.axes, tags=item.tags)
    return Score(value=graded.score, answer=item.response,
                 explanation=explanation(rubric, graded.finals), metadata=metadata)


def _formula(graded: ItemGrade) -> str:
    return "healthbench" if graded.healthbench is not None else ""


class _Routing:
    """A taxonomy and its router: each sample's active leaves as its rubric (see
    :mod:`assay.routing.grade`). The routing calls are stored in a call store (a temporary
    file), so a query routed once is not routed again."""

    def __init__(self, taxonomy: str | Path, router: str, judge: Any,
                 threshold: float | None, dimension_level: int, grading: ItemGrading) -> None:
        from assay.io import read_taxonomy
        from assay.routing.base import Catalogue
        from assay.routing.data import resolve_taxonomy
        from assay.routing.factory import ignored_options
        from assay.routing.run import ROUTERS

        if router not in ROUTERS:
            raise InputError(f"unknown router {router!r}; choose one of {', '.join(ROUTERS)}")
        ignored = ignored_options(router, threshold=threshold is not None)
        if ignored:
            raise InputError(f"the {router} router ignores its threshold: drop it")
        self.taxonomy = read_taxonomy(resolve_taxonomy(taxonomy))
        self.catalogue = Catalogue.from_taxonomy(self.taxonomy)
        self.kind, self.judge, self.threshold = router, judge, threshold
        self.dimension_level, self.grading = dimension_level, grading
        self.store_path = Path(tempfile.mkdtemp(prefix="assay-routing-")) / "calls.sqlite"
        self._store: Any = None

    async def route(self, item: Item) -> Item | str:
        """The item with the rubric of its active leaves, or why it has none."""
        from assay.routing.base import Routing, Selection

        if self.kind == "all":
            routing = Routing(router="all", active=[Selection(id=e.id, reason="every leaf")
                                                    for e in self.catalogue.entries])
        else:
            try:
                routing = await self._route(item)
            except AssayError as exc:  # a routing call that failed: no rubric, so no score
                return f"routing failed: {exc}"
        if not routing.ids:
            return "no active leaf: nothing to grade (Eq. 4 is undefined)"
        try:
            rubric = self.taxonomy.to_rubric(routing.ids, dimension_level=self.dimension_level)
        except ValueError:
            return "only penalty leaves are active: nothing to pass"
        return item.model_copy(update={"rubric": rubric.model_copy(update={
            "id": f"{self.taxonomy.id}@{self.taxonomy.version}:{item.id}"})})

    async def _route(self, item: Item) -> Any:
        from assay.jobs import CallStore, StageCaller
        from assay.judges import make_judge
        from assay.judges.specs import config_from
        from assay.routing.factory import make_router

        if self._store is None:
            self._store = CallStore.open(self.store_path)
        judge = None
        if self.kind != "embedding":
            options = self.grading.options
            config = (config_from(self.judge, options.judge_config_file)
                      if isinstance(self.judge, str) else self.judge)
            judge = make_judge(config, cache=self.grading.cache, budget=self.grading.budget)
        try:
            caller = StageCaller(judge, self._store) if judge is not None else None
            router = make_router(self.kind, self.catalogue, caller=caller,
                                 threshold=self.threshold)
            return await router.route(item)
        finally:
            if judge is not None:
                await judge.aclose()
