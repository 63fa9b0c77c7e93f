"""What sending an item's first call alone costs in throughput: `assay grade` with prompt
caching (a cacheable head's first call alone, the others after its reply) against the same run
with caching off (every call at once), where every head can be cached (the worst case).

    .venv/bin/python benchmarks/cache_schedule_throughput.py            # ~2 minutes
    .venv/bin/python benchmarks/cache_schedule_throughput.py --rounds 5 --copies 16

Data: the 49 development conversations with an ideal completion, each given a long first turn
(a ~1,400-token case history, numbered per copy) so that every item's head is over Claude Sonnet
4.5's 1,024-token minimum, copied --copies times under new ids; graded in HealthBench mode with a Claude judge
against the fake judge (replies take --latency s, 64 requests in flight, the providers'
caching rules). The two settings run alternately, --rounds times each; the table gives the
median calls per second and the provider's bill of each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "healthbench" / "dev.jsonl"
HISTORY = ("Case history {copy}: the patient is a 54-year-old with type 2 diabetes, "
           "hypertension and a penicillin allergy, taking metformin, lisinopril and "
           "atorvastatin, who walks daily and asks about every new symptom first. ") * 24


def items(copies: int) -> list[dict]:
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    out = []
    for copy in range(copies):
        for row in rows:
            if not row.get("ideal_completions_data"):
                continue
            prompt = [dict(turn) for turn in row["prompt"]]
            prompt[0]["content"] = HISTORY.format(copy=copy) + prompt[0]["content"]
            out.append({**row, "prompt_id": f"{row['prompt_id']}-{copy}", "prompt": prompt})
    return out


async def one_run(path: Path, run_dir: Path, caching: bool, latency: float):
    import assay
    from assay.judges import JudgeConfig
    from assay.judges.specs import parse_spec
    from assay.testing import FakeJudgeServer

    server = await FakeJudgeServer(keep_log=False, prompt_cache=True, latency=latency).start()
    try:
        parsed = parse_spec(f"anthropic:claude-sonnet-4-5@{server.base_url}")
        judge = JudgeConfig.model_validate({**parsed.model_dump(), "prompt_caching": caching})
        started = time.perf_counter()
        result = await assay.agrade(path, judges=[judge], healthbench=True, ideal=True,
                                    run_dir=run_dir)
        wall = time.perf_counter() - started
    finally:
        await server.stop()
    assert result.status == "complete", result.status
    return result.report.totals.calls / wall, server.bill


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-fake-loopback")
    from assay.judges.pricing import Pricing

    price = Pricing.default().price_for("claude-sonnet-4-5")
    tmp = Path(tempfile.mkdtemp(prefix="assay-stagger-"))
    path = tmp / "items.jsonl"
    rows = items(args.copies)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    rates: dict[bool, list[float]] = {True: [], False: []}
    bills = {}
    for n in range(args.rounds):
        for caching in (False, True):
            rate, bill = await one_run(path, tmp / f"run-{n}-{caching}", caching, args.latency)
            rates[caching].append(rate)
            bills[caching] = bill
    print(f"{len(rows)} items, {sum(len(r['rubrics']) for r in rows):,} calls, replies "
          f"{args.latency:g} s, 64 in flight, {args.rounds} alternated rounds; load "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"{'setting':<34}{'calls/s (median, range)':>28}{'USD':>9}{'cache read':>12}"
          f"{'cache write':>12}")
    for caching in (False, True):
        tally = bills[caching].live
        median, low, high = (statistics.median(rates[caching]), min(rates[caching]),
                             max(rates[caching]))
        label = "caching: first call alone" if caching else "caching off: every call at once"
        print(f"{label:<34}{f'{median:,.0f} ({low:,.0f}-{high:,.0f})':>28}"
              f"{bills[caching].usd(price):>9.3f}{tally.cache_read:>12,}"
              f"{tally.cache_write_5m + tally.cache_write_1h:>12,}")
    ratio = statistics.median(rates[True]) / statistics.median(rates[False])
    print(f"throughput with caching: {ratio:.2f}x the run without (target: within 10%); "
          f"cost {bills[True].usd(price) / bills[False].usd(price):.3f}x")


if __name__ == "__main__":
    asyncio.run(main())
