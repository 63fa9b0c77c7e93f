"""Issue 18.14: secrets from assay.toml headers and URL passwords never reach any artefact of
a run (manifest, store, exports, cache, JSON summary, output, logs, exceptions), even when the
endpoint echoes them back in its explanations."""

from __future__ import annotations

import base64
import logging

import pandas as pd
from tests.runs.conftest import POLICY, rows
from typer.testing import CliRunner

from assay.cli import app
from assay.testing import FakeJudgeServer

HEADER_KEY = "hdrkey-PLANTED-7f3a9c2e1b44"
PASSWORD = "urlpass-PLANTED-5d8e0a"
BASIC = base64.b64encode(f"evaluser:{PASSWORD}".encode()).decode()
SECRETS = (HEADER_KEY, PASSWORD, BASIC)


def leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s for s in SECRETS if s.encode() in data]


def test_no_planted_secret_reaches_any_artefact_of_a_run(tmp_path, items_file, rubric_file, caplog):
    caplog.set_level(logging.DEBUG)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with FakeJudgeServer.run_in_thread(policy=POLICY,
                                       echo_headers=("X-Api-Key", "Authorization")) as server:
        url = f"http://evaluser:{PASSWORD}@127.0.0.1:{server.port}/v1"
        config = tmp_path / "assay.toml"
        config.write_text(f'[judges.keyed]\nspec = "openai-compatible:fake"\nbase_url = "{url}"\n'
                          f'headers = {{ X-Api-Key = "{HEADER_KEY}" }}\n')
        run = out_dir / "run"
        out = CliRunner().invoke(app, [
            "grade", str(items_file), "--rubric", str(rubric_file), "--judge", "keyed",
            "--judge", f"openai-compatible:fake@{url}", "--config", str(config),
            "--cache", str(out_dir / "cache.sqlite"), "--run-dir", str(run), "--quiet", "--votes",
            "--export", str(out_dir / "v.jsonl"), "--export", str(out_dir / "v.csv"),
            "--export", str(out_dir / "v.parquet"), "--json", str(out_dir / "s.json")])
        assert out.exit_code == 0, out.output
        # the endpoint really received the secrets and echoed them
        assert any(r["headers"].get("X-Api-Key") == "[REDACTED]" for r in server.requests)
        explanations = [e for (e,) in rows(run, "SELECT explanation FROM verdicts")]
        assert all("(you sent" in e and "[REDACTED]" in e for e in explanations)
        # a resume needs the secrets again: its refusal names none of them
        resumed = CliRunner().invoke(app, ["grade", "--resume", str(run), "--quiet",
                                           "--config", str(config)])
        assert resumed.exit_code == 1 and "never stored with a run" in resumed.output
        # a failing endpoint's errors do not show them either
        closed = CliRunner().invoke(app, [
            "grade", str(items_file), "--rubric", str(rubric_file), "--quiet", "--judge",
            f"openai-compatible:fake@http://evaluser:{PASSWORD}@127.0.0.1:9/v1",
            "--run-dir", str(out_dir / "never")])
        assert closed.exit_code == 1
        check = CliRunner().invoke(app, ["judges", "check", "keyed", "--config", str(config)])
        assert check.exit_code == 0, check.output
    files = [p for p in out_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"manifest.json", "run.sqlite", "cache.sqlite", "v.jsonl",
                                       "v.csv", "v.parquet", "s.json"}
    found = {str(p): leaks(p.read_bytes()) for p in files}
    found["v.parquet (decoded)"] = leaks(pd.read_parquet(out_dir / "v.parquet").to_csv())
    for name, result in (("grade", out), ("resume", resumed), ("closed", closed), ("check", check)):
        found[f"output of {name}"] = leaks(result.output)
    found["logs"] = leaks("\n".join(r.getMessage() for r in caplog.records))
    assert {k: v for k, v in found.items() if v} == {}


def test_a_run_of_a_keyed_assay_toml_judge_resumes_from_the_toml(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        url = f"http://evaluser:{PASSWORD}@127.0.0.1:{server.port}/v1"
        config = tmp_path / "assay.toml"
        config.write_text(f'[judges.keyed]\nspec = "openai-compatible:fake"\nbase_url = "{url}"\n'
                          f'headers = {{ X-Api-Key = "{HEADER_KEY}" }}\n')
        first = CliRunner().invoke(app, [
            "grade", str(items_file), "--rubric", str(rubric_file), "--judge", "keyed",
            "--config", str(config), "--run-dir", str(tmp_path / "run"), "--quiet", "--budget", "0"])
        assert first.exit_code == 3, first.output
        again = CliRunner().invoke(app, ["grade", "--resume", str(tmp_path / "run"), "--quiet",
                                         "--config", str(config)])
        assert again.exit_code == 0, again.output
        assert len(server.requests) == 24
        assert server.requests[0]["headers"]["Authorization"] == "[REDACTED]"  # sent (as Basic)
