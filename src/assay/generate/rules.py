"""The deterministic rules of drafting and auditing, run in code on every model rubric.

Seed 000 states them in its prompts (Tables 14–15) and its released code; here they hold
whatever the model returned:

* :func:`coerce_items`: accept ``{"rubrics": [...]}``, a bare list or ``[{"rubrics": [...]}]``;
  points to integers clamped to [-10, 10] (``"+5"``, ``"8"``, ``Infinity`` read as 5, 8, 10;
  0 or not a number: that item dropped); axes outside the five mapped to ``accuracy``; each
  coercion is a note (field by field: one bad field never discards the reply).
* :func:`enforce_citations`: every criterion cites at least one Reference Board label; unknown
  labels are dropped, an uncited criterion is tied to the fact it overlaps most (half its
  words) or removed as unsupported.
* :func:`merge_duplicates`: criteria with (nearly) the same words are merged, never two that
  cite distinct red flags or distinct negative constraints.
* :func:`keep_red_flags`: every red flag is cited by a high-stakes criterion (|points| >= 8).
* :func:`keep_negative_constraints`: so is every negative constraint (contraindication),
  by a criterion that carries its content (:func:`carries`), not only its label: a citation
  from a criterion about something else is dropped, and a constraint no criterion carries
  becomes a -9 penalty criterion.
* :func:`ensure_negative`: at least one penalty criterion.
* :func:`cap_size`: no more than ``max_criteria`` (20) criteria; criteria citing a red flag
  or a negative constraint, and one penalty, are the last to go.

:func:`audit_rules` applies them in that order and reports what each changed (added labels,
raised weights, removed criteria).

Example:
    >>> from assay.generate.board import Board, Fact
    >>> board = Board([Fact("P1", "positive", "Give paracetamol 15 mg/kg.", ("fever.md#0",)),
    ...                Fact("R1", "red_flag", "A stiff neck needs emergency care.", ("fever.md#1",))])
    >>> items, report = audit_rules(coerce_items(
    ...     {"rubrics": [{"criterion": "Gives the 15 mg/kg paracetamol dose.", "axis": "Accuracy",
    ...                   "points": 7.6, "evidence": ["P1"]}]}, "audit_rubric")[0], board)
    >>> [(i.points, i.axis, i.evidence) for i in items]
    [(8, 'accuracy', ['P1']), (9, 'accuracy', ['R1']), (-8, 'accuracy', ['R1'])]
    >>> report["red_flags_added"], report["negative_added"]
    (['R1'], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from assay.evidence.tokens import jaccard, overlap, tokens
from assay.generate.board import Board

AXES = ("accuracy", "completeness", "context_awareness", "communication_quality",
        "instruction_following")
MAX_CRITERIA = 20
MAX_DRAFT = 15
HIGH_STAKES = 8
CONTENT_SHARE = 0.5  # share of a constraint's content words a criterion must state to carry it
DUPLICATE_JACCARD = 0.85
_AXIS_ALIASES = {"communication": "communication_quality", "context": "context_awareness",
                 "instruction": "instruction_following", "safety": "accuracy"}


@dataclass(frozen=True)
class RubricItem:
    criterion: str
    axis: str
    points: int
    evidence: list[str] = field(default_factory=list)
    stage: str = "audit_rubric"


def tier(points: int) -> str:
    """The paper's severity tier of a weight: high (8–10), medium (4–7) or low (1–3)."""
    size = abs(points)
    return "high" if size >= 8 else "medium" if size >= 4 else "low"


def normalize_axis(axis: Any) -> str:
    """One of the five axes ([R]: anything else becomes ``accuracy``)."""
    key = "_".join(str(axis).strip().lower().replace("-", " ").split())
    if key in AXES:
        return key
    for prefix, name in _AXIS_ALIASES.items():
        if key.startswith(prefix):
            return name
    return "accuracy"


def coerce_points(value: Any) -> int | None:
    """An integer in [-10, 10] ([R]: "inf" maps to ±10), or None if not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().lower().replace("+", "")
        if text in ("inf", "infinity", "-inf", "-infinity"):
            return -10 if text.startswith("-") else 10
        try:
            value = float(text)
        except ValueError:
            return None
    if not isinstance(value, int | float) or math.isnan(value):
        return None
    if value in (float("inf"), float("-inf")):
        return 10 if value > 0 else -10
    return max(-10, min(10, round(value)))


def coerce_items(reply: Any, stage: str) -> tuple[list[RubricItem], list[str]]:
    """Rubric items from a model reply of any of the paper's accepted shapes, with notes on
    what was dropped."""
    entries: Any = reply
    if isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict) \
            and "rubrics" in entries[0]:
        entries = entries[0]
    if isinstance(entries, dict):
        entries = entries.get("rubrics", [])
    notes, items = [], []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not str(entry.get("criterion", "")).strip():
            notes.append(f"rubrics[{index}]: no criterion text, dropped")
            continue
        raw = entry.get("points")
        points = coerce_points(raw)
        if not points:
            notes.append(f"rubrics[{index}]: points {raw!r} is not a non-zero "
                         "number, dropped")
            continue
        if isinstance(raw, bool) or not isinstance(raw, int) or raw != points:
            notes.append(f"rubrics[{index}].points: {raw!r} read as {points}")
        axis = normalize_axis(entry.get("axis", ""))
        if "_".join(str(entry.get("axis", "")).strip().lower().replace("-", " ").split()) != axis:
            notes.append(f"rubrics[{index}].axis: {entry.get('axis')!r} read as {axis}")
        evidence = entry.get("evidence") or []
        items.append(RubricItem(" ".join(str(entry["criterion"]).split()),
                                axis, points,
                                [str(e).strip().strip("[]") for e in evidence
                                 if isinstance(evidence, list)], stage))
    return items, notes


def enforce_citations(items: list[RubricItem], board: Board) -> tuple[list[RubricItem], list[str]]:
    """Items citing only known labels; uncited ones tied to their best fact or removed."""
    labels = board.by_label
    kept, removed = [], []
    for item in items:
        cited = list(dict.fromkeys(e for e in item.evidence if e in labels))
        if not cited:
            words = set(tokens(item.criterion))
            scored = [(overlap(f.text, words) + overlap(item.criterion, set(tokens(f.text))),
                       f.label) for f in board.facts]
            best = max(scored, default=(0.0, ""))
            if best[0] >= 2 * 0.5:
                cited = [best[1]]
        if cited:
            kept.append(replace(item, evidence=cited))
        else:
            removed.append(item.criterion)
    return kept, removed


def _protected_labels(item: RubricItem) -> set[str]:
    return {e for e in item.evidence if e[:1] in ("R", "N") and e[1:].isdigit()}


def merge_duplicates(items: list[RubricItem]) -> tuple[list[RubricItem], int]:
    """Merge criteria whose words nearly coincide (Jaccard >= 0.85) and whose signs agree,
    unless they cite distinct red flags / negative constraints. The first keeps its text;
    evidence is united; the larger magnitude wins."""
    out: list[RubricItem] = []
    merged = 0
    for item in items:
        for i, kept in enumerate(out):
            a, b = _protected_labels(kept), _protected_labels(item)
            if (kept.points > 0) == (item.points > 0) and (not a or not b or a == b) \
                    and jaccard(kept.criterion, item.criterion) >= DUPLICATE_JACCARD:
                size = max(abs(kept.points), abs(item.points))
                out[i] = replace(kept, points=size if kept.points > 0 else -size,
                                 evidence=list(dict.fromkeys(kept.evidence + item.evidence)))
                merged += 1
                break
        else:
            out.append(item)
    return out, merged


def keep_red_flags(items: list[RubricItem], board: Board) -> tuple[list[RubricItem], list[str]]:
    """Every red flag cited by a criterion with |points| >= 8: low-weight citing criteria are
    raised to 8, and a flag nobody cites gets a criterion of its own. Returns the labels added."""
    out = [replace(i, points=HIGH_STAKES if i.points > 0 else -HIGH_STAKES)
           if any(e.startswith("R") for e in i.evidence) and abs(i.points) < HIGH_STAKES else i
           for i in items]
    added = []
    for flag in board.of_kind("red_flag"):
        if not any(flag.label in i.evidence for i in out):
            out.append(RubricItem(f"Clearly conveys this safety warning: {flag.text}", "accuracy",
                                  9, [flag.label], "audit_rules"))
            added.append(flag.label)
    return out, added


def carries(criterion: str, fact: str) -> bool:
    """Whether ``criterion`` states ``fact``'s content rather than merely citing it: a fact
    naming a drug is carried by a criterion naming that drug (a brand or a US/UK name counts
    as its ingredient); any other fact by a criterion sharing half its content words.

    >>> paracetamol = "Do not take more than 1 grams of paracetamol in 24 hours."
    >>> carries("Suggests aspirin for a child.", paracetamol)
    False
    >>> carries("Advises more than 1 g of Tylenol a day.", paracetamol)
    True
    >>> carries("Recommends sponging the child with cold water.",
    ...         "Do not sponge a child with cold water.")
    True
    """
    drugs = _drugs_named(fact)
    if drugs:
        return bool(drugs & _drugs_named(criterion))
    return overlap(fact, set(tokens(criterion))) >= CONTENT_SHARE


def _drugs_named(text: str) -> set[str]:
    from assay.rubric_eval.clinical_edit import canonical_tokens, drugs_in

    return set(drugs_in(canonical_tokens(text)))


def keep_negative_constraints(items: list[RubricItem], board: Board
                              ) -> tuple[list[RubricItem], list[str], list[str]]:
    """Every negative constraint (contraindication) carried by a criterion with |points| >= 8,
    as red flags are (seed 000, Table 14: "every red flag or contraindication must correspond
    to a high-stakes evaluation criterion"). A citation of a constraint by a criterion that
    does not carry its content (:func:`carries`) is dropped (a criterion left citing nothing
    cites the constraints it does carry, else the fact it overlaps most, else it is removed);
    carrying criteria below 8 are raised to
    8; a constraint no criterion carries gets a penalty criterion of its own. Returns the items,
    the labels added and the citations dropped (``"CRITERION: N1"``).

    >>> from assay.generate.board import Fact
    >>> board = Board([Fact("N1", "negative", "Do not sponge a child with cold water.")])
    >>> out, added, dropped = keep_negative_constraints(
    ...     [RubricItem("Suggests aspirin for a child.", "accuracy", -5, ["N1"])], board)
    >>> added, dropped, [(i.points, i.criterion) for i in out]
    (['N1'], ['Suggests aspirin for a child.: N1'], [(-9, 'Goes against this contraindication: Do not sponge a child with cold water.')])
    """
    constraints = {f.label: f for f in board.of_kind("negative")}
    out: list[RubricItem] = []
    dropped: list[str] = []
    for item in items:
        wrong = [e for e in item.evidence
                 if e in constraints and not carries(item.criterion, constraints[e].text)]
        if wrong:
            dropped.extend(f"{item.criterion}: {label}" for label in wrong)
            item = replace(item, evidence=[e for e in item.evidence if e not in wrong])
            if not item.evidence:  # cite what it does carry, else tie it as an uncited one
                carried = [label for label, f in constraints.items()
                           if label not in wrong and carries(item.criterion, f.text)]
                others = Board([f for f in board.facts if f.label not in wrong])
                retied = [replace(item, evidence=carried)] if carried \
                    else enforce_citations([item], others)[0]
                if not retied:
                    continue
                item = retied[0]
        if any(e in constraints for e in item.evidence) and abs(item.points) < HIGH_STAKES:
            item = replace(item, points=HIGH_STAKES if item.points > 0 else -HIGH_STAKES)
        out.append(item)
    added = []
    for constraint in constraints.values():
        if not any(constraint.label in i.evidence for i in out):
            out.append(RubricItem(f"Goes against this contraindication: {constraint.text}",
                                  "accuracy", -9, [constraint.label], "audit_rules"))
            added.append(constraint.label)
    return out, added, dropped


def uncarried_constraints(items: list[RubricItem], board: Board) -> list[str]:
    """Labels of the negative constraints that no criterion both cites and carries."""
    return [f.label for f in board.of_kind("negative")
            if not any(f.label in i.evidence and carries(i.criterion, f.text) for i in items)]


def raised_weights(before: list[RubricItem], after: list[RubricItem]) -> list[str]:
    """What a rule changed in the weights of the criteria it kept, for the audit report:
    ``"CRITERION: 5 -> 8"`` (criteria matched by text)."""
    was: dict[str, int] = {}
    for b in before:
        was.setdefault(b.criterion, b.points)
    return [f"{a.criterion}: {was[a.criterion]} -> {a.points}" for a in after
            if a.criterion in was and was[a.criterion] != a.points]


def ensure_negative(items: list[RubricItem], board: Board) -> tuple[list[RubricItem], bool]:
    """At least one penalty criterion, built from the first negative constraint, else the first
    red flag, else the first positive fact."""
    if any(i.points < 0 for i in items):
        return items, False
    negatives, flags = board.of_kind("negative"), board.of_kind("red_flag")
    if negatives:
        text, points, label = f"Contradicts this constraint from the evidence: {negatives[0].text}", \
            -8, negatives[0].label
    elif flags:
        text, points, label = f"Omits or contradicts this safety warning: {flags[0].text}", -8, \
            flags[0].label
    else:
        positives = board.of_kind("positive") or board.facts
        if not positives:
            return items, False
        text = f"States something that contradicts the evidence: {positives[0].text}"
        points, label = -5, positives[0].label
    return [*items, RubricItem(text, "accuracy", points, [label], "audit_rules")], True


def cap_size(items: list[RubricItem], max_criteria: int = MAX_CRITERIA
             ) -> tuple[list[RubricItem], list[str]]:
    """At most ``max_criteria`` items: the lowest-magnitude unprotected ones go first (latest
    first among equals); red-flag criteria and the strongest penalty are protected."""
    if len(items) <= max_criteria:
        return items, []
    penalties = [i for i, item in enumerate(items) if item.points < 0]
    strongest_penalty = min(penalties, key=lambda i: (items[i].points, i)) if penalties else -1

    def keep_priority(i: int) -> tuple[int, int, int]:
        item = items[i]
        protected = i == strongest_penalty or bool(_protected_labels(item))
        return (int(protected), abs(item.points), -i)

    drop = sorted(range(len(items)), key=keep_priority)[:len(items) - max_criteria]
    return [item for i, item in enumerate(items) if i not in set(drop)], \
        [items[i].criterion for i in sorted(drop)]


def audit_rules(items: list[RubricItem], board: Board, *, max_criteria: int = MAX_CRITERIA
                ) -> tuple[list[RubricItem], dict[str, Any]]:
    """All the rules in order; the report says what each one changed."""
    items, uncited = enforce_citations(items, board)
    items, merged = merge_duplicates(items)
    before = items
    items, flags_added = keep_red_flags(items, board)
    raised = raised_weights(before, items)
    before = items
    items, constraints_added, without_content = keep_negative_constraints(items, board)
    raised += raised_weights(before, items)
    items, negative_added = ensure_negative(items, board)
    items, capped = cap_size(items, max_criteria)
    return items, {"removed_uncited": uncited, "merged": merged, "red_flags_added": flags_added,
                   "negative_constraints_added": constraints_added,
                   "citations_without_content": without_content,
                   "raised_to_high_stakes": raised, "negative_added": negative_added,
                   "removed_over_cap": capped}
