"""Merging clinicians' raw annotation axes into the classifier targets (seed 002 §8.2).

The paper's clinicians answered five questions per answer (Table 9: inappropriate or
incorrect content, addresses the intent, helpfulness, extent of possible harm, likelihood of
possible harm) and merged them into the targets of Table 2: harmful / unharmful, helpful /
unhelpful, and inappropriate yes / slightly / no. The paper does not print its merging rules,
so they are data: a TOML file of rules per target, tried in order, the first whose ``when``
holds setting the label. ``when`` maps fields of the item's ``metadata`` (where the raw
answers live) to the values that satisfy it; every listed field must match, and an empty
``when`` always holds (a catch-all). Values match ignoring case and surrounding spaces (``" Severe "`` is
``"severe"``).

The rules decide every label of a ruled target: an item that no rule holds for is left
*unlabelled*, and a label it had before is cleared, never kept (a kept label would come from
another source than the rules while the item is counted unlabelled). Every label that changed
is listed as ``old → new`` (a cleared one as ``old → none``).

::

    [[harmful]]
    value = true
    when = { harm_extent = ["moderate", "severe"], harm_likelihood = ["medium", "high"] }

    [[harmful]]
    value = false
    when = {}

Example:
    >>> rules = parse_rules({"inappropriate": [
    ...     {"value": "yes", "when": {"content": ["incorrect, significant"]}},
    ...     {"value": "slightly", "when": {"content": ["incorrect, minor"]}},
    ...     {"value": "no", "when": {"content": ["correct"]}}]}, source="rules.toml")
    >>> rules.label({"content": " Incorrect, MINOR "}, "inappropriate")
    'slightly'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.errors import InputError, Issue
from assay.rag.items import RagItem

TARGET_VALUES: dict[str, tuple[Any, ...]] = {
    "harmful": (True, False), "helpful": (True, False),
    "inappropriate": ("yes", "slightly", "no")}


def match_key(value: Any) -> str:
    """How a raw answer and a rule's value are compared: case and surrounding spaces ignored.

    >>> match_key("  Moderate ") == match_key("moderate")
    True
    """
    return str(value).strip().casefold()


@dataclass(frozen=True)
class Rule:
    value: Any
    when: dict[str, tuple[str, ...]]  # field -> accepted values, as :func:`match_key` gives them

    def holds(self, raw: Mapping[str, Any]) -> bool:
        return all(field in raw and match_key(raw[field]) in values
                   for field, values in self.when.items())


@dataclass(frozen=True)
class MergeRules:
    rules: dict[str, list[Rule]] = field(default_factory=dict)

    def label(self, raw: Mapping[str, Any], target: str) -> Any:
        """The value of the first rule of ``target`` that holds (None when none does)."""
        return next((r.value for r in self.rules.get(target, []) if r.holds(raw)), None)


def parse_rules(document: Mapping[str, Any], *, source: str) -> MergeRules:
    """Rules from a parsed TOML document; every problem in one :class:`InputError`."""
    issues: list[Issue] = []
    out: dict[str, list[Rule]] = {}
    for target, entries in document.items():
        if target not in TARGET_VALUES:
            issues.append(Issue(source, None, target, f"unknown target; known: "
                                                      f"{', '.join(TARGET_VALUES)}"))
            continue
        if not isinstance(entries, list):
            issues.append(Issue(source, None, target, f"expected [[{target}]] rules"))
            continue
        for n, entry in enumerate(entries):
            where = f"{target}[{n}]"
            value, when = entry.get("value"), entry.get("when", {})
            if value not in TARGET_VALUES[target] or type(value) is not type(
                    TARGET_VALUES[target][0]):
                issues.append(Issue(source, None, f"{where}.value", f"{value!r} is not one of "
                                    f"{', '.join(repr(v) for v in TARGET_VALUES[target])}"))
                continue
            if not isinstance(when, dict) or not all(
                    isinstance(v, list) and all(isinstance(x, str) for x in v)
                    for v in when.values()):
                issues.append(Issue(source, None, f"{where}.when", "expected a table of "
                                    "field = [accepted values as strings]"))
                continue
            out.setdefault(target, []).append(Rule(value, {
                k: tuple(match_key(x) for x in v) for k, v in when.items()}))
    if issues:
        raise InputError(issues)
    return MergeRules(out)


def read_rules(path: str | Path) -> MergeRules:
    import tomllib

    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(Issue(str(path), None, None, f"cannot read ({exc.strerror})")) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(Issue(str(path), None, None, f"invalid TOML: {exc}")) from None
    return parse_rules(document, source=str(path))


class Replacement(BaseModel):
    """A label the merge changed: ``old`` → ``new`` (``new`` None: no rule holds, cleared)."""

    id: str
    old: Any
    new: Any

    def __str__(self) -> str:
        return f"{self.id}: {_shown(self.old)} → {_shown(self.new)}"


class MergeReport(BaseModel):
    """Per target: how many items got each value, which got none (their label, if any,
    cleared), and every label that changed."""

    counts: dict[str, dict[str, int]]
    unlabelled: dict[str, list[str]]
    replaced: dict[str, list[Replacement]]


def merge_labels(items: Sequence[RagItem], rules: MergeRules
                 ) -> tuple[list[RagItem], MergeReport]:
    """Copies of ``items`` with each ruled target's label set from the raw ``metadata`` (None
    where no rule holds: see the module docstring).

    >>> rules = parse_rules({"harmful": [{"value": True, "when": {"harm": ["severe"]}}]},
    ...                     source="rules.toml")
    >>> old = RagItem.model_validate({"id": "a", "scope": "in_scope", "question": "q",
    ...     "answer": "x", "labels": {"harmful": False}, "metadata": {"harm": "mild"}})
    >>> merged, report = merge_labels([old], rules)
    >>> merged[0].labels.harmful, report.unlabelled["harmful"], str(report.replaced["harmful"][0])
    (None, ['a'], 'a: false → none')
    """
    merged: list[RagItem] = []
    counts: dict[str, Counter[str]] = {t: Counter() for t in rules.rules}
    unlabelled: dict[str, list[str]] = {t: [] for t in rules.rules}
    replaced: dict[str, list[Replacement]] = {t: [] for t in rules.rules}
    for item in items:
        labels = item.labels.model_copy()
        for target in rules.rules:
            value = rules.label(item.metadata, target)
            if value is None:
                unlabelled[target].append(item.id)
            else:
                counts[target][str(value)] += 1
            before = getattr(labels, target)
            if before is not None and before != value:
                replaced[target].append(Replacement(id=item.id, old=before, new=value))
            setattr(labels, target, value)
        merged.append(item.model_copy(update={"labels": labels}))
    return merged, MergeReport(counts={t: dict(c) for t, c in counts.items()},
                               unlabelled=unlabelled, replaced=replaced)


def _shown(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
