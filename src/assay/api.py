"""``assay.grade`` and ``assay.agrade``: grade items against rubrics with LLM judges, from Python.

Example (against the fake judge server, so it runs anywhere)::

    import assay
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread(policy="MET") as server:
        result = assay.grade("examples/healthbench/examples.jsonl", healthbench=True, ideal=True,
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    result.overall, result.ci          # the official HealthBench score and its CI
    result.to_pandas().head()          # one row per item x criterion
    result.rescore(abstention="zero")  # other settings, no model call

With a real endpoint: ``judges=["openai:gpt-4.1-mini"]`` and ``OPENAI_API_KEY`` set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.grading.fewshot import FewShot
from assay.item import Item
from assay.rubric import Rubric

if TYPE_CHECKING:  # the run layer is imported when a run starts, not with ``import assay``
    import pandas as pd

    from assay.errors import Issue
    from assay.grading.grader import Mode
    from assay.runs.options import Executor
    from assay.runs.results import RunScores, Stat
    from assay.runs.runner import RunReport
    from assay.runs.store import Totals
    from assay.scoring import Formula, HealthBenchReport
    from assay.verdict import Verdict


@dataclass
class GradeResult:
    """The outcome of a run: scores, summary, and access to every stored verdict."""

    run_dir: Path
    status: str  # complete | incomplete (verdicts missing: resume; or input records skipped,
    # named in issues) | budget | interrupted; a stored run's later: assay.runs.run_status
    report: RunReport

    @property
    def scores(self) -> dict[str, float | None]:
        """Item id -> score (None when nothing could be scored)."""
        return self.report.scores.scores

    @property
    def overall(self) -> float | None:
        return self.report.scores.overall

    @property
    def ci(self) -> tuple[float, float] | None:
        return self.report.scores.ci

    @property
    def by_axis(self) -> dict[str, Stat]:
        return self.report.scores.by_axis

    @property
    def by_theme(self) -> dict[str, Stat]:
        return self.report.scores.by_theme

    @property
    def healthbench(self) -> HealthBenchReport | None:
        """The official HealthBench report (formula ``healthbench``), else None."""
        return self.report.scores.healthbench

    @property
    def totals(self) -> Totals:
        return self.report.totals

    @property
    def manifest(self) -> dict[str, Any]:
        return self.report.manifest

    @property
    def issues(self) -> list[Issue]:
        """Bad input records that were skipped (file, line, field); any makes the run
        incomplete."""
        return self.report.issues

    @property
    def verdicts(self) -> list[Verdict]:
        """Final verdicts (the judges' votes aggregated), one per item x criterion."""
        return self._verdicts(votes=False)

    @property
    def votes(self) -> list[Verdict]:
        """Every judge's verdict, one per item x criterion x judge."""
        return self._verdicts(votes=True)

    def _verdicts(self, *, votes: bool) -> list[Verdict]:
        from assay.runs.exports import iter_verdicts
        from assay.runs.store import RunStore

        store = RunStore.open(self.run_dir)
        try:
            return list(iter_verdicts(store, self.report.scores.scoring, votes=votes))
        finally:
            store.close()

    def to_pandas(self, *, votes: bool = False) -> pd.DataFrame:
        """A DataFrame of final verdicts (or of every vote), with values and agreement."""
        from assay.runs.exports import verdict_frame

        return verdict_frame(self.run_dir, self.report.scores.scoring, votes=votes)

    def export(self, path: str | Path, *, votes: bool = False) -> int:
        """Write verdicts as .jsonl (what ``assay score`` reads), .csv or .parquet."""
        from assay.runs.exports import export

        return export(self.run_dir, path, votes=votes, scoring=self.report.scores.scoring)

    def rescore(self, *, aggregation: str | None = None, abstention: str | None = None,
                formula: str | None = None, aggregate: str | None = None,
                abstain: str | None = None) -> RunScores:
        """Scores under other settings, from the stored votes (no model call); the settings of
        :func:`assay.runs.rescore_run` (``aggregate`` and ``abstain`` are former names)."""
        from assay.runs.aliases import renamed
        from assay.runs.results import rescore_run

        return rescore_run(self.run_dir, aggregation=aggregation, formula=formula,
                           abstention=renamed("abstention", abstention, "abstain", abstain),
                           aggregate=aggregate)


async def agrade(
    items: str | Path | Sequence[Item | Mapping[str, Any]] | None = None,
    *,
    judges: Sequence[Any] = (),
    rubric: str | Path | Rubric | Mapping[str, Any] | None = None,
    weights: Sequence[float] | None = None,
    mode: Mode = "per-criterion",
    template: str | Mapping[str, str] | None = None,
    shuffle: bool = True,
    seed: int = 0,
    few_shot: int | FewShot | None = None,
    few_shot_items: str | Path | None = None,
    few_shot_labels: str | Path | None = None,
    aggregation: str | None = None,
    abstention: str | None = None,
    formula: Formula | None = None,
    max_reasks: int | None = None,
    protocol: str = "assay",
    healthbench: bool = False,
    responses: str | Path | Mapping[str, str] | None = None,
    ideal: bool = False,
    run_dir: str | Path | None = None,
    resume: str | Path | None = None,
    budget_usd: float | None = None,
    concurrency: int | None = None,
    cache_path: str | Path | None = None,
    progress: bool = False,
    executor: Executor | None = None,
    ray_address: str | None = None,
    workers: int | None = None,
    batch_retry: str = "batch",
    batch_poll_s: float = 30.0,
    final_passes: int = 1,
    judge_config_file: str | Path | None = None,
    aggregate: str | None = None,
    abstain: str | None = None,
) -> GradeResult:
    """Grade ``items`` (a file, or Items/dicts) against ``rubric`` (or each item's own rubric).

    The settings are the fields of :class:`assay.runs.RunOptions` (the same names in
    ``assay grade``'s Python layer; its flags are noted). ``judges``: specs such as
    ``"openai:gpt-4.1-mini"`` or ``JudgeConfig``s (several make an ensemble, combined per
    ``aggregation`` (``--aggregate``): ``majority|weighted|unanimous|any`` for binary,
    ``ordinal=mean|median|mode``, ``nominal=mode``, and ``abstain=drop|count``: an abstaining
    judge's vote is dropped (default) or counts for the abstention, see
    :mod:`assay.grading.aggregate`). ``mode``: ``per-criterion`` or ``per-item``.
    ``template``: ``"healthbench"``, a template file, or ``{slot: file}`` for the slots
    ``binary``, ``multi_choice``, ``per_item``. ``few_shot``: examples per criterion, drawn
    balanced and seeded from criterion examples and ``few_shot_items`` + ``few_shot_labels``
    (a verdict JSONL). ``abstention`` (``--abstain``): ``skip|zero|partial[:F]|fail``.
    ``max_reasks`` (``--max-reasks``): how many times every judge asks again for a reply that
    does not parse, quoting the parse error (default: each judge's ``max_reasks``, 2).
    ``protocol="simple-evals"`` (``--protocol``, HealthBench only): every judge sends
    simple-evals' exact grader request and sends it again, unchanged, while the reply has no
    boolean ``criteria_met`` (at most ``max_reasks`` times; :mod:`assay.judges.simple_evals`).
    ``healthbench=True`` grades HealthBench JSONL with simple-evals' grader prompt and reports
    the official score; the responses come from ``responses`` (JSONL of prompt_id -> response,
    or a dict) or the ideal completions (``ideal=True``). ``resume``: a run directory to
    continue; the config must be unchanged. ``budget_usd`` (``--budget``): a hard stop in USD
    (resume later with a larger one). ``cache_path`` (``--cache``): a response cache file.
    ``executor="ray"`` makes the judge calls on ``workers`` Ray actors (of the cluster at
    ``ray_address``, or a local instance); the store stays with this process (see
    :mod:`assay.distributed`). ``executor="batch"`` asks through the judges' batch APIs
    (OpenAI's Batch API, Anthropic's Message Batches) at half price; a request that fails or
    expires is asked again in a new batch or live (``batch_retry``), and a pending batch is
    polled every ``batch_poll_s`` seconds (see :mod:`assay.judges.batch_judge`).
    ``final_passes`` (``--final-passes``): how many times a call that failed on transient
    faults or an unparsed reply is asked again once every call has been sent, before the
    run's status is decided (default 1; 0: none; see :mod:`assay.runs.engine`).
    ``judge_config_file`` (``--config``): the ``assay.toml`` where judges named without a
    provider (``[judges.NAME]``) are defined.
    ``progress=True`` shows the command line's progress bar (on stderr; see
    :mod:`assay.progress`); by default a run draws nothing. ``aggregate`` and
    ``abstain`` are the former names of ``aggregation`` and ``abstention``. A bad value is an
    :class:`~assay.errors.InputError` (a ``ValueError``) naming it.
    """
    if progress:  # the command line's rich bar (the library itself never draws)
        from assay.cli.progress import install

        install()
    from assay.runs.aliases import renamed
    from assay.runs.options import RunOptions
    from assay.runs.runner import arun, restore
    from assay.runs.sources import read_responses

    if executor is None:  # local; a resumed run that submitted batches goes on waiting for them
        from assay.runs.batch_ledger import executor_of

        executor = executor_of(resume)
    operational = {"run_dir": run_dir, "budget_usd": budget_usd, "concurrency": concurrency,
                   "cache_path": cache_path, "quiet": not progress, "executor": executor,
                   "ray_address": ray_address, "workers": workers, "batch_retry": batch_retry,
                   "batch_poll_s": batch_poll_s, "final_passes": final_passes,
                   "judge_config_file": judge_config_file}
    if items is None and resume is not None:
        source, options = restore(resume, RunOptions(**operational))
    else:
        if items is None:
            raise ValueError("give the items to grade (or resume=RUN to continue a run)")
        source = _source(items)
        if isinstance(responses, (str, Path)):
            source.responses = read_responses(responses)
            source.responses_path = str(Path(responses).resolve())
        elif responses is not None:
            source.responses = dict(responses)
        source.ideal = ideal
        options = RunOptions.build(
            judges=list(judges), rubric=rubric, weights=weights, mode=mode, template=template,
            shuffle=shuffle, seed=seed, few_shot=few_shot, few_shot_items=few_shot_items,
            few_shot_labels=few_shot_labels, formula=formula, healthbench=healthbench,
            max_reasks=max_reasks, protocol=protocol,
            aggregation=renamed("aggregation", aggregation, "aggregate", aggregate) or "majority",
            abstention=renamed("abstention", abstention, "abstain", abstain) or "skip",
            **operational)
    report = await arun(source, options, resume=resume)
    return GradeResult(report.run_dir, report.status, report)


def grade(items: Any = None, **kwargs: Any) -> GradeResult:
    """Blocking :func:`agrade` (works in scripts and inside notebooks' running loops)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(agrade(items, **kwargs))
    from assay.judges.sync import run_sync

    return run_sync(agrade(items, **kwargs))


def _source(items: Any):
    from assay.runs.sources import ItemSource

    if isinstance(items, (str, Path)):
        return ItemSource(path=Path(items))
    return ItemSource(items=[i if isinstance(i, Item) else Item.model_validate(i) for i in items])
