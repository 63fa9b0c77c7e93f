"""What grading HealthBench costs at one judge's list prices, per request pattern.

    .venv/bin/python benchmarks/grading_cost.py                      # ~1 minute
    .venv/bin/python benchmarks/grading_cost.py --judge gpt-4.1 --json cost.json

Data: the 60 development conversations (tests/data/healthbench/dev.jsonl); the 49 that ship an
ideal completion are graded on it (the other 11 have no response to grade), in HealthBench mode
(simple-evals' grader prompt) unless the mode says otherwise. Every mode is a real `assay`
run over loopback HTTP against the fake judge, which counts tokens as the providers would see
them at about 4 characters a token and bills prompt caching as they do (Anthropic: the prefix a
request marks with ``cache_control``, written once at 1.25x the input price, read after at the
cached-input price, when it is at least 1,024 tokens; OpenAI: any prefix of 1,024+ tokens seen
before, read at the cached-input price). Dollars are the judge's list prices from
``assay/judges/pricing.json``; batch prices are half (OpenAI Batch API, Anthropic Message
Batches). Totals are extrapolated to the full 5,000 conversations per conversation graded.

Modes (rows):
  simple-evals     simple-evals' request pattern: one live request per rubric item, nothing
                   cached (the baseline; the same bytes as Assay's HealthBench mode)
  per-criterion    assay grade, HealthBench mode, live: the same requests, so the same cost
                   on a judge that caches nothing by itself; caching off (Anthropic: no
                   cache_control) -- shown to check that it equals the baseline
  +caching         the same requests with the item's shared head (instructions + conversation)
                   marked for caching (Anthropic) / cached automatically (OpenAI)
  per-item         one call per conversation with all its rubric items (Assay's per_item
                   template: not simple-evals' grader prompt, so not the exact protocol)
  batch            per-criterion through the batch API (--executor batch): half price
  batch+caching    both (Anthropic bills cache hits in batches too, best effort)
The exact-protocol modes (all but per-item) must give the same verdicts on the fake judge;
the script checks it and fails otherwise.

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
from dataclasses import dataclass
from pathlib import Path

from assay.judges.pricing import CACHE_WRITE_PRICE_FACTOR

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
FULL = 5000
VERDICTS = "SELECT item_id, criterion_id, verdict FROM verdicts ORDER BY 1, 2"


@dataclass
class Row:
    mode: str
    calls: int
    prompt_tokens: int
    cached_read: int
    cached_written: int
    completion_tokens: int
    usd: float
    exact: bool  # simple-evals' grader prompt, one rubric item per call


def price(model: str):
    from assay.judges.pricing import Pricing

    found = Pricing.default().price_for(model)
    if found is None:
        sys.exit(f"no list price for {model!r} in pricing.json")
    return found


def dollars(p, prompt: int, read: int, written: int, completion: int, factor: float,
            anthropic: bool) -> float:
    cached_price = p.input if p.cached_input is None else p.cached_input
    write_price = p.input * (CACHE_WRITE_PRICE_FACTOR if anthropic else 1.0)
    fresh = prompt - read - written
    return factor * (fresh * p.input + written * write_price + read * cached_price
                     + completion * p.output) / 1e6


async def run_mode(name: str, items: Path, run_dir: Path, *, wire: str, model: str, caching: bool,
                   batch: bool = False, per_item: bool = False):
    import assay
    from assay.judges.specs import parse_spec
    from assay.testing import FakeJudgeServer

    server = FakeJudgeServer(keep_log=False, prompt_cache=True)
    await server.start()
    try:
        judge = parse_spec(f"{'anthropic' if wire == 'anthropic' else 'openai-compatible'}:"
                           f"{model}@{server.base_url}")
        if not caching:
            server.prompt_cache = None  # a judge that caches nothing
        if per_item:
            kwargs = {"mode": "per-item", "ideal": True}
        else:
            kwargs = {"healthbench": True, "ideal": True}
        if batch:
            kwargs.update(executor="batch", batch_poll_s=0.05)
        result = await assay.agrade(items, judges=[judge], run_dir=run_dir, **kwargs)
        cache = server.prompt_cache
        read = cache.read_tokens if cache else 0
        written = cache.written_tokens if cache else 0
        if batch:
            assert server.batches.created >= 1, "the batch run made no batch"
    finally:
        await server.stop()
    if result.status != "complete":
        sys.exit(f"{name}: the run ended {result.status}")
    totals = result.report.totals
    return totals, read, written


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="claude-sonnet-4-5",
                        help="the judge whose list prices apply (an Anthropic model is asked "
                             "over the Messages API, others over chat completions)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-fake-loopback")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-loopback")
    anthropic = args.judge.startswith("claude")
    wire = "anthropic" if anthropic else "openai"
    p = price(args.judge)
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    graded = [r for r in rows if r.get("ideal_completions_data")]
    tmp = Path(tempfile.mkdtemp(prefix="assay-cost-"))
    items = tmp / "dev.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in graded))

    modes = [  # name, caching, batch, per_item, exact protocol
        ("per-criterion", False, False, False, True),
        ("+caching", True, False, False, True),
        ("per-item", False, False, True, False),
        ("batch", False, True, False, True),
        ("batch+caching", True, True, False, True),
    ]
    out: list[Row] = []
    verdicts: dict[str, list] = {}
    for name, caching, batch, per_item, exact in modes:
        run_dir = tmp / name.replace("+", "plus-")
        totals, read, written = await run_mode(name, items, run_dir, wire=wire, model=args.judge,
                                               caching=caching, batch=batch, per_item=per_item)
        factor = 0.5 if batch else 1.0
        usd = dollars(p, totals.prompt_tokens, read, written, totals.completion_tokens, factor,
                      anthropic)
        out.append(Row(name, totals.calls, totals.prompt_tokens, read, written,
                       totals.completion_tokens, usd, exact))
        if exact:
            db = sqlite3.connect(run_dir / "run.sqlite")
            verdicts[name] = db.execute(VERDICTS).fetchall()
            db.close()
    base = out[0]
    out.insert(0, Row("simple-evals", base.calls, base.prompt_tokens, 0, 0,
                      base.completion_tokens,
                      dollars(p, base.prompt_tokens, 0, 0, base.completion_tokens, 1.0, anthropic),
                      True))
    first = next(iter(verdicts.values()))
    if any(v != first for v in verdicts.values()):
        sys.exit("the exact-protocol modes gave different verdicts on the fake judge")

    n = len(graded)
    baseline = out[0].usd
    print(f"judge {args.judge} list prices (USD/M tokens: input {p.input}, cached input "
          f"{p.cached_input}, output {p.output}"
          + (f", cache write {p.input * CACHE_WRITE_PRICE_FACTOR:g}" if anthropic else "") + "); "
          f"{n} of {len(rows)} dev conversations graded ({base.calls} rubric items)")
    head = (f"{'mode':<15}{'calls':>7}{'prompt tok':>12}{'cache read':>12}{'cache write':>12}"
            f"{'compl tok':>11}{'USD (dev)':>11}{f'USD ({FULL:,})':>13}{'vs s-e':>8}{'exact':>7}")
    print(head)
    for row in out:
        full = row.usd / n * FULL
        print(f"{row.mode:<15}{row.calls:>7,}{row.prompt_tokens:>12,}{row.cached_read:>12,}"
              f"{row.cached_written:>12,}{row.completion_tokens:>11,}{row.usd:>11.4f}"
              f"{full:>13.2f}{row.usd / baseline:>8.2f}{'yes' if row.exact else 'no':>7}")
    cheapest = min((r for r in out if r.exact), key=lambda r: r.usd)
    print(f"cheapest exact-protocol mode: {cheapest.mode}, {cheapest.usd / baseline:.0%} of "
          f"simple-evals' cost; the exact-protocol modes gave identical verdicts")
    if args.json:
        args.json.write_text(json.dumps([row.__dict__ for row in out], indent=1))


if __name__ == "__main__":
    asyncio.run(main())
