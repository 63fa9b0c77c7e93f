"""Issue 35.3: a grading run against a local server sends no more requests at once than the
server decodes (llama.cpp's /props total_slots), unless the user says otherwise, and its
manifest says how many were in flight and why."""

from __future__ import annotations

import json

from tests.runs.conftest import POLICY
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer
from assay.testing.server_props import llama_cpp


def grade_against_llama_cpp(tmp_path, items_file, rubric_file, *extra: str):
    with FakeJudgeServer.run_in_thread(
        policy=POLICY, latency=0.02, server=llama_cpp(n_ctx=4096, slots=3)
    ) as server:
        out = CliRunner().invoke(
            app,
            [
                "grade",
                str(items_file),
                "--rubric",
                str(rubric_file),
                "--judge",
                f"llamacpp:gemma@{server.base_url}",
                "--run-dir",
                str(tmp_path / "run"),
                "--quiet",
                *extra,
            ],
        )
    assert out.exit_code == 0, out.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    return server.peak_in_flight, manifest["timing"]["sessions"][-1]["in_flight"]


def test_a_run_follows_the_servers_slots_and_its_manifest_says_so(
    tmp_path, items_file, rubric_file
):
    peak, in_flight = grade_against_llama_cpp(tmp_path, items_file, rubric_file)
    assert peak == 3
    assert list(in_flight.values()) == [
        {"max_in_flight": 3, "source": "the server's parallel slots (/props total_slots)"}
    ]


def test_concurrency_wins_over_the_servers_slots_and_the_manifest_says_so(
    tmp_path, items_file, rubric_file
):
    peak, in_flight = grade_against_llama_cpp(
        tmp_path, items_file, rubric_file, "--concurrency", "6"
    )
    assert peak == 6
    assert list(in_flight.values()) == [{"max_in_flight": 6, "source": "--concurrency"}]
