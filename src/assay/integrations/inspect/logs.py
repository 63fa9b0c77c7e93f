"""Inspect eval logs in (``assay grade --inspect-log``), Assay runs out (``assay export
--inspect``), both through Inspect's own ``read_eval_log`` / ``write_eval_log`` (``.eval`` and
``.json``).

In: every sample of the log becomes an item (:mod:`.samples`): its conversation, its output as
the response and, for an ``inspect_evals`` HealthBench log, its rubric. A sample without output
(it errored) has no response: ``assay grade`` names it and leaves it out.

Out: every item of the run becomes a sample (id: the item id, epoch 1) with its conversation,
its response as the model's output, and one score, ``assay_rubric``: the run's score of the
item under its own formula, with the per-criterion verdicts, explanations and votes in the
score's metadata (:mod:`.scores`), as the live scorer writes them. An item whose calls did not
all give verdicts (from every judge) is an unscored sample (``Score.unscored``), and a run
that is not complete is a log with status ``error`` saying why, never ``success``. The log's
results hold Inspect's ``mean`` and ``stderr`` and :func:`~.metrics.healthbench_clipped` of
the scores.

Example::

    items = read_log_items("logs/healthbench.eval").items
    write_run_log("runs/mini", "mini.eval")        # then: inspect view --log-dir .
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.integrations.inspect.metrics import EXAMPLE_METRICS, example_metrics
from assay.integrations.inspect.samples import is_healthbench_metadata, item_from_sample
from assay.integrations.inspect.scores import criterion_rows, explanation
from assay.item import Item

SCORER = "assay_rubric"


@dataclass
class LogItems:
    """The items of an Inspect log, and whether it is a HealthBench log (every sample carries
    HealthBench rubrics)."""

    items: list[Item]
    healthbench: bool
    model: str
    task: str


def read_log_items(path: str | Path) -> LogItems:
    """The samples of the Inspect log at ``path`` as items; an unreadable log or a malformed
    sample is an :class:`InputError` naming the file."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001  Inspect's reader raises what it meets (zip, JSON, pydantic)
        raise InputError(Issue(str(path), None, None, f"not a readable Inspect log: {exc}")) from None
    samples = log.samples or []
    if not samples:
        raise InputError(Issue(str(path), None, "samples", "the log holds no samples"))
    items = []
    for sample in samples:
        try:
            items.append(item_from_sample(sample.id, sample.epoch, sample.input, sample.metadata,
                                          sample.output.completion if sample.output else None))
        except InputError as exc:
            raise InputError([Issue(str(path), None, i.field, i.message)
                              for i in exc.issues]) from None
    healthbench = all(is_healthbench_metadata(s.metadata) for s in samples)
    return LogItems(items, healthbench, log.eval.model, log.eval.task)


def write_run_log(run: str | Path, path: str | Path) -> Any:
    """Write the run ``run`` as an Inspect eval log at ``path`` (``.eval`` or ``.json``) and
    return the ``EvalLog`` written (see the module docstring)."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import SampleScore, Score

    from assay.runs.results import Scoring, iter_final_verdicts
    from assay.runs.status import run_status
    from assay.runs.store import RunStore

    suffix = Path(path).suffix.lower()
    if suffix not in (".eval", ".json"):
        raise InputError(Issue(str(path), None, "-o", "an Inspect log ends in .eval or .json"))
    store = RunStore.open(run)
    try:
        scoring = Scoring.from_config(store.config())
        finished = {item.id: (rubric, finals)
                    for item, rubric, finals in iter_final_verdicts(store, scoring)}
        items = [item for _, item, _ in store.iter_items(done_only=False)]
        scored = _item_scores(store, scoring)
        manifest = store.meta("manifest")
        status = run_status(run, store=store)
    finally:
        store.close()
    samples, sample_scores = [], []
    for item in items:
        score = _score(item, finished.get(item.id), scored.get(item.id), scoring.formula, Score)
        samples.append(EvalSample(
            id=item.id, epoch=1, input=_chat(item.messages), target=item.reference or "",
            messages=[*_chat(item.messages), *_chat([("assistant", item.response or "")])],
            output=ModelOutput.from_content("none/none", item.response or ""),
            scores={SCORER: score}, metadata={"tags": list(item.tags)}))
        sample_scores.append(SampleScore(score=score, sample_id=item.id))
    now = datetime.now(UTC).isoformat()
    # a run that is not complete is no successful eval: Inspect's "error", with why
    error = None if status.complete else EvalError(
        message=f"assay run {status.describe()}", traceback="", traceback_ansi="")
    log = EvalLog(
        status="success" if error is None else "error", error=error,
        eval=EvalSpec(created=now, task=f"assay/{Path(run).resolve().name}", model="none/none",
                      dataset=EvalDataset(name=Path(run).name, samples=len(samples),
                                          sample_ids=[s.id for s in samples]),
                      config=EvalConfig(), metadata={"assay_run": str(Path(run).resolve()),
                                                     "formula": scoring.formula}),
        results=EvalResults(total_samples=len(samples), completed_samples=len(samples),
                            scores=[_results(sample_scores)]),
        stats=EvalStats(started_at=now, completed_at=now),
        samples=samples,
        metadata={"assay_manifest": manifest} if manifest else {},
    )
    write_eval_log(log, str(path))
    return log


def _item_scores(store: Any, scoring: Any) -> dict[str, Any]:
    from assay.runs.results import RunTally, iter_final_verdicts

    tally = RunTally(scoring)
    return {item.id: tally.score(item, rubric, finals)
            for item, rubric, finals in iter_final_verdicts(store, scoring)}


def _score(item: Item, graded: Any, tally: Any, formula: str, Score: Any) -> Any:
    if graded is None or tally is None or tally.scored.item.n_ungraded:
        return Score.unscored(reason="grader_failed", answer=item.response,
                              explanation="the run has no verdict for every criterion of this "
                              "item (failed calls: assay grade --resume RUN retries them)",
                              metadata={"item_id": item.id})
    rubric, finals = graded
    value = tally.scored.result.score
    metadata: dict[str, Any] = {"item_id": item.id, "rubric_id": rubric.id, "formula": formula,
                                "raw": tally.scored.result.raw,
                                "criteria": criterion_rows(rubric, finals)}
    if value is None or math.isnan(value):
        return Score.unscored(reason="scoring_failed", answer=item.response,
                              explanation=explanation(rubric, finals), metadata=metadata)
    hb = tally.scored.healthbench
    metadata[EXAMPLE_METRICS] = example_metrics(value, healthbench=hb.metrics if hb else None,
                                                axes=tally.axes, tags=item.tags)
    return Score(value=value, answer=item.response, explanation=explanation(rubric, finals),
                 metadata=metadata)


def _results(sample_scores: list[Any]) -> Any:
    """Inspect's own metrics of the scored samples (``Score.unscored`` ones left out, as an
    eval leaves them out)."""
    from inspect_ai.log import EvalMetric, EvalScore
    from inspect_ai.scorer import mean, stderr

    from assay.integrations.inspect.metrics import healthbench_clipped

    scored = [s for s in sample_scores if not math.isnan(s.score.as_float())]
    metrics: dict[str, Any] = {}
    if scored:
        for name, compute in (("mean", mean()), ("stderr", stderr())):
            metrics[name] = EvalMetric(name=name, value=float(compute(scored)))
        for key, value in healthbench_clipped()(scored).items():
            name = f"healthbench_clipped_{key}"
            metrics[name] = EvalMetric(name=name, value=float(value))
    return EvalScore(name=SCORER, scorer=SCORER, scored_samples=len(scored),
                     unscored_samples=len(sample_scores) - len(scored), metrics=metrics)


def _chat(messages: Sequence[Any]) -> list[Any]:
    """Inspect chat messages of an item's messages (or ``(role, content)`` pairs); a role
    Inspect has no message for (``tool`` without its call) reads as the user's."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "developer": ChatMessageSystem,
             "assistant": ChatMessageAssistant}
    pairs = [m if isinstance(m, tuple) else (m.role, m.content) for m in messages]
    return [kinds.get(role, ChatMessageUser)(content=content) for role, content in pairs]
