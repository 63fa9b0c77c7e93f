"""``--budget`` is a hard cap: each attempt's cost is reserved from an estimate before it is sent,
so a run stopped at 64 requests in flight spends at most its budget (each call costing at most
its estimate), stops within one estimate of it, exits 3 and keeps every reply it paid for."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import app
from assay.judges import ModelPrice
from assay.judges.budget import CallEstimator
from assay.testing import FakeJudgeServer

from .conftest import POLICY, rows, write_items

PRICE = {"input": 20.0, "output": 20.0}  # USD per million tokens: a call costs about $0.008


def test_a_budget_stop_at_64_in_flight_spends_at_most_the_budget_and_keeps_every_reply(
        tmp_path, rubric_file):
    items = write_items(tmp_path / "items.jsonl", 60)  # 240 calls, about $2 in all
    with FakeJudgeServer.run_in_thread(policy=POLICY, latency=0.02) as server:
        config = tmp_path / "assay.toml"
        config.write_text(f'[judges.priced]\nspec = "openai-compatible:fake@{server.base_url}"\n'
                          f'price = {{ input = {PRICE["input"]}, output = {PRICE["output"]} }}\n'
                          'max_tokens = 64\nlimits = { max_in_flight = 64 }\n')
        out = CliRunner().invoke(app, [
            "grade", str(items), "--rubric", str(rubric_file), "--judge", "priced", "--config",
            str(config), "--run-dir", str(tmp_path / "run"), "--quiet", "--budget", "1.0"])
        sent = list(server.requests)
        peak = server.peak_in_flight
        manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
        stored = rows(tmp_path / "run", "SELECT COUNT(*) FROM calls")[0][0]
        again = CliRunner().invoke(app, ["grade", "--resume", str(tmp_path / "run"), "--config",
                                         str(config), "--quiet", "--budget", "100"])
        total_sent = len(server.requests)
    assert out.exit_code == 3, out.output  # a budget stop
    assert manifest["status"] == "budget" and peak > 32  # it was stopped at full width
    estimator = CallEstimator(ModelPrice(**PRICE), max_tokens=64)
    one_call = max(estimator.estimate(r["body"]["messages"],
                                      r["body"]["response_format"]["json_schema"]["schema"])
                   for r in sent)
    spent = manifest["totals"]["cost_usd"]
    assert 1.0 - one_call < spent <= 1.0
    # every request the endpoint answered is a call of the run, with its cost
    assert stored == len(sent)
    assert manifest["totals"]["errors"] == 0
    # a larger budget finishes the run, asking each of the 240 calls once over both sessions
    assert again.exit_code == 0, again.output
    assert total_sent == 240 == rows(tmp_path / "run", "SELECT COUNT(*) FROM calls")[0][0]
