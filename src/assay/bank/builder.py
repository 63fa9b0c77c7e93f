"""Building a criterion bank from many instance rubrics (the paper's §2.2).

1. **Sources**: every distinct criterion text of the input files (:mod:`assay.bank.sources`).
2. **Embed** them with the local sentence-embedding model (:mod:`assay.embeddings`).
3. **Cluster** with scikit-learn (:mod:`assay.bank.cluster`; every parameter exposed).
4. **Outliers**: clusters with fewer than ``min_size`` distinct texts are reported, not kept;
   so are clusters drawn from fewer than ``min_prompts`` conversations ("specific": a general
   criterion must recur across conversations, not restate one conversation's rubric).
5. **Representative** per cluster: the medoid (default), or one criterion distilled by an LLM
   through the judges layer (:class:`assay.bank.distil.LLMDistiller`).
6. **Polarity**: the medoid's own sign (its points, by majority over its occurrences), or the
   distiller's answer; the cluster's share of negative points is in the report.
7. **De-duplicate**: a representative whose cosine similarity to an earlier kept one (same
   polarity) reaches ``dedup_similarity`` is merged into it; identical texts always are.
8. Keep the ``max_criteria`` clusters spanning the most conversations (then the largest); write the bank (an Assay rubric file whose
   metadata records the config) and a report per cluster.

Deterministic: embeddings on the CPU, deterministic clustering and canonical cluster numbers;
the only random step (sub-sampling above ``max_sources`` texts) is seeded by ``seed``.

Example::

    build = build_bank(["tests/data/healthbench/dev.jsonl"], BankConfig(seed=0))
    build.bank.criteria[0].text, build.reports[0].size
    write_rubric(build.bank, "bank.yaml")
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.bank.cluster import ClusterParams, cluster_embeddings, medoid
from assay.bank.report import ClusterReport
from assay.bank.sources import SourceCriterion, read_source_criteria
from assay.errors import ConfigError
from assay.rubric import Criterion, Provenance, Rubric

Distiller = Callable[[str, Sequence[str], Sequence[float]], Awaitable[tuple[str, str]]]


@dataclass(frozen=True)
class BankConfig:
    """What shapes a bank (all of it goes into the bank's metadata)."""

    cluster: ClusterParams = field(default_factory=ClusterParams)
    min_size: int = 3
    min_prompts: int = 3
    max_criteria: int | None = 40
    dedup_similarity: float = 0.9
    theme: str | None = None
    max_sources: int | None = 20_000
    seed: int = 0
    examples: int = 5
    embedding_model: str | None = None
    bank_id: str = "bank"
    version: str | None = None

    def __post_init__(self) -> None:
        if self.min_size < 1 or self.min_prompts < 1:
            raise ConfigError("min_size and min_prompts must be at least 1")
        if self.max_criteria is not None and self.max_criteria < 1:
            raise ConfigError("max_criteria must be at least 1 (or None for no cap)")
        if not 0 < self.dedup_similarity <= 1:
            raise ConfigError("dedup_similarity must be in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["cluster"] = self.cluster.to_dict()
        return out


@dataclass
class BankBuild:
    bank: Rubric
    reports: list[ClusterReport]
    n_sources: int
    n_occurrences: int

    def report_dict(self) -> dict[str, Any]:
        return {"bank": self.bank.id, "version": self.bank.version,
                "sources": self.n_sources, "occurrences": self.n_occurrences,
                "clusters": [asdict(r) for r in self.reports]}


def build_bank(
    paths_or_sources: Sequence[str | Path] | Sequence[SourceCriterion],
    config: BankConfig | None = None,
    *,
    embedder: Any = None,
    distiller: Distiller | None = None,
) -> BankBuild:
    """Build a bank (blocking; see :func:`abuild_bank`)."""
    from assay.judges.sync import run_sync

    return run_sync(abuild_bank(paths_or_sources, config, embedder=embedder, distiller=distiller))


async def abuild_bank(
    paths_or_sources: Sequence[str | Path] | Sequence[SourceCriterion],
    config: BankConfig | None = None,
    *,
    embedder: Any = None,
    distiller: Distiller | None = None,
) -> BankBuild:
    """Build a bank from files (HealthBench/item JSONL, rubric files) or source criteria."""
    config = config or BankConfig()
    sources = _sources(paths_or_sources, config)
    if embedder is None:
        from assay.embeddings import load_embedder

        embedder = load_embedder(config.embedding_model)
    vectors = embedder.encode([s.text for s in sources])
    labels = cluster_embeddings(vectors, config.cluster)
    counts = np.array([s.count for s in sources], dtype=float)

    drafts = []
    for label in range(int(labels.max()) + 1 if len(labels) else 0):
        members = np.flatnonzero(labels == label)
        centre = medoid(vectors, members, counts[members])
        similarity = vectors[members] @ vectors[centre]
        ranked = members[np.lexsort((members, -np.round(similarity, 6)))]
        drafts.append(_draft(label, ranked, centre, float(similarity.mean()), sources, config))

    kept = [d for d in drafts if _general(d, config)]
    for d in drafts:
        if not _general(d, config):
            d.report.status = "outlier" if d.report.size < config.min_size else "specific"
    # The most general clusters first: those spanning the most conversations.
    kept.sort(key=lambda d: (-d.report.prompt_count, -d.report.size, d.report.cluster))
    if distiller is not None:
        await _distil(kept, sources, distiller)
    rep_vectors = _representative_vectors(kept, vectors, embedder)
    final = _deduplicate(kept, rep_vectors, config.dedup_similarity)
    if config.max_criteria is not None:
        for d in final[config.max_criteria:]:
            d.report.status = "over-cap"
        final = final[: config.max_criteria]
    criteria = []
    for rank, d in enumerate(final, start=1):
        d.report.criterion_id = f"{config.bank_id}-{rank:02d}"
        d.report.status = "kept"
        criteria.append(_criterion(d, sources))
    for d in drafts:
        if d.merged_into is not None:
            d.report.merged_into = d.merged_into.report.criterion_id
    if not criteria:
        raise ConfigError(f"no cluster has {config.min_size}+ criteria from {config.min_prompts}+ "
                          f"conversations: lower min_size/min_prompts or raise the distance "
                          f"threshold ({len(sources)} source criteria, {len(drafts)} clusters)")
    if not any(c.weight > 0 for c in criteria):
        raise ConfigError("every kept cluster describes an undesirable behaviour: a bank needs at "
                          "least one desirable criterion (lower min_size/min_prompts)")
    bank = Rubric(id=config.bank_id, criteria=criteria, version=_version(criteria, config),
                  metadata={"builder": "assay.bank", "config": config.to_dict(),
                            "embedding_model": getattr(embedder, "model_id", "custom"),
                            "sources": len(sources),
                            "occurrences": int(counts.sum()),
                            "clusters": len(drafts),
                            "representatives": "distilled" if distiller else "medoid"})
    return BankBuild(bank, [d.report for d in drafts], len(sources), int(counts.sum()))


def _general(d: _Draft, config: BankConfig) -> bool:
    return d.report.size >= config.min_size and d.report.prompt_count >= config.min_prompts


def _sources(paths_or_sources, config: BankConfig) -> list[SourceCriterion]:
    items = list(paths_or_sources)
    if items and all(isinstance(s, SourceCriterion) for s in items):
        sources = items
    else:
        sources = read_source_criteria([Path(p) for p in items], theme=config.theme)
    if config.max_sources is not None and len(sources) > config.max_sources:
        rng = np.random.default_rng(config.seed)
        keep = np.sort(rng.choice(len(sources), size=config.max_sources, replace=False))
        sources = [sources[i] for i in keep]
    return sources


@dataclass
class _Draft:
    members: np.ndarray  # nearest to the medoid first
    centre: int
    text: str
    polarity: str
    report: ClusterReport
    merged_into: _Draft | None = None


def _draft(label: int, ranked: np.ndarray, centre: int, cohesion: float,
           sources: list[SourceCriterion], config: BankConfig) -> _Draft:
    members = [sources[i] for i in ranked]
    axes = Counter(a for s in members for a in s.axes if a)
    points = [p for s in members for p in s.points]
    centre_points = sources[centre].points
    polarity = "negative" if sum(p < 0 for p in centre_points) * 2 > len(centre_points) else "positive"
    report = ClusterReport(
        cluster=label, size=len(members), occurrences=len(points), axes=dict(axes),
        negative_share=round(sum(p < 0 for p in points) / len(points), 4),
        cohesion=round(cohesion, 4), representative=sources[centre].text,
        representative_source="medoid", status="pending", polarity=polarity,
        examples=[s.text for s in members[: config.examples]],
        prompt_count=len({p for s in members for p in s.prompt_ids}))
    return _Draft(ranked, centre, sources[centre].text, polarity, report)


async def _distil(drafts: list[_Draft], sources: list[SourceCriterion], distiller: Distiller) -> None:
    import asyncio

    async def one(d: _Draft) -> None:
        texts = [sources[i].text for i in d.members]
        points = [_typical_points(sources[i]) for i in d.members]
        d.text, d.polarity = await distiller(f"cluster-{d.report.cluster}", texts, points)
        d.report.representative, d.report.representative_source = d.text, "distilled"
        d.report.polarity = d.polarity

    # The judge's own limits bound the calls in flight (no concurrency loop of our own).
    await asyncio.gather(*(one(d) for d in drafts))


def _typical_points(source: SourceCriterion) -> float:
    return Counter(source.points).most_common(1)[0][0]


def _representative_vectors(drafts: list[_Draft], vectors: np.ndarray, embedder: Any) -> np.ndarray:
    if not drafts:
        return np.zeros((0, vectors.shape[1]), dtype=np.float32)
    if all(d.report.representative_source == "medoid" for d in drafts):
        return vectors[[d.centre for d in drafts]]
    return embedder.encode([d.text for d in drafts])


def _deduplicate(drafts: list[_Draft], rep_vectors: np.ndarray, threshold: float) -> list[_Draft]:
    kept: list[int] = []
    seen_texts: dict[str, int] = {}
    for i, d in enumerate(drafts):
        key = " ".join(d.text.lower().split())
        target = seen_texts.get(key)
        if target is None:
            for j in kept:
                if (drafts[j].polarity == d.polarity
                        and float(rep_vectors[i] @ rep_vectors[j]) >= threshold - 1e-6):
                    target = j
                    break
        if target is None:
            kept.append(i)
            seen_texts[key] = i
        else:
            d.merged_into = drafts[target]
            d.report.status = "merged"
    return [drafts[i] for i in kept]


def _criterion(d: _Draft, sources: list[SourceCriterion]) -> Criterion:
    r = d.report
    axis = max(r.axes.items(), key=lambda kv: (kv[1], kv[0]))[0] if r.axes else None
    evidence = sorted({p for i in d.members for p in sources[i].prompt_ids})[:10]
    return Criterion(
        id=r.criterion_id, text=d.text, weight=-1.0 if d.polarity == "negative" else 1.0,
        axis=axis,
        provenance=Provenance(source="bank", evidence=evidence,
                              note=f"cluster {r.cluster}: {r.representative_source} of "
                                   f"{r.size} criteria"),
        metadata={"cluster": r.cluster, "size": r.size, "occurrences": r.occurrences,
                  "axes": r.axes, "polarity": d.polarity,
                  "polarity_source": "llm" if r.representative_source == "distilled"
                  else "medoid points",
                  "negative_share": r.negative_share, "cohesion": r.cohesion})


def _version(criteria: list[Criterion], config: BankConfig) -> str:
    if config.version:
        return config.version
    digest = hashlib.sha256()
    for c in criteria:
        digest.update(f"{c.id}\x1f{c.text}\x1f{c.weight}\x1e".encode())
    return digest.hexdigest()[:12]
