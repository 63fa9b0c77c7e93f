"""Clinical Intent Alignment (seed 000 §4.6): which gold points does a candidate rubric cover?

Two stages, both through :class:`~assay.jobs.StageCaller` (traced, cached, resumable):

1. **Gold atomisation** (``cia_atomize``): each query's physician criteria become atomic
   keypoints; :func:`sanitize_points` cleans the reply (source index in range, polarity valid or
   inferred, duplicates dropped). The authors' fallback, one point per criterion
   (:func:`fallback_points`), is taken when the model *answered* without usable points: it
   refused, its reply holds no usable point, or its reply still does not parse after the
   re-asks and the job's final pass (a deterministic answer: at temperature 0 it would not
   parse on a resume either, and the authors' code falls back after its retries too). The
   fallback and its kind are recorded with the query's points. A transport fault (timeout,
   429, 5xx, a dropped connection) or the budget never takes it: the query fails and the
   resumed job asks it again, so that a fault never gives gold points a clean run would not.
2. **Verification** (``cia_verify``): per gold point, is it explicitly entailed by any candidate
   criterion? A YES must cite a valid criterion number, else it counts as NO
   (:func:`coverage_decision`).

The verdicts (MET = covered) go to :mod:`assay.metrics.coverage_gold`, which pools CIA with a
Wilson CI and compares two rubric sets (McNemar, z-test): nothing is recomputed here.

Example:
    >>> raw = [{"text": "Advise rest", "source_criterion_index": 9},
    ...        {"text": "advise  REST"}, {"text": "Never give aspirin", "polarity": "?"}]
    >>> gold = [RubricEntry(criterion="Advises rest.", axis="completeness", points=5)]
    >>> [(p.ga_id, p.source_criterion_index, p.polarity) for p in sanitize_points("7", raw, gold)]
    [('7_1', 1, 'positive_requirement'), ('7_2', 1, 'negative_constraint')]
    >>> coverage_decision({"decision": "YES", "support_index": 4}, n_criteria=3)
    (False, None)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.jobs import StageCaller, StageError, messages_of
from assay.rubric import Criterion, Rubric
from assay.rubric_eval import prompts
from assay.rubric_eval.released import RubricEntry
from assay.verdict import Decision, Verdict

POLARITIES = ("positive_requirement", "negative_constraint")
_NEGATIVE_MARKERS = ("do not", "don't", "avoid", "fails to", "must not", "never", "omit")


class AtomicPoint(BaseModel):
    """One gold keypoint: ``ga_id`` = ``{index}_{n}``, its text, and the criterion it came from."""

    model_config = ConfigDict(frozen=True)

    ga_id: str
    text: str
    source_criterion_index: int  # 1-based
    axis: str
    polarity: str
    source_criterion: str = ""


def infer_polarity(text: str, points: float | None) -> str:
    """Negative if the points are negative or the text prohibits ("do not", "avoid", ...)."""
    if points is not None and points < 0:
        return "negative_constraint"
    lowered = text.lower()
    return "negative_constraint" if any(m in lowered for m in _NEGATIVE_MARKERS) \
        else "positive_requirement"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def sanitize_points(index: str, raw: Sequence[Any], gold: Sequence[RubricEntry],
                    notes: list[str] | None = None) -> list[AtomicPoint]:
    """The atomiser's points, cleaned field by field: empty texts dropped, an out-of-range or
    missing source index set to 1, the axis defaulting to the source's, an invalid polarity
    inferred from the text and the source's points, duplicates (case and whitespace ignored)
    dropped. Each change is appended to ``notes`` (``gold_atomic_points[i].FIELD: ...``)."""
    out: list[AtomicPoint] = []
    seen: set[str] = set()
    n = len(gold)
    notes = notes if notes is not None else []
    for i, point in enumerate(raw):
        where = f"gold_atomic_points[{i}]"
        if not isinstance(point, dict):
            notes.append(f"{where}: not an object, dropped")
            continue
        text = str(point.get("text", "")).strip()
        if not text or _norm(text) in seen:
            notes.append(f"{where}: {'empty' if not text else 'a duplicate'}, dropped")
            continue
        seen.add(_norm(text))
        given = point.get("source_criterion_index")
        try:
            source = int(str(given).strip())
        except (TypeError, ValueError):
            source = 0
        if not 1 <= source <= max(1, n):
            source = 1
        if source != given:
            notes.append(f"{where}.source_criterion_index: {given!r} read as {source}")
        entry = gold[source - 1] if n else None
        polarity = str(point.get("polarity") or "").strip()
        if polarity not in POLARITIES:
            polarity = infer_polarity(text, entry.points if entry else None)
            notes.append(f"{where}.polarity: {point.get('polarity')!r} read as {polarity} "
                         "(inferred)")
        axis = str(point.get("axis") or "").strip() or (entry.axis if entry else "") or "unknown"
        out.append(AtomicPoint(ga_id=f"{index}_{len(out) + 1}", text=text,
                               source_criterion_index=source, axis=axis, polarity=polarity,
                               source_criterion=entry.criterion if entry else ""))
    return out


def fallback_points(index: str, gold: Sequence[RubricEntry]) -> list[AtomicPoint]:
    """One point per gold criterion (no atomisation, or the atomiser failed)."""
    return [AtomicPoint(ga_id=f"{index}_{i}", text=e.criterion, source_criterion_index=i,
                        axis=e.axis or "unknown", polarity=infer_polarity(e.criterion, e.points),
                        source_criterion=e.criterion)
            for i, e in enumerate(gold, start=1)]


FALLBACK_KINDS = ("refused", "unreadable", "no_usable_point")
"""Why a query's gold points are the fallback's: the model refused, its reply did not parse
after the re-asks and the final pass, or it parsed with no usable point."""


async def atomize(caller: StageCaller, index: str, gold: Sequence[RubricEntry], *,
                  final: bool = False) -> dict[str, Any]:
    """Gold atomisation of one query: ``{points, fallback: reason | None, fallback_kind}``.

    ``final``: this is the job's final pass (the query's call failed once already), where a
    reply that still does not parse takes the fallback; before it, it fails the query.
    """
    try:
        reply = await caller.ask(prompts.ATOMIZE,
                                 messages_of(None, prompts.atomize_prompt(index, gold)),
                                 prompts.ATOMIZE_SCHEMA, item_id=f"atoms:{index}",
                                 template_version=prompts.VERSION)
    except StageError as exc:
        if exc.refused:
            return _fallback(index, gold, "refused", f"atomiser failed: {exc}")
        if exc.unreadable and final:
            return _fallback(index, gold, "unreadable", (
                f"the atomiser's reply did not parse after the re-asks and a final pass "
                f"({exc.reason}): one point per criterion, the authors' fallback"))
        raise  # a fault (or an unparsed reply before the final pass): the query fails
    coercions: list[str] = []
    points = sanitize_points(index, reply.get("gold_atomic_points") or [], gold, coercions)
    if not points:
        return {**_fallback(index, gold, "no_usable_point",
                            "the atomiser returned no usable point"), "coercions": coercions}
    return {"points": [p.model_dump() for p in points], "fallback": None, "coercions": coercions}


def _fallback(index: str, gold: Sequence[RubricEntry], kind: str, reason: str) -> dict[str, Any]:
    return {"points": [p.model_dump() for p in fallback_points(index, gold)],
            "fallback": reason, "fallback_kind": kind}


def coverage_decision(reply: dict[str, Any], n_criteria: int) -> tuple[bool, int | None]:
    """(covered, supporting criterion number): a YES needs a support index in 1..n."""
    if str(reply.get("decision", "")).strip().upper() != "YES":
        return False, None
    support = reply.get("support_index")
    if isinstance(support, bool) or not isinstance(support, int | float) \
            or int(support) != support or not 1 <= int(support) <= n_criteria:
        return False, None
    return True, int(support)


async def verify_query(
    caller: StageCaller, index: str, points: Sequence[AtomicPoint],
    candidate: Sequence[RubricEntry] | None, *, label: str,
) -> list[dict[str, Any]]:
    """Coverage verdicts (as dicts) of every gold point of one query against ``candidate``.

    A query without a candidate rubric is not scored (the caller leaves it out and reports
    it): it is an error here, never a row of uncovered points.
    """
    if not candidate:
        raise ValueError(f"query {index!r}: no {label} rubric to verify against")
    criteria = [e.criterion for e in candidate]

    async def one(point: AtomicPoint) -> dict[str, Any]:
        reply = await caller.ask(prompts.VERIFY,
                                 messages_of(None, prompts.verify_prompt(criteria, point.text)),
                                 prompts.VERIFY_SCHEMA, item_id=f"{label}:{index}",
                                 template_version=prompts.VERSION)
        covered, support = coverage_decision(reply, len(criteria))
        why = str(reply.get("reason", "")).strip()
        if support is not None:
            why = f"[support {support}: {criteria[support - 1]}] {why}"
        elif str(reply.get("decision", "")).upper() == "YES":
            why = f"[YES without a valid support index: counted as NO] {why}"
        return Verdict(item_id=index, criterion_id=point.ga_id,
                       decision=Decision.MET if covered else Decision.UNMET,
                       judge=caller.judge.id, explanation=why).model_dump(mode="json")

    return list(await asyncio.gather(*(one(p) for p in points)))


def gold_rubrics(points: dict[str, list[AtomicPoint]]):
    """The gold points as per-query rubrics (criterion id = ``ga_id``) for the coverage metrics."""
    from assay.metrics.sources import Rubrics

    return Rubrics(per_item={index: Rubric(id=f"gold-{index}", criteria=[
        Criterion(id=p.ga_id, text=p.text, weight=1, axis=p.axis, tags=[p.polarity])
        for p in pts]) for index, pts in points.items() if pts})
