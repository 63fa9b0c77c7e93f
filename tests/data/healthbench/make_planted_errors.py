"""Regenerate dev_planted_errors.jsonl: dev.jsonl with ten kinds of planted errors.

Run from the repository root: ``python tests/data/healthbench/make_planted_errors.py``.
PLANTED (line number -> kind) is imported by the tests, which also check that every other line
is byte-identical to dev.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent

PLANTED = {
    3: "malformed JSON line",
    5: "missing field",
    8: "duplicate criterion ids",
    11: "option value outside [0, 1]",
    14: "ordinal criterion with fewer than two options",
    17: "wrong type (points \"eight\")",
    20: "rubric with no positive weight",
    23: "unknown role",
    26: "empty text",
    29: "duplicate prompt_id",
}


def plant(number: int, line: str, lines: list[str]) -> str:
    if number == 3:
        return line.replace('"prompt_id": ', '"prompt_id" ', 1)
    row = json.loads(line)
    rubrics = row["rubrics"]
    if number == 5:
        del rubrics[2]["points"]
    elif number == 8:
        rubrics[1]["id"] = rubrics[4]["id"] = "advice"  # explicit ids must be unique (a repeated
        # text is not an error: HealthBench has such rows, and every copy is graded)
    elif number == 11:
        rubrics[0]["kind"] = "ordinal"
        rubrics[0]["options"] = [{"label": "partly", "value": 0.5},
                                 {"label": "fully", "value": 1.5}]
    elif number == 14:
        rubrics[1]["kind"] = "ordinal"
        rubrics[1]["options"] = [{"label": "yes", "value": 1.0}]
    elif number == 17:
        rubrics[3]["points"] = "eight"
    elif number == 20:
        for entry in rubrics:
            entry["points"] = -abs(entry["points"])
    elif number == 23:
        row["prompt"][0]["role"] = "doctor"
    elif number == 26:
        rubrics[2]["criterion"] = "   "
    elif number == 29:
        row["prompt_id"] = json.loads(lines[1])["prompt_id"]
    return json.dumps(row)


def main() -> None:
    lines = (HERE / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    out = [plant(n, line, lines) if n in PLANTED else line for n, line in enumerate(lines, 1)]
    (HERE / "dev_planted_errors.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
