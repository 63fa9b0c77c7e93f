"""Write examples/rag/stages.json: the fake judge's scripted replies for the shipped sample.

The judge's decisions for each item (how each answer sentence is categorised, which
informative sentences are grounded, whether the context is relevant, whether the answer
refuses, what the RAGAS stages return) live in decisions.json; this script turns them into a
stage script for ``assay fake-judge --stages``. Run it again after editing either file::

    .venv/bin/python examples/rag/build_stages.py
"""

from __future__ import annotations

import json
from pathlib import Path

from assay.rag.fake_replies import JudgeDecisions, stage_script, write_stage_script
from assay.rag.items import read_rag_items

HERE = Path(__file__).parent


def main() -> None:
    items = read_rag_items(HERE / "items.jsonl")
    raw = json.loads((HERE / "decisions.json").read_text(encoding="utf-8"))
    decisions = {key: JudgeDecisions.model_validate(value) for key, value in raw.items()}
    write_stage_script(stage_script(items, decisions), str(HERE / "stages.json"))
    print(f"wrote {HERE / 'stages.json'} for {len(items)} items")


if __name__ == "__main__":
    main()
