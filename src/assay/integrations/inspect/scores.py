"""What an Inspect ``Score`` carries of an Assay grade: per-criterion verdicts and explanations.

The scorer (:mod:`.scorer`) and the log export (:mod:`.logs`) write the same metadata, so a
sample reads the same in ``inspect view`` whether it was scored live or exported from a run:

* ``criteria``: one entry per criterion, in the rubric's order: ``id``, ``text``, ``weight``,
  ``tags``, the final ``verdict`` (``MET``, ``UNMET``, ``CANNOT_ASSESS`` or a chosen option;
  None when no judge answered), its ``explanation``, the judges' ``agreement`` and every
  judge's vote (``votes``: ``judge``, ``verdict``, ``explanation``);
* ``example_metrics``: what :func:`~.metrics.healthbench_clipped` aggregates;
* ``item_id``, ``rubric_id``, ``formula`` and ``raw`` (the formula's raw points).

Example:
    >>> from assay.grading.aggregate import Aggregated
    >>> from assay.rubric import Rubric
    >>> from assay.verdict import Verdict
    >>> rubric = Rubric(id="r", criteria=[{"id": "doc", "text": "Suggests a doctor."}])
    >>> met = Verdict(item_id="q", criterion_id="doc", decision="MET", explanation="It does.")
    >>> [row["verdict"] for row in criterion_rows(rubric, {"doc": Aggregated(met, None)})]
    ['MET']
    >>> explanation(rubric, {"doc": Aggregated(met, None)})
    '[MET] (+1) Suggests a doctor.: It does.'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.grading.aggregate import Aggregated
from assay.rubric import Rubric
from assay.verdict import Verdict


def answer_of(verdict: Verdict | None) -> str | None:
    """A verdict's answer as text: its decision or its option; None without a verdict."""
    if verdict is None:
        return None
    return verdict.decision.value if verdict.decision is not None else verdict.option


def criterion_rows(rubric: Rubric, finals: Mapping[str, Aggregated]) -> list[dict[str, Any]]:
    """One row per criterion of ``rubric``: its final verdict, explanation and votes."""
    rows = []
    for criterion in rubric.criteria:
        final = finals.get(criterion.id)
        verdict = final.verdict if final is not None else None
        rows.append({
            "id": criterion.id, "text": criterion.text, "weight": criterion.weight,
            "tags": list(criterion.tags), "verdict": answer_of(verdict),
            "explanation": verdict.explanation if verdict is not None else None,
            "agreement": final.agreement if final is not None else None,
            "votes": [{"judge": v.judge, "verdict": answer_of(v.verdict),
                       "explanation": v.verdict.explanation}
                      for v in (final.votes if final is not None else ())],
        })
    return rows


def explanation(rubric: Rubric, finals: Mapping[str, Aggregated]) -> str:
    """One line per criterion: its verdict, weight, text and the judge's explanation."""
    lines = []
    for row in criterion_rows(rubric, finals):
        why = f": {row['explanation']}" if row["explanation"] else ""
        lines.append(f"[{row['verdict'] or 'NO VERDICT'}] ({row['weight']:+g}) {row['text']}{why}")
    return "\n".join(lines)
