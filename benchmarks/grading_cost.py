"""What grading HealthBench costs at one judge's list prices, per request pattern, as the
provider bills it.

    .venv/bin/python benchmarks/grading_cost.py                      # ~1 minute
    .venv/bin/python benchmarks/grading_cost.py --judge gpt-4.1 --json cost.json

Data: the 60 development conversations (tests/data/healthbench/dev.jsonl); the 49 that ship an
ideal completion are graded on it (the other 11 have no response to grade). Every mode is a
real `assay` run over loopback HTTP against the fake judge, whose prompt cache follows the
providers' documented rules (assay.testing.prompt_cache: each model's minimum, an entry
readable only once the reply of the request that wrote it has begun, 5-minute or 1-hour
lifetimes; OpenAI caches by itself from 1,024 tokens) and which keeps the bill the provider
would send (assay.testing.bill: its own arithmetic, checked against Assay's recorded cost).
Every reply takes --latency seconds (0.2 by default), so requests sent together overlap as
they do against a real API. Dollars are the judge's list prices from assay/judges/pricing.json;
batch prices are half (OpenAI Batch API, Anthropic Message Batches). Totals are extrapolated to
the full 5,000 conversations per conversation graded.

Modes (rows) and what each sends:
  simple-evals   simple-evals' request pattern: one live request per rubric item, all of an
                 item's at once, nothing marked for caching (the baseline). To an OpenAI judge
                 Assay sends simple-evals' exact request (--protocol simple-evals), which
                 OpenAI still caches by itself where it can; to a Claude judge, HealthBench mode
                 (simple-evals' grader prompt + "Reply with only a JSON object.")
  assay          assay grade, the same requests; a head worth caching (at or over the model's
                 minimum, shared by enough calls) is marked, its item's first call sent alone
                 and the others after its reply
  batch          the same requests through the batch API (--executor batch), caching off
  batch+caching  the batch API with caching: heads worth the 1-hour cache written by a first
                 batch and read by a second (Anthropic; OpenAI: as batch)
  per-item       one call per conversation with all its rubric items: Assay's per_item
                 template (Autorubric's per-item mode), NOT simple-evals' grader prompt
The first four give the same verdicts on the fake judge (the script checks it); per-item's
agreement with per-criterion grading needs a real model (benchmarks/per_item_agreement.py).

The fake judge's replies are short (about 20 tokens); a real grader writes more, which weighs
the same in every mode but per-item.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
FULL = 5000
VERDICTS = "SELECT item_id, criterion_id, verdict FROM verdicts ORDER BY 1, 2"


@dataclass
class Mode:
    name: str
    caching: bool
    batch: bool = False
    per_item: bool = False

    def same_protocol(self) -> bool:
        return not self.per_item


MODES = [Mode("simple-evals", caching=False), Mode("assay", caching=True),
         Mode("batch", caching=False, batch=True), Mode("batch+caching", caching=True, batch=True),
         Mode("per-item", caching=True, per_item=True)]


@dataclass
class Row:
    mode: str
    sends: str
    calls: int
    prompt_tokens: int
    cache_read: int
    cache_write: int
    completion_tokens: int
    usd: float
    assay_usd: float  # what Assay recorded (the bill but the preflight's two tokens)
    wall_s: float
    same_protocol: bool


def price(model: str):
    from assay.judges.pricing import Pricing

    found = Pricing.default().price_for(model)
    if found is None:
        sys.exit(f"no list price for {model!r} in pricing.json")
    return found


def sends(mode: Mode, anthropic: bool) -> str:
    if mode.per_item:
        return "Assay's per_item template, all rubric items in one call (not simple-evals')"
    what = ("simple-evals' grader prompt + 'Reply with only a JSON object.' (Messages API)"
            if anthropic else "simple-evals' exact grader request")
    if mode.caching and anthropic:
        what += ", heads marked where caching pays"
    return what


async def run_mode(mode: Mode, items: Path, run_dir: Path, *, model: str, anthropic: bool,
                   latency: float):
    import assay
    from assay.judges import JudgeConfig
    from assay.judges.specs import parse_spec
    from assay.testing import FakeJudgeServer

    server = FakeJudgeServer(keep_log=False, prompt_cache=True, latency=latency)
    await server.start()
    try:
        wire = "anthropic" if anthropic else "openai-compatible"
        parsed = parse_spec(f"{wire}:{model}@{server.base_url}")
        judge = JudgeConfig.model_validate({**parsed.model_dump(),
                                            "prompt_caching": mode.caching})
        kwargs: dict = {"ideal": True}
        if mode.per_item:
            kwargs["mode"] = "per-item"
        else:
            kwargs["healthbench"] = True
            if not anthropic:
                kwargs["protocol"] = "simple-evals"  # the exact request (Claude: refused)
        if mode.batch:
            kwargs.update(executor="batch", batch_poll_s=0.05)
        started = time.perf_counter()
        result = await assay.agrade(items, judges=[judge], run_dir=run_dir, **kwargs)
        wall = time.perf_counter() - started
        if mode.batch:
            assert server.batches.created >= 1, "the batch run made no batch"
    finally:
        await server.stop()
    if result.status != "complete":
        sys.exit(f"{mode.name}: the run ended {result.status}")
    return result.report.totals, server.bill, wall


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="claude-sonnet-4-5",
                        help="the judge whose list prices and caching rules apply (an "
                             "Anthropic model is asked over the Messages API, others over "
                             "chat completions)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake reply")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-fake-loopback")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-loopback")
    from assay.judges.prompt_caching import min_cacheable_tokens

    anthropic = args.judge.startswith("claude")
    p = price(args.judge)
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    graded = [r for r in rows if r.get("ideal_completions_data")]
    tmp = Path(tempfile.mkdtemp(prefix="assay-cost-"))
    items = tmp / "dev.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in graded))

    out: list[Row] = []
    verdicts: dict[str, list] = {}
    for mode in MODES:
        run_dir = tmp / mode.name.replace("+", "-")
        totals, bill, wall = await run_mode(mode, items, run_dir, model=args.judge,
                                            anthropic=anthropic, latency=args.latency)
        tally = bill.batch if mode.batch else bill.live
        out.append(Row(mode.name, sends(mode, anthropic), totals.calls, totals.prompt_tokens,
                       tally.cache_read, tally.cache_write_5m + tally.cache_write_1h,
                       totals.completion_tokens, bill.usd(p), totals.cost_usd, wall,
                       mode.same_protocol()))
        if mode.same_protocol():
            db = sqlite3.connect(run_dir / "run.sqlite")
            verdicts[mode.name] = db.execute(VERDICTS).fetchall()
            db.close()
    first = next(iter(verdicts.values()))
    if any(v != first for v in verdicts.values()):
        sys.exit("the modes of the same verdict protocol gave different verdicts on the fake judge")

    n = len(graded)
    baseline = out[0].usd
    minimum = min_cacheable_tokens("anthropic" if anthropic else "openai", args.judge)
    print(f"judge {args.judge}: list prices USD/M tokens input {p.input}, cached input "
          f"{p.cached_input}, output {p.output}; cache writes "
          + ("1.25x (5 min) / 2x (1 h) the input price" if anthropic else "free")
          + f"; shortest prefix cached {minimum:,} tokens; {n} of {len(rows)} dev "
          f"conversations graded; replies take {args.latency:g} s")
    head = (f"{'mode':<14}{'calls':>6}{'prompt tok':>11}{'cache read':>11}{'cache write':>12}"
            f"{'compl tok':>10}{'USD (dev)':>10}{f'USD ({FULL:,})':>12}{'vs s-e':>7}{'wall s':>7}"
            "  sends")
    print(head)
    for row in out:
        full = row.usd / n * FULL
        print(f"{row.mode:<14}{row.calls:>6,}{row.prompt_tokens:>11,}{row.cache_read:>11,}"
              f"{row.cache_write:>12,}{row.completion_tokens:>10,}{row.usd:>10.4f}{full:>12.2f}"
              f"{row.usd / baseline:>7.3f}{row.wall_s:>7.1f}  {row.sends}")
    cheapest = min((r for r in out if r.same_protocol), key=lambda r: r.usd)
    print(f"cheapest mode with simple-evals' verdict protocol: {cheapest.mode}, "
          f"{cheapest.usd / baseline:.3f}x simple-evals' cost (target 0.45x: "
          f"{'met' if cheapest.usd / baseline <= 0.45 else 'not met'}); those modes gave "
          "identical verdicts")
    live = next(r for r in out if r.mode == "assay")
    print(f"prompt tokens cached or written in the live run: "
          f"{(live.cache_read + live.cache_write) / live.prompt_tokens:.1%} (the heads at or "
          f"over {minimum:,} tokens shared by enough calls)")
    worst = max(abs(r.usd - r.assay_usd) / r.usd for r in out)
    print(f"Assay's recorded cost vs the provider's bill: within {worst:.2%} in every mode "
          "(the preflight's two tokens)")
    if args.json:
        args.json.write_text(json.dumps([row.__dict__ for row in out], indent=1))


if __name__ == "__main__":
    asyncio.run(main())
