"""The official files Assay knows how to fetch: where they are, and what they must hash to.

HealthBench's files are the ones openai/simple-evals reads (``healthbench_eval.py``:
``INPUT_PATH``, ``INPUT_PATH_HARD``, ``INPUT_PATH_CONSENSUS``; ``healthbench_meta_eval.py``:
``INPUT_PATH``), at the same URLs. No hash of them is published, so Assay pins none: a file is
checked against what the official file is known to hold (its rows, unique ids, schema: see
:mod:`assay.datasets.content`) and its SHA-256 is recorded on first use in a lock file
(:mod:`assay.datasets.lock`). ``sha256`` and ``size`` pin a file's content where known.

Example:
    >>> data_file("healthbench", "hard").name
    'hard_2025-05-08-21-00-10.jsonl'
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.errors import ConfigError

_BLOB = "https://openaipublic.blob.core.windows.net/simple-evals/healthbench"


@dataclass(frozen=True)
class DataFile:
    """One downloadable file: its URL, the name it is stored under, and its pin if known."""

    url: str
    name: str
    rows: int  # the lines the official file holds
    kind: str = "examples"  # examples (HealthBench rows) | meta-eval (grader-vs-physician rows)
    consensus: bool = False  # every criterion a consensus (level:cluster) criterion
    sha256: str | None = None
    size: int | None = None


DATASETS: dict[str, dict[str, DataFile]] = {
    "healthbench": {
        "all": DataFile(f"{_BLOB}/2025-05-07-06-14-12_oss_eval.jsonl",
                        "2025-05-07-06-14-12_oss_eval.jsonl", rows=5000),
        "hard": DataFile(f"{_BLOB}/hard_2025-05-08-21-00-10.jsonl",
                         "hard_2025-05-08-21-00-10.jsonl", rows=1000),
        "consensus": DataFile(f"{_BLOB}/consensus_2025-05-09-20-00-46.jsonl",
                              "consensus_2025-05-09-20-00-46.jsonl", rows=3671, consensus=True),
        "meta-eval": DataFile(f"{_BLOB}/2025-05-07-06-14-12_oss_meta_eval.jsonl",
                              "2025-05-07-06-14-12_oss_meta_eval.jsonl", rows=29511,
                              kind="meta-eval"),
    },
}


# what `assay data fetch healthbench` fetches without --subset: the three files assay eval reads
EVAL_SUBSETS = {"healthbench": ("all", "hard", "consensus")}


def data_file(dataset: str, subset: str = "all") -> DataFile:
    """The file of ``dataset``'s ``subset``; an unknown name is a :class:`ConfigError`."""
    if dataset not in DATASETS:
        raise ConfigError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    subsets = DATASETS[dataset]
    if subset not in subsets:
        raise ConfigError(f"{dataset}: unknown subset {subset!r}; use {', '.join(subsets)}")
    return subsets[subset]
