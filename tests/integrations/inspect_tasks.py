"""A small HealthBench task for Inspect's tests: rows of the repository's HealthBench
examples turned into samples by inspect_evals' own ``record_to_sample``, answered by Inspect's
``mockllm`` model with scripted outputs (their token usage given, so Inspect counts nothing
with a tokenizer it would download)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "healthbench" / "examples.jsonl"


def healthbench_rows(n: int = 3) -> list[dict]:
    return [json.loads(line) for line in EXAMPLES.read_text().splitlines()[:n]]


def healthbench_dataset(rows: list[dict]) -> MemoryDataset:
    from inspect_evals.healthbench.dataset import record_to_sample

    return MemoryDataset([record_to_sample(copy.deepcopy(row)) for row in rows])


def answers(n: int) -> list[str]:
    return [f"Answer {i}: rest, and see a doctor if it gets worse." for i in range(n)]


def mock_model(texts: list[str]):
    outputs = []
    for text in texts:
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        outputs.append(output)
    return get_model("mockllm/model", custom_outputs=outputs)
