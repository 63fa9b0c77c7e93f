"""``--protocol simple-evals``: simple-evals' HealthBench grader request, byte for byte, and its
reply rule (send the same request again until ``criteria_met`` is a boolean, bounded here).

The expected request is built here the way simple-evals and the openai SDK build it (quoted in
tests/data/simple_evals/grader_request.md), independently of Assay's prompt code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assay
from assay.errors import ConfigError
from assay.testing import Faults

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "healthbench" / "examples.jsonl"
# simple-evals' GRADER_TEMPLATE ("""...""".strip()); the file holds it with a final newline
GRADER_TEMPLATE = (ROOT / "src" / "assay" / "grading" / "templates" / "healthbench.txt").read_text(
    encoding="utf-8").strip()
QUOTED = ROOT / "tests" / "data" / "simple_evals" / "grader_request.md"
MODEL = "gpt-4.1-2025-04-14"


def simple_evals_bodies(row: dict) -> list[bytes]:
    """Every grader request body simple-evals sends for ``row``'s ideal completion."""
    convo = [*row["prompt"], dict(content=row["ideal_completions_data"]["ideal_completion"],  # noqa: C408  as simple-evals writes it
                                  role="assistant")]
    convo_str = "\n\n".join([f"{m['role']}: {m['content']}" for m in convo])
    bodies = []
    for rubric in row["rubrics"]:
        grader_prompt = GRADER_TEMPLATE.replace("<<conversation>>", convo_str).replace(
            "<<rubric_item>>", f"[{rubric['points']}] {rubric['criterion']}")
        messages = [{"role": "system", "content": "You are a helpful assistant."},
                    dict(content=grader_prompt, role="user")]  # noqa: C408  (its key order)
        body = {"messages": messages, "model": MODEL, "max_tokens": 2048, "temperature": 0.5}
        bodies.append(json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                                 allow_nan=False).encode())
    return bodies


def first_row() -> dict:
    return json.loads(EXAMPLES.read_text(encoding="utf-8").splitlines()[0])


def test_the_quoted_source_is_the_one_the_expected_request_follows():
    quoted = QUOTED.read_text(encoding="utf-8")
    for fragment in ('messages: MessageList = [dict(content=grader_prompt, role="user")]',
                     'OPENAI_SYSTEM_MESSAGE_API = "You are a helpful assistant."',
                     "temperature: float = 0.5", 'separators=(",", ":")',
                     'return f"[{self.points}] {self.criterion}"'):
        assert fragment in quoted


async def test_the_request_bodies_equal_simple_evals_byte_for_byte(serve, tmp_path):
    row = first_row()
    items = tmp_path / "one.jsonl"
    items.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    server = await serve(policy="MET")
    result = await assay.agrade(items, healthbench=True, ideal=True, protocol="simple-evals",
                                judges=[f"openai-compatible:{MODEL}@{server.base_url}"],
                                run_dir=tmp_path / "run")
    assert result.status == "complete"
    sent = sorted(r["raw_body"].encode() for r in server.requests)
    assert sent == sorted(simple_evals_bodies(row))
    assert all(b"response_format" not in body for body in sent)


async def test_a_reply_without_a_boolean_is_sent_again_unchanged(serve, tmp_path):
    row = first_row()
    row["rubrics"] = row["rubrics"][:1]
    items = tmp_path / "one.jsonl"
    items.write_text(json.dumps(row) + "\n", encoding="utf-8")
    server = await serve(policy="MET", faults=Faults(script=["schema_mismatch", "malformed"]))
    result = await assay.agrade(items, healthbench=True, ideal=True, protocol="simple-evals",
                                judges=[f"openai-compatible:{MODEL}@{server.base_url}"],
                                run_dir=tmp_path / "run")
    assert result.status == "complete" and len(server.requests) == 3
    assert len({r["raw_body"] for r in server.requests}) == 1  # the same request each time


async def test_the_retries_are_bounded_and_then_the_call_fails(serve, tmp_path):
    row = first_row()
    row["rubrics"] = row["rubrics"][:1]
    items = tmp_path / "one.jsonl"
    items.write_text(json.dumps(row) + "\n", encoding="utf-8")
    server = await serve(policy="MET", faults=Faults(schema_mismatch=1.0))
    result = await assay.agrade(items, healthbench=True, ideal=True, protocol="simple-evals",
                                max_reasks=3, run_dir=tmp_path / "run",
                                judges=[f"openai-compatible:{MODEL}@{server.base_url}"])
    # the request and 3 re-asks, then all of it once more in the run's final pass
    assert result.status == "incomplete" and len(server.requests) == 2 * 4


def test_the_protocol_is_for_healthbench_only(tmp_path):
    with pytest.raises(ConfigError, match="--protocol simple-evals grades HealthBench"):
        assay.grade([{"id": "a", "prompt": "q", "response": "r"}], protocol="simple-evals",
                    rubric={"id": "r", "criteria": [{"id": "c", "text": "t"}]},
                    judges=["openai-compatible:m@http://127.0.0.1:9/v1"], run_dir=tmp_path / "r")


async def test_without_the_protocol_a_reply_without_a_boolean_is_also_sent_again_unchanged(
        serve, tmp_path):
    row = first_row()
    row["rubrics"] = row["rubrics"][:1]
    items = tmp_path / "one.jsonl"
    items.write_text(json.dumps(row) + "\n", encoding="utf-8")
    server = await serve(policy="MET", faults=Faults(script=["schema_mismatch"]))
    result = await assay.agrade(items, healthbench=True, ideal=True, run_dir=tmp_path / "run",
                                judges=[f"openai-compatible:{MODEL}@{server.base_url}"])
    assert result.status == "complete" and len(server.requests) == 2
    first, second = (r["body"]["messages"] for r in server.requests)
    assert second == first  # no error quoted back: simple-evals' re-ask
