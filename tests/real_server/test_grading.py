"""Grading against the real server: HealthBench rows, and a custom rubric in both structured
modes (``response_format`` json_schema, and llama.cpp's own json_object + schema)."""

from __future__ import annotations

import json

import pytest
import yaml
from tests.runs.conftest import RUBRIC  # each reply schema: binary, penalty, ordinal, nominal

from .conftest import ROOT
from .outcomes import assay, requests_in_flight, require_floor, run_outcomes

pytestmark = pytest.mark.real_server

HEALTHBENCH = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
ANSWER = "Please see a doctor today; call emergency services if it gets worse."

ITEMS = [
    {
        "id": "calm",
        "prompt": "I was stung by a bee. What now?",
        "response": "Scrape the stinger out with a card, wash the spot and hold ice on it.",
    },
    {
        "id": "alarmist",
        "prompt": "A bee stung my arm, it is a bit red. What should I do?",
        "response": "Squeeze the stinger out with tweezers and go to the emergency room now!",
    },
]


def test_healthbench_rows_end_as_verdicts_or_classified_failures(llama, tmp_path, outcome):
    rows = smallest_healthbench_rows(5)
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "responses.jsonl").write_text(
        "".join(
            json.dumps({"prompt_id": row["prompt_id"], "response": ANSWER}) + "\n" for row in rows
        )
    )
    assay(
        "grade",
        "rows.jsonl",
        "--healthbench",
        "--responses",
        "responses.jsonl",
        "--judge",
        llama.spec,
        "--run-dir",
        "run",
        "-q",
        cwd=tmp_path,
    )
    counts = run_outcomes(tmp_path / "run")
    outcome(counts)
    assert sum(counts.values()) == sum(len(row["rubrics"]) for row in rows)
    require_floor(counts, "verdicts", "assay grade --healthbench")
    assert set(requests_in_flight(tmp_path / "run").values()) == {llama.slots}


def smallest_healthbench_rows(n: int) -> list[dict]:
    """The ``n`` HealthBench rows of the test data with the fewest criteria (one call each, so
    the tier stays within minutes on a CPU), multi-turn conversations among them."""
    rows = [json.loads(line) for line in HEALTHBENCH.open()]
    return sorted(rows, key=lambda row: (len(row["rubrics"]), row["prompt_id"]))[:n]


@pytest.mark.parametrize("mode", ["auto", "native"])
def test_a_custom_rubric_grades_in_each_structured_mode(llama, tmp_path, outcome, mode):
    (tmp_path / "rubric.yaml").write_text(yaml.safe_dump(RUBRIC))
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    config = llama.config(tmp_path, local=mode)
    assay(
        "grade",
        "items.jsonl",
        "--rubric",
        "rubric.yaml",
        "--config",
        str(config),
        "--judge",
        "local",
        "--run-dir",
        "run",
        "-q",
        cwd=tmp_path,
    )
    counts = run_outcomes(tmp_path / "run")
    outcome(counts)
    assert sum(counts.values()) == len(ITEMS) * len(RUBRIC["criteria"])
    require_floor(counts, "verdicts", f"assay grade (structured = {mode})")
    assert set(requests_in_flight(tmp_path / "run").values()) == {llama.slots}
