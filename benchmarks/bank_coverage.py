"""Does a built bank cover the paper's 29 Health-SCORE criteria better than the most frequent
criteria of the same pool? One-to-one, on HealthBench development conversations; and how long
``assay bank build`` takes on 440 conversations.

Run from the repository root::

    .venv/bin/python benchmarks/bank_coverage.py
    .venv/bin/python benchmarks/bank_coverage.py --data other.jsonl --thresholds 0.6 0.7
    .venv/bin/python benchmarks/bank_coverage.py --time-rows 440   # also time a 440-row build

Data: ``../shared/data/healthbench/dev.jsonl`` when present (60 conversations), else the copy
under tests/data. Embeddings: the bundled all-MiniLM-L6-v2, on the CPU, each text embedded once.

For each builder configuration the table gives the bank's size, the kept clusters that mix
desirable and undesirable rubric items (target 0), and the number of the 29 reference criteria
matched one-to-one (:mod:`assay.bank.coverage`) by the bank and by the same number of most
frequent criteria of the files (consensus templates included), at each cosine threshold.
Target (issue 43): with the defaults, at cosine 0.5, the bank covers at least 20 of the 29 and
at least 4 more than the most frequent criteria, with 0 mixed-polarity clusters kept.

``--time-rows N`` writes N conversations made from the dev rows (copies get their example
criteria reworded by a copy number, so every criterion is embedded as in a real file of N
conversations; consensus criteria stay shared, as in HealthBench) and times ``assay bank
build`` on them in a fresh process: wall, CPU and the load average beside it.
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
    "defaults (templates out, generalised, distance 0.45)": {},
    "distance 0.4": {"cluster": 0.4},
    "distance 0.5": {"cluster": 0.5},
    "verbatim medoids, templates kept, distance 0.15 (before)":
        {"generalise": False, "drop_templates": False, "cluster": 0.15},
    "stricter (min 3 items, 3 conversations)": {"min_size": 3, "min_prompts": 3},
    "theme health_data_tasks only (defaults)": {"theme": "health_data_tasks"},
}
TARGET_THRESHOLD, TARGET_MATCHED, TARGET_MARGIN = 0.5, 20, 4


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
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 0.6, 0.7])
    parser.add_argument("--max-criteria", type=int, default=40)
    parser.add_argument("--time-rows", type=int, default=0, help="Also time assay bank build "
                        "on this many conversations made from the dev rows.")
    args = parser.parse_args(argv)
    if args.time_rows:
        time_build(args.data, args.time_rows)

    from assay.bank import BankConfig, build_bank, load_health_score
    from assay.bank.cluster import ClusterParams
    from assay.bank.coverage import bank_coverage
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
        overrides = dict(overrides)
        if "cluster" in overrides:
            overrides["cluster"] = ClusterParams(distance_threshold=overrides["cluster"])
        config = BankConfig(max_criteria=args.max_criteria, **overrides)
        build = build_bank([args.data], config, embedder=embedder)
        sources = _sources(args.data, config)
        cells = []
        for threshold in args.thresholds:
            cov = bank_coverage(build.bank, sources, reference, embedder, threshold=threshold)
            cells.append(f"{cov.bank.matched} / {cov.most_frequent.matched}")
            if name.startswith("defaults") and threshold == TARGET_THRESHOLD:
                met = (cov.bank.matched >= TARGET_MATCHED and not build.mixed_polarity_kept
                       and cov.bank.matched >= cov.most_frequent.matched + TARGET_MARGIN)
        print(f"| {name} | {build.n_sources} | {len(build.bank.criteria)} | "
              f"{build.mixed_polarity_kept} | " + " | ".join(cells) + " |")
    print(f"\ntarget (defaults, @{TARGET_THRESHOLD:g}: bank >= {TARGET_MATCHED} and >= most "
          f"frequent + {TARGET_MARGIN}, 0 mixed kept): {'met' if met else 'NOT met'}; "
          f"{time.perf_counter() - started:.0f} s")
    return 0 if met else 1


def time_build(dev: Path, rows: int) -> None:
    """Time ``assay bank build`` on ``rows`` conversations made from ``dev`` (module docstring)."""
    import json
    import os
    import resource
    import subprocess
    import tempfile

    originals = [json.loads(line) for line in dev.read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / f"healthbench_{rows}.jsonl"
        with data.open("w", encoding="utf-8") as out:
            for n in range(rows):
                row = json.loads(json.dumps(originals[n % len(originals)]))
                copy = n // len(originals)
                row["prompt_id"] = f"{row['prompt_id']}-{copy}"
                for item in row["rubrics"] if copy else []:
                    if "level:cluster" not in item["tags"]:  # consensus criteria stay shared
                        item["criterion"] = item["criterion"].replace(" ", f" v{copy} ", 1)
                out.write(json.dumps(row) + "\n")
        before = os.getloadavg()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from assay.cli import main; main()", "bank",
                        "build", str(data), "--out",
                        str(Path(folder) / "bank.yaml")], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
        print(f"assay bank build, {rows} conversations: {wall:.0f} s wall, {cpu:.0f} s CPU; "
              f"load average {before[0]:.1f} before, {os.getloadavg()[0]:.1f} after\n")


def _sources(path: Path, config):
    from assay.bank.builder import split_by_sign
    from assay.bank.sources import read_source_criteria

    return split_by_sign(read_source_criteria([path], theme=config.theme))


if __name__ == "__main__":
    sys.exit(main())
