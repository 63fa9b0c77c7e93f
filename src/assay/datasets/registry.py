"""The official files Assay knows how to fetch: where they are, and what they must hash to.

HealthBench's files are the ones openai/simple-evals reads (``healthbench_eval.py``:
``INPUT_PATH``, ``INPUT_PATH_HARD``, ``INPUT_PATH_CONSENSUS``; ``healthbench_meta_eval.py``:
``INPUT_PATH``), at the same URLs. ``sha256`` and ``size`` pin a file's content; a file without
a pin here is kept only with the user's own ``--sha256`` (from the publisher's page, e.g. the
SHA-256 Hugging Face shows for the dataset's LFS files): Assay never keeps bytes it cannot check.

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
    sha256: str | None = None
    size: int | None = None


DATASETS: dict[str, dict[str, DataFile]] = {
    "healthbench": {
        "all": DataFile(f"{_BLOB}/2025-05-07-06-14-12_oss_eval.jsonl",
                        "2025-05-07-06-14-12_oss_eval.jsonl"),
        "hard": DataFile(f"{_BLOB}/hard_2025-05-08-21-00-10.jsonl",
                         "hard_2025-05-08-21-00-10.jsonl"),
        "consensus": DataFile(f"{_BLOB}/consensus_2025-05-09-20-00-46.jsonl",
                              "consensus_2025-05-09-20-00-46.jsonl"),
        "meta-eval": DataFile(f"{_BLOB}/2025-05-07-06-14-12_oss_meta_eval.jsonl",
                              "2025-05-07-06-14-12_oss_meta_eval.jsonl"),
    },
}


def data_file(dataset: str, subset: str = "all") -> DataFile:
    """The file of ``dataset``'s ``subset``; an unknown name is a :class:`ConfigError`."""
    if dataset not in DATASETS:
        raise ConfigError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    subsets = DATASETS[dataset]
    if subset not in subsets:
        raise ConfigError(f"{dataset}: unknown subset {subset!r}; use {', '.join(subsets)}")
    return subsets[subset]
