"""HealthBench's meta-evaluation: grader-vs-physician agreement, exactly as simple-evals computes it.

**Input format** (the meta-eval JSONL of ``openai/simple-evals``, one row per completion ×
rubric criterion, about 29.5k rows upstream; not shipped here)::

    {"prompt": [{"role": "user", "content": "..."}],   # the conversation
     "completion": "...",                              # the answer that was graded
     "rubric": "Advises calling emergency services.",  # ONE criterion's text
     "binary_labels": [true, false, true],             # one label per physician
     "anonymized_physician_ids": ["p1", "p7", "p9"],   # aligned with binary_labels
     "category": "cluster:emergency_referrals"}        # the reporting cluster

plus the grader's verdicts: one boolean per row (``criteria_met``). As Assay verdicts, a row is
item :attr:`MetaEvalRow.item_id` (a hash of prompt and completion) and criterion
:attr:`MetaEvalRow.criterion_id` (derived from the rubric text); MET = True.
:func:`meta_eval_items` turns the rows into gradable items with exactly those ids (one item per
prompt + completion, one binary criterion per distinct rubric text), so ``assay grade`` can
produce the grader's verdicts (``assay meta-eval items`` writes them).

**Computation** (``compute_metrics_for_rater_by_class`` in ``healthbench_meta_eval.py``):
every (rater label, other label) pair on a row is one comparison. Precision of class
``pos``/``neg`` is the share of agreeing comparisons among those where the *rater* said
pos/neg; recall of ``pos``/``neg`` is the share among those where the *other* label is pos/neg.
F1 per class from those; ``f1_balanced`` = mean of the pos and neg F1 (macro F1). Everything is
computed overall and per ``category``, with simple-evals' key names
(``pairwise_model_f1_balanced``, ``"<category>: pairwise_model_f1_balanced"``...). The grader
is compared with every physician on the row; each physician with the *other* physicians on
the row (leave-one-out), aggregated per physician. simple-evals leaves the physician figures
per physician; :class:`MetaEvalReport` adds their mean and median.

Example:
    >>> rows = [MetaEvalRow(prompt=[{"role": "user", "content": "hi"}], completion="a",
    ...         rubric="r", binary_labels=[True, True], anonymized_physician_ids=["p", "q"],
    ...         category="c")]
    >>> meta_evaluate(rows, [True]).headline.reason
    'no comparison where the model said neg'
    >>> meta_evaluate(rows, [True]).model["pairwise_model_precision_pos"].value
    1.0
"""

from __future__ import annotations

import copy
import hashlib
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.errors import InputError, Issue
from assay.grading.prompts import BARE_RUBRIC_ITEM
from assay.item import Item, Role
from assay.metrics.results import Metric
from assay.rubric.criterion import Criterion, derive_criterion_id
from assay.rubric.rubric import Rubric
from assay.verdict import Decision, Verdict

HEADLINE = "pairwise_{rater}_f1_balanced"
ROLES = get_args(Role)


class MetaEvalRow(BaseModel):
    """One meta-eval row: a completion, one rubric criterion, and the physicians' labels."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    prompt: list[dict[str, Any]] = Field(min_length=1)
    completion: str
    rubric: str = Field(min_length=1)
    binary_labels: list[bool]
    anonymized_physician_ids: list[str]
    category: str

    @field_validator("prompt")
    @classmethod
    def _gradable_messages(cls, prompt: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # simple-evals renders each turn as f"{role}: {content}"; anything else cannot be graded.
        for i, message in enumerate(prompt):
            role = message.get("role")
            if role not in ROLES:
                raise ValueError(f"message {i} has role {role!r}; expected one of {', '.join(ROLES)}")
            if not isinstance(message.get("content"), str):
                raise ValueError(f"message {i} needs a text content")  # noqa: TRY004 (pydantic)
        return prompt

    @model_validator(mode="after")
    def _labels_match_ids(self) -> MetaEvalRow:
        if len(self.binary_labels) != len(self.anonymized_physician_ids):
            raise ValueError(
                f"{len(self.binary_labels)} binary_labels but "
                f"{len(self.anonymized_physician_ids)} anonymized_physician_ids"
            )
        return self

    @property
    def item_id(self) -> str:
        blob = orjson.dumps([self.prompt, self.completion], option=orjson.OPT_SORT_KEYS)
        return "hbm-" + hashlib.sha256(blob).hexdigest()[:12]

    @property
    def criterion_id(self) -> str:
        return derive_criterion_id(self.rubric)


class MetaEvalReport(BaseModel):
    """The grader's pairwise metrics, the physicians' leave-one-out baseline, and coverage."""

    model_config = ConfigDict(frozen=True)

    n_rows: int
    n_rows_without_verdict: int
    headline: Metric  # pairwise_model_f1_balanced
    model: dict[str, Metric]
    physician_mean: dict[str, Metric]
    physician_median: dict[str, Metric]
    per_physician: dict[str, dict[str, Metric]]


def read_meta_eval(path: str | Path) -> list[MetaEvalRow]:
    """Read a meta-eval JSONL file; every bad line is reported as ``file:line: field: msg``."""
    from assay.io.jsonl import iter_models

    issues: list[Issue] = []
    rows = [row for _, row in iter_models(path, MetaEvalRow, issues)]
    if issues:
        raise InputError(issues)
    return rows


def rater_metrics(
    self_preds: Sequence[bool],
    other_preds: Sequence[Sequence[bool]],
    clusters: Sequence[str],
    rater: str = "model",
) -> dict[str, Metric]:
    """simple-evals' ``compute_metrics_for_rater_by_class``: precision/recall/F1 per class and
    balanced, overall and per cluster, keyed by its names (``pairwise_{rater}_{metric}_{cls}``).
    """
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # key -> [agreements, n]
    for mine, others, cluster in zip(self_preds, other_preds, clusters, strict=True):
        for other in others:
            agree = int(mine == other)
            for metric, positive in (("precision", mine), ("recall", other)):
                key = f"pairwise_{rater}_{metric}_{'pos' if positive else 'neg'}"
                for k in (key, f"{cluster}: {key}"):
                    counts[k][0] += agree
                    counts[k][1] += 1
    why = {
        "precision": "no comparison where the {rater} said {cls}",
        "recall": "no comparison where the other label is {cls}",
    }
    metrics: dict[str, Metric] = {}
    for prefix in ["", *(f"{c}: " for c in sorted(set(clusters)))]:
        base = f"{prefix}pairwise_{rater}"
        for metric in ("precision", "recall"):
            for cls in ("pos", "neg"):
                agree, n = counts.get(f"{base}_{metric}_{cls}", (0, 0))
                reason = why[metric].format(rater=rater, cls=cls)
                metrics[f"{base}_{metric}_{cls}"] = Metric.of(agree / n if n else None, n, reason)
        for cls in ("pos", "neg"):
            metrics[f"{base}_f1_{cls}"] = _f1(
                metrics[f"{base}_precision_{cls}"], metrics[f"{base}_recall_{cls}"]
            )
        for metric in ("precision", "recall", "f1"):
            metrics[f"{base}_{metric}_balanced"] = _balanced(
                metrics[f"{base}_{metric}_pos"], metrics[f"{base}_{metric}_neg"]
            )
    return metrics


def _f1(precision: Metric, recall: Metric) -> Metric:
    # n counts TP + FP + FN once, as simple-evals does.
    if precision.value is None or recall.value is None:
        reason = precision.reason if precision.value is None else recall.reason
        return Metric.undefined(reason or "undefined", n=precision.n + recall.n)
    tp = round(precision.value * precision.n)
    n = precision.n + recall.n - tp
    if precision.value == 0 and recall.value == 0:
        return Metric.of(0.0, n=n)
    value = 2 * precision.value * recall.value / (precision.value + recall.value)
    return Metric.of(value, n=n)


def _balanced(pos: Metric, neg: Metric) -> Metric:
    # n over-counts as in simple-evals (pos and neg comparisons overlap).
    if pos.value is None or neg.value is None:
        reason = pos.reason if pos.value is None else neg.reason
        return Metric.undefined(reason or "undefined", n=pos.n + neg.n)
    return Metric.of((pos.value + neg.value) / 2, n=pos.n + neg.n)


def meta_evaluate(rows: Sequence[MetaEvalRow], grader_labels: Sequence[bool | None]) -> MetaEvalReport:
    """The meta-eval of one grader; ``grader_labels[i]`` is its verdict on ``rows[i]``.

    Rows whose grader label is None (no verdict, or CANNOT_ASSESS) are left out of the
    grader's metrics and counted; the physician baseline always uses every row.
    """
    if len(rows) != len(grader_labels):
        raise ValueError(f"{len(rows)} rows but {len(grader_labels)} grader labels")
    graded = [(r, g) for r, g in zip(rows, grader_labels, strict=True) if g is not None]
    model = rater_metrics(
        [g for _, g in graded], [r.binary_labels for r, _ in graded],
        [r.category for r, _ in graded], rater="model",
    )
    by_physician: dict[str, tuple[list[bool], list[list[bool]], list[str]]] = defaultdict(
        lambda: ([], [], [])
    )
    for row in rows:
        for i, physician in enumerate(row.anonymized_physician_ids):
            mine, others, clusters = by_physician[physician]
            mine.append(row.binary_labels[i])
            others.append(row.binary_labels[:i] + row.binary_labels[i + 1 :])
            clusters.append(row.category)
    per_physician = {
        pid: rater_metrics(*lists, rater="physician") for pid, lists in sorted(by_physician.items())
    }
    keys = sorted({k for m in per_physician.values() for k in m})
    mean, median = {}, {}
    for key in keys:
        values = [value for m in per_physician.values()
                  if key in m and (value := m[key].value) is not None]
        reason = "undefined for every physician"
        mean[key] = Metric.of(statistics.fmean(values) if values else None, len(values), reason)
        median[key] = Metric.of(statistics.median(values) if values else None, len(values), reason)
    headline = model[HEADLINE.format(rater="model")]
    return MetaEvalReport(
        n_rows=len(rows),
        n_rows_without_verdict=len(rows) - len(graded),
        headline=headline,
        model=model,
        physician_mean=mean,
        physician_median=median,
        per_physician=per_physician,
    )


def grader_labels_from_verdicts(
    rows: Sequence[MetaEvalRow], verdicts: Iterable[Verdict]
) -> list[bool | None]:
    """Each row's grader label from verdicts keyed by the row's item and criterion ids."""
    by_key: Mapping[tuple[str, str], Verdict] = {(v.item_id, v.criterion_id): v for v in verdicts}
    labels: list[bool | None] = []
    for row in rows:
        v = by_key.get((row.item_id, row.criterion_id))
        labels.append(None if v is None or v.decision in (None, Decision.CANNOT_ASSESS)
                      else v.decision is Decision.MET)
    return labels


def meta_evaluate_by_judge(
    rows: Sequence[MetaEvalRow], verdicts: Iterable[Verdict]
) -> dict[str, MetaEvalReport]:
    """One meta-eval report per judge found in ``verdicts`` (keyed by the rows' ids).

    >>> row = MetaEvalRow(prompt=[{"role": "user", "content": "hi"}], completion="a",
    ...                   rubric="r", binary_labels=[True, False],
    ...                   anonymized_physician_ids=["p", "q"], category="c")
    >>> v = Verdict(item_id=row.item_id, criterion_id=row.criterion_id, decision="MET", judge="j")
    >>> meta_evaluate_by_judge([row], [v])["j"].model["pairwise_model_precision_pos"].value
    0.5
    """
    by_judge: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_judge[v.judge].append(v)
    return {judge: meta_evaluate(rows, grader_labels_from_verdicts(rows, mine))
            for judge, mine in sorted(by_judge.items())}


def meta_eval_items(rows: Iterable[MetaEvalRow]) -> list[Item]:
    """The rows as items to grade: the prompt, the completion as the response, and a rubric of
    one binary criterion (weight 1) per distinct rubric text, with the rows' own ids.

    Grading these items (``assay grade ITEMS --template healthbench``) gives verdicts that
    :func:`grader_labels_from_verdicts` matches back to the rows, from the very prompt
    simple-evals' ``healthbench_meta_eval.py`` sends: its conversation rendering and the bare
    rubric string in ``<<rubric_item>>`` (the criteria carry
    :data:`~assay.grading.prompts.BARE_RUBRIC_ITEM`, so no ``[1]`` points prefix is shown).

    >>> rows = [MetaEvalRow(prompt=[{"role": "user", "content": "hi"}], completion="a",
    ...         rubric=r, binary_labels=[True], anonymized_physician_ids=["p"], category="c")
    ...         for r in ("Says hello.", "Asks how to help.")]
    >>> [item] = meta_eval_items(rows)
    >>> item.id == rows[0].item_id, item.response, [c.text for c in item.rubric.criteria]
    (True, 'a', ['Says hello.', 'Asks how to help.'])
    """
    grouped: dict[str, tuple[MetaEvalRow, dict[str, Criterion]]] = {}
    for row in rows:
        _, criteria = grouped.setdefault(row.item_id, (row, {}))
        if row.criterion_id not in criteria:
            criteria[row.criterion_id] = Criterion(
                id=row.criterion_id, text=row.rubric, weight=1, tags=[row.category],
                metadata=copy.deepcopy(BARE_RUBRIC_ITEM))
    return [
        Item(id=item_id, messages=[{"role": m["role"], "content": m["content"]} for m in first.prompt],
             response=first.completion,
             rubric=Rubric(id=item_id, criteria=list(criteria.values())),
             metadata={"source": "healthbench-meta-eval"})
        for item_id, (first, criteria) in grouped.items()
    ]
