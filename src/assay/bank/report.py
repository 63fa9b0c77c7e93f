"""The per-cluster report of a bank build: what each cluster holds and what became of it.

One :class:`ClusterReport` per cluster (kept, outlier, merged into another, or over the cap),
with its size, axes, polarity mix, cohesion and the members nearest its medoid, for the manual
quality check the paper describes (§2.2 step 3). :func:`render_markdown` prints it for people;
``asdict`` gives the JSON written next to the bank.

Example:
    >>> r = ClusterReport(cluster=0, size=3, occurrences=5, axes={"accuracy": 5},
    ...                   negative_share=0.0, cohesion=0.81, representative="Mentions dose.",
    ...                   representative_source="medoid", status="kept", criterion_id="bank-01",
    ...                   examples=["Mentions dose.", "States the dose."], prompt_count=4)
    >>> "bank-01" in render_markdown([r])
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.bank.coverage import BankCoverage


@dataclass
class ClusterReport:
    cluster: int
    size: int
    """Distinct criterion texts in the cluster."""
    occurrences: int
    """Rubric items the texts came from (HealthBench repeats consensus criteria)."""
    axes: dict[str, int]
    negative_share: float
    cohesion: float
    """Mean cosine similarity of the members to the medoid."""
    representative: str
    representative_source: str  # generalised | medoid | distilled
    status: str  # kept | outlier | specific | merged | over-cap
    criterion_id: str | None = None
    merged_into: str | None = None
    polarity: str = "positive"
    examples: list[str] = field(default_factory=list)
    prompt_count: int = 0
    pooled: int = 1
    """Clusters of semantic duplicates pooled into this one (1: none merged in)."""
    generality: float = 1.0
    """Share of the representative's words common across conversations (the ranking weight)."""


def render_markdown(reports: Sequence[ClusterReport], *, max_examples: int = 3,
                    coverage: BankCoverage | None = None) -> str:
    """A readable report: the coverage of the reference (when measured), one table row per
    cluster, then the examples of kept clusters."""
    lines = _coverage_lines(coverage) if coverage is not None else []
    lines += [("| cluster | status | criterion | size | items | prompts | axes | negative | "
              "cohesion | generality | representative |"),
             "|---:|---|---|---:|---:|---:|---|---:|---:|---:|---|"]
    for r in reports:
        axes = ", ".join(f"{a} {n}" for a, n in sorted(r.axes.items(), key=lambda kv: -kv[1]))
        status = f"merged into {r.merged_into}" if r.status == "merged" else r.status
        lines.append(f"| {r.cluster} | {status} | {r.criterion_id or ''} | {r.size} | "
                     f"{r.occurrences} | {r.prompt_count} | {axes} | {r.negative_share:.2f} | "
                     f"{r.cohesion:.2f} | {r.generality:.2f} | {_cell(r.representative)} |")
    for r in reports:
        if r.status != "kept":
            continue
        heading = (f"### {r.criterion_id} (cluster {r.cluster}, {r.polarity}, "
                   f"{r.representative_source})")
        lines += ["", heading, "", r.representative, ""]
        lines += [f"- {_cell(e)}" for e in r.examples[:max_examples]]
    return "\n".join(lines) + "\n"


def _coverage_lines(coverage: BankCoverage) -> list[str]:
    bank, base = coverage.bank, coverage.most_frequent
    title = (f"One-to-one coverage of {coverage.reference} ({bank.reference_size} criteria, "
             f"cosine >= {bank.threshold:g}):")
    rows = [(f"this bank ({bank.candidates})", bank),
            (f"the {base.candidates} most frequent source criteria", base)]
    return [title, "", "| criteria | matched | share | mean similarity of matches |",
            "|---|---:|---:|---:|",
            *(f"| {name} | {c.matched} | {c.share:.2f} | {c.mean_similarity:.2f} |"
              for name, c in rows), ""]


def _cell(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
