"""Building a criterion bank from many instance rubrics (the paper's §2.2).

1. **Sources**: every distinct criterion text of the input files (:mod:`assay.bank.sources`),
   optionally only the items of one ``theme`` (the paper: ``health_data_tasks``). A text seen
   with both signs of points becomes one source per sign. HealthBench's consensus criteria
   (``level:cluster``: "Step 1: Does the response ...") are left out (``drop_templates``):
   they are HealthBench's own templates, not criteria distilled from instance rubrics.
2. **Embed** them with the local sentence-embedding model (:mod:`assay.embeddings`): each
   without its instance details (``generalise``: its first sentence without justification,
   asides and lists of examples; :mod:`assay.bank.generalise`), so that criteria checking one
   kind of thing in different conversations land together.
3. **Cluster within a sign** with scikit-learn (:mod:`assay.bank.cluster`; every parameter
   exposed): desirable (points > 0) and undesirable (points < 0) criteria are clustered
   separately, so no cluster mixes a behaviour with its negation.
4. **Merge semantic duplicates**: two clusters of one sign whose medoids reach
   ``dedup_similarity`` (cosine) become one cluster (its medoid recomputed over the union), so
   six ways of saying "seek urgent care" pool their conversations instead of taking six places.
5. **Outliers**: clusters with fewer than ``min_size`` rubric items are reported, not kept; so
   are clusters drawn from fewer than ``min_prompts`` conversations ("specific": a general
   criterion must recur across conversations, not restate one conversation's rubric). A
   criterion repeated verbatim across conversations counts every occurrence.
6. **Representative** per cluster, one general criterion: the medoid without its instance
   details, written with its subject ("The response advises ..."; ``generalise``, the
   default), the medoid as it is (``generalise=False``), or one criterion distilled by an LLM
   through the judges layer (:class:`assay.bank.distil.LLMDistiller`).
7. **Polarity**: the cluster's sign, or the distiller's answer; the cluster's share of negative
   points is in the report. Representatives whose texts are identical, or (distilled) reach
   ``dedup_similarity`` within one polarity, are merged.
8. Keep the ``max_criteria`` clusters spanning the most conversations (then the most items),
   with ``generalise`` each weighted by how general its criterion's words are
   (:class:`~assay.bank.generalise.Generality`); write the bank (an Assay rubric file whose metadata records the config) and a report per
   cluster.

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

from assay.bank.cluster import (
    ClusterParams,
    cluster_within_sign,
    medoid,
    merge_duplicate_clusters,
)
from assay.bank.coverage import DEFAULT_THRESHOLD, BankCoverage, bank_coverage
from assay.bank.generalise import Generality, as_criterion, is_template, without_instance_details
from assay.bank.report import ClusterReport
from assay.bank.sources import SourceCriterion, read_source_criteria
from assay.errors import ConfigError
from assay.rubric import Criterion, Provenance, Rubric

Distiller = Callable[[str, Sequence[str], Sequence[float]], Awaitable[tuple[str, str]]]


@dataclass(frozen=True)
class BankConfig:
    """What shapes a bank (all of it goes into the bank's metadata)."""

    cluster: ClusterParams = field(default_factory=ClusterParams)
    # A criterion that recurs in two conversations is no longer one conversation's; the cap and
    # the ranking by conversations spanned then prefer the most widespread.
    min_size: int = 2
    min_prompts: int = 2
    max_criteria: int | None = 40
    dedup_similarity: float = 0.9
    theme: str | None = None
    drop_templates: bool = True
    """Leave HealthBench's consensus criteria (``level:cluster``) out before clustering."""
    generalise: bool = True
    """Cluster the criteria without their instance details and write each representative as
    a stand-alone criterion (:mod:`assay.bank.generalise`); False: the medoid verbatim."""
    max_sources: int | None = 20_000
    seed: int = 0
    examples: int = 5
    embedding_model: str | None = None
    bank_id: str = "bank"
    version: str | None = None
    reference: str | None = None
    """A bank to measure coverage against (``health-score`` or a file); None: no measure."""
    coverage_threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.min_size < 1 or self.min_prompts < 1:
            raise ConfigError("min_size and min_prompts must be at least 1")
        if self.max_criteria is not None and self.max_criteria < 1:
            raise ConfigError("max_criteria must be at least 1 (or None for no cap)")
        if not 0 < self.dedup_similarity <= 1:
            raise ConfigError("dedup_similarity must be in (0, 1]")
        if not 0 < self.coverage_threshold <= 1:
            raise ConfigError("coverage_threshold must be in (0, 1]")

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
    coverage: BankCoverage | None = None
    templates_dropped: int = 0
    """Distinct consensus-template criteria left out before clustering."""
    """With ``BankConfig.reference``: the bank's one-to-one coverage of it, and the
    most-frequent-criteria baseline's of the same size."""

    @property
    def mixed_polarity_kept(self) -> int:
        """Kept clusters whose rubric items have both signs of points (0 by construction)."""
        return sum(r.status == "kept" and 0 < r.negative_share < 1 for r in self.reports)

    def report_dict(self) -> dict[str, Any]:
        return {"bank": self.bank.id, "version": self.bank.version,
                "sources": self.n_sources, "occurrences": self.n_occurrences,
                "templates_dropped": self.templates_dropped,
                "mixed_polarity_kept": self.mixed_polarity_kept,
                "coverage": self.coverage.to_dict() if self.coverage else None,
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
    every = split_by_sign(_sources(paths_or_sources, config))
    sources = [s for s in every if not (config.drop_templates and is_template(s))]
    if not sources:
        raise ConfigError(f"every one of the {len(every)} source criteria is a consensus "
                          "template (level:cluster): nothing to cluster (drop_templates=False "
                          "keeps them)")
    if embedder is None:
        from assay.embeddings import load_embedder

        embedder = load_embedder(config.embedding_model)
    texts = [without_instance_details(s.text) if config.generalise else s.text for s in sources]
    vectors = embedder.encode(list(dict.fromkeys(texts)))
    row = {t: i for i, t in enumerate(dict.fromkeys(texts))}
    vectors = vectors[[row[t] for t in texts]]
    counts = np.array([s.count for s in sources], dtype=float)
    negative = np.array([_is_negative(s) for s in sources], dtype=bool)
    raw = cluster_within_sign(vectors, negative, config.cluster)
    labels, pooled = merge_duplicate_clusters(raw, vectors, counts, negative,
                                              config.dedup_similarity)

    drafts = []
    for label in range(int(labels.max()) + 1 if len(labels) else 0):
        members = np.flatnonzero(labels == label)
        centre = medoid(vectors, members, counts[members])
        similarity = vectors[members] @ vectors[centre]
        ranked = members[np.lexsort((members, -np.round(similarity, 6)))]
        drafts.append(_draft(label, ranked, centre, float(similarity.mean()), sources, config,
                             pooled[label], texts))

    kept = [d for d in drafts if _general(d, config)]
    for d in drafts:
        if not _general(d, config):
            d.report.status = "outlier" if d.report.size < config.min_size else "specific"
    # The most general clusters first: those spanning the most conversations (with generalise,
    # weighted by how common across conversations their criterion's words are).
    if config.generalise:
        generality = Generality(sources)
        for d in drafts:
            d.report.generality = generality.of(d.text)
    kept.sort(key=lambda d: (-d.report.prompt_count * d.report.generality,
                             -d.report.occurrences, d.report.cluster))
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
                            "templates_dropped": len(every) - len(sources),
                            "occurrences": int(counts.sum()),
                            "clusters": len(drafts),
                            "representatives": "distilled" if distiller else
                            "generalised" if config.generalise else "medoid"})
    coverage = None
    if config.reference is not None:
        from assay.bank.shipped import load_bank

        # the baseline is the most frequent criteria of the files, templates included
        coverage = bank_coverage(bank, every, load_bank(config.reference), embedder,
                                 threshold=config.coverage_threshold)
    return BankBuild(bank, [d.report for d in drafts], len(sources), int(counts.sum()), coverage,
                     templates_dropped=len(every) - len(sources))


def _general(d: _Draft, config: BankConfig) -> bool:
    return d.report.occurrences >= config.min_size and d.report.prompt_count >= config.min_prompts


def _is_negative(source: SourceCriterion) -> bool:
    return bool(source.points) and all(p < 0 for p in source.points)


def split_by_sign(sources: Sequence[SourceCriterion]) -> list[SourceCriterion]:
    """``sources`` with every text seen under both signs of points split in two: its desirable
    occurrences (points >= 0) and its undesirable ones (points < 0), so that each source has
    one sign.

    >>> mixed = SourceCriterion("Mentions ibuprofen.", [5, -3], ["a", "b"], ["", ""],
    ...                         ["p1", "p2"], ["f", "f"])
    >>> [(s.points, s.prompt_ids) for s in split_by_sign([mixed])]
    [([5], ['p1']), ([-3], ['p2'])]
    """
    out: list[SourceCriterion] = []
    for s in sources:
        signs = [p < 0 for p in s.points]
        if all(signs) or not any(signs):
            out.append(s)
            continue
        for negative in (False, True):
            keep = [i for i, sign in enumerate(signs) if sign == negative]
            out.append(SourceCriterion(
                text=s.text, points=[s.points[i] for i in keep], axes=[s.axes[i] for i in keep],
                levels=[s.levels[i] for i in keep], prompt_ids=[s.prompt_ids[i] for i in keep],
                sources=[s.sources[i] for i in keep]))
    return out


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
           sources: list[SourceCriterion], config: BankConfig, pooled: int,
           texts: list[str]) -> _Draft:
    members = [sources[i] for i in ranked]
    axes = Counter(a for s in members for a in s.axes if a)
    points = [p for s in members for p in s.points]
    # Every member has the cluster's sign (clustered within a sign): the medoid's is theirs.
    polarity = "negative" if _is_negative(sources[centre]) else "positive"
    text = as_criterion(texts[centre]) if config.generalise else sources[centre].text
    report = ClusterReport(
        cluster=label, size=len(members), occurrences=len(points), axes=dict(axes),
        negative_share=round(sum(p < 0 for p in points) / len(points), 4),
        cohesion=round(cohesion, 4), representative=text,
        representative_source="generalised" if config.generalise else "medoid",
        status="pending", polarity=polarity,
        examples=[s.text for s in members[: config.examples]],
        prompt_count=len({p for s in members for p in s.prompt_ids}), pooled=pooled)
    return _Draft(ranked, centre, text, polarity, report)


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
    if all(d.report.representative_source != "distilled" for d in drafts):
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
                  else "cluster sign",
                  "negative_share": r.negative_share, "cohesion": r.cohesion})


def _version(criteria: list[Criterion], config: BankConfig) -> str:
    if config.version:
        return config.version
    digest = hashlib.sha256()
    for c in criteria:
        digest.update(f"{c.id}\x1f{c.text}\x1f{c.weight}\x1e".encode())
    return digest.hexdigest()[:12]
