"""Router evaluation against expert selections (RubricsTree §5.5, Tables 5-6).

Each (query, leaf) pair of the catalogue is one binary decision, the expert's being the truth.
Per query: precision, recall, F1, exact match (the router chose exactly the expert's set) and
accuracy over every leaf of the catalogue. Pooled: the same counts summed over queries (micro
averages, as the paper's "Average" column is), plus the mean of per-query values (macro) and
the exact-match rate. The same pooled figures are given per branch (leaves under each node at
``branch_level`` of the tree) and per scenario (when the expert file names one).

Conventions: a query where both sets are empty has precision = recall = F1 = 1; with nothing
chosen but something expected, precision is undefined (None) and recall = F1 = 0.

Example:
    >>> ev = evaluate_routing({"q": {"a", "b"}}, {"q": {"a", "c"}}, universe=["a", "b", "c", "d"])
    >>> q = ev.queries["q"]
    >>> q.precision, q.recall, q.f1, q.exact_match, q.accuracy
    (0.5, 0.5, 0.5, False, 0.5)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InputError, Issue


@dataclass
class Counts:
    """Confusion counts of binary (query, leaf) decisions."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    queries: int = 0
    exact: int = 0

    def add(self, chosen: set[str], gold: set[str], universe: Iterable[str]) -> None:
        universe = set(universe)
        chosen, gold = chosen & universe, gold & universe
        self.tp += len(chosen & gold)
        self.fp += len(chosen - gold)
        self.fn += len(gold - chosen)
        self.tn += len(universe - chosen - gold)
        self.queries += 1
        self.exact += chosen == gold

    @property
    def precision(self) -> float | None:
        if self.tp + self.fp == 0:
            return 1.0 if self.fn == 0 else None
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        return 1.0 if self.tp + self.fn == 0 else self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        total = 2 * self.tp + self.fp + self.fn
        return 1.0 if total == 0 else 2 * self.tp / total

    @property
    def accuracy(self) -> float | None:
        n = self.tp + self.fp + self.fn + self.tn
        return (self.tp + self.tn) / n if n else None

    @property
    def exact_match(self) -> float | None:
        return self.exact / self.queries if self.queries else None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"queries": self.queries, "decisions": self.tp + self.fp + self.fn + self.tn,
                "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": self.precision, "recall": self.recall, "f1": self.f1,
                "accuracy": self.accuracy, "exact_match": self.exact_match}


@dataclass(frozen=True)
class QueryScore:
    precision: float | None
    recall: float
    f1: float
    exact_match: bool
    accuracy: float | None
    missed: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass
class RouteEvaluation:
    queries: dict[str, QueryScore] = field(default_factory=dict)
    pooled: Counts = field(default_factory=Counts)
    by_branch: dict[str, Counts] = field(default_factory=dict)
    by_scenario: dict[str, Counts] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # expert queries the router never routed

    def macro(self) -> dict[str, float | None]:
        """Means of the per-query values (precision over the queries where it is defined)."""
        scores = list(self.queries.values())
        if not scores:
            return {"precision": None, "recall": None, "f1": None, "exact_match": None,
                    "accuracy": None}
        precisions = [s.precision for s in scores if s.precision is not None]
        accuracies = [s.accuracy for s in scores if s.accuracy is not None]
        return {"precision": sum(precisions) / len(precisions) if precisions else None,
                "recall": sum(s.recall for s in scores) / len(scores),
                "f1": sum(s.f1 for s in scores) / len(scores),
                "exact_match": sum(s.exact_match for s in scores) / len(scores),
                "accuracy": sum(accuracies) / len(accuracies) if accuracies else None}

    def to_dict(self) -> dict:
        return {"pooled": self.pooled.as_dict(), "macro": self.macro(),
                "by_branch": {k: v.as_dict() for k, v in self.by_branch.items()},
                "by_scenario": {k: v.as_dict() for k, v in self.by_scenario.items()},
                "queries": {k: vars(v) | {"missed": list(v.missed), "extra": list(v.extra)}
                            for k, v in self.queries.items()},
                "missing": self.missing}


def evaluate_routing(
    predicted: Mapping[str, set[str]], expert: Mapping[str, set[str]], *, universe: list[str],
    branch_of: Mapping[str, str] | None = None, scenario_of: Mapping[str, str] | None = None,
) -> RouteEvaluation:
    """Score routed selections against expert ones (see the module docstring)."""
    out = RouteEvaluation()
    branch_of = branch_of or {}
    branches: dict[str, list[str]] = {}
    for leaf in universe:
        if leaf in branch_of:
            branches.setdefault(branch_of[leaf], []).append(leaf)
    for query, gold in expert.items():
        if query not in predicted:
            out.missing.append(query)
            continue
        chosen = set(predicted[query])
        one = Counts()
        one.add(chosen, set(gold), universe)
        out.pooled.add(chosen, set(gold), universe)
        out.queries[query] = QueryScore(
            one.precision, one.recall, one.f1, bool(one.exact), one.accuracy,
            tuple(sorted(set(gold) - chosen)), tuple(sorted(chosen - set(gold) & set(universe))))
        for branch, leaves in branches.items():
            out.by_branch.setdefault(branch, Counts()).add(chosen, set(gold), leaves)
        if scenario_of and query in scenario_of:
            out.by_scenario.setdefault(scenario_of[query], Counts()).add(chosen, set(gold),
                                                                         universe)
    return out


class ExpertSelection(BaseModel):
    """One line of an expert-selection file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    selected: list[str]
    scenario: str | None = None


def read_expert_selections(path: str | Path, known: set[str] | None = None
                           ) -> tuple[dict[str, set[str]], dict[str, str]]:
    """``{id: selected leaves}`` and ``{id: scenario}`` from JSONL; errors name line and field."""
    from assay.io.jsonl import iter_models

    issues: list[Issue] = []
    selections, scenarios = {}, {}
    for line, row in iter_models(path, ExpertSelection, issues):
        if row.id in selections:
            issues.append(Issue(str(path), line, "id", f"duplicate query id {row.id!r}"))
            continue
        unknown = [s for s in row.selected if known is not None and s not in known]
        if unknown:
            issues.append(Issue(str(path), line, "selected",
                                f"unknown leaf id(s) {', '.join(unknown)}"))
            continue
        selections[row.id] = set(row.selected)
        if row.scenario:
            scenarios[row.id] = row.scenario
    if issues:
        raise InputError(issues)
    return selections, scenarios
