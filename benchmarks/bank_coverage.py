"""Does a built bank cover the paper's 29 Health-SCORE criteria better than the most frequent
criteria of the same pool? One-to-one, on HealthBench development conversations.

Run from the repository root::

    .venv/bin/python benchmarks/bank_coverage.py
    .venv/bin/python benchmarks/bank_coverage.py --data other.jsonl --thresholds 0.6 0.7

Data: ``../shared/data/healthbench/dev.jsonl`` when present (60 conversations), else the copy
under tests/data. Embeddings: the bundled all-MiniLM-L6-v2, on the CPU, each text embedded once.

For each builder configuration the table gives the bank's size, the kept clusters that mix
desirable and undesirable rubric items (target 0), and the number of the 29 reference criteria
matched one-to-one (:mod:`assay.bank.coverage`) by the bank and by the same number of most
frequent source criteria, at each cosine threshold. Target: bank > baseline at the default
threshold (0.7) with 0 mixed-polarity clusters kept.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "healthbench" / "dev.jsonl"
FIXTURE = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"

CONFIGS = {
    "defaults (min 2 items, 2 conversations)": {},
    "stricter (min 3 items, 3 conversations)": {"min_size": 3, "min_prompts": 3},
    "theme health_data_tasks only (defaults)": {"theme": "health_data_tasks"},
}


class CachedEmbedder:
    """Each distinct text embedded once across every configuration."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = inner.model_id
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.encode(missing)))
        return np.array([self.cache[t] for t in texts], dtype=np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED if SHARED.exists() else FIXTURE)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.6, 0.65, 0.7])
    parser.add_argument("--max-criteria", type=int, default=40)
    args = parser.parse_args(argv)

    from assay.bank import BankConfig, build_bank, load_health_score
    from assay.bank.coverage import DEFAULT_THRESHOLD, bank_coverage
    from assay.embeddings import load_embedder

    started = time.perf_counter()
    embedder = CachedEmbedder(load_embedder())
    reference = load_health_score()
    print(f"data: {args.data}; reference: {reference.id} {reference.version} "
          f"({len(reference.criteria)} criteria)\n")
    head = " | ".join(f"bank / freq @{t:g}" for t in args.thresholds)
    print(f"| configuration | sources | criteria | mixed kept | {head} |")
    print("|---|---:|---:|---:|" + "---:|" * len(args.thresholds))
    met = True
    for name, overrides in CONFIGS.items():
        config = BankConfig(max_criteria=args.max_criteria, **overrides)
        build = build_bank([args.data], config, embedder=embedder)
        sources = _sources(args.data, config)
        cells = []
        for threshold in args.thresholds:
            cov = bank_coverage(build.bank, sources, reference, embedder, threshold=threshold)
            cells.append(f"{cov.bank.matched} / {cov.most_frequent.matched}")
            if name.startswith("defaults") and threshold == DEFAULT_THRESHOLD:
                met = cov.bank.matched > cov.most_frequent.matched and not build.mixed_polarity_kept
        print(f"| {name} | {build.n_sources} | {len(build.bank.criteria)} | "
              f"{build.mixed_polarity_kept} | " + " | ".join(cells) + " |")
    print(f"\ntarget (defaults, @{DEFAULT_THRESHOLD:g}: bank > most frequent, 0 mixed kept): "
          f"{'met' if met else 'NOT met'}; {time.perf_counter() - started:.0f} s")
    return 0 if met else 1


def _sources(path: Path, config):
    from assay.bank.builder import split_by_sign
    from assay.bank.sources import read_source_criteria

    return split_by_sign(read_source_criteria([path], theme=config.theme))


if __name__ == "__main__":
    sys.exit(main())
