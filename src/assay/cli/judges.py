"""Commands of the judges layer: ``assay cache stats|clear``, ``assay fake-judge``,
``assay judges check|estimate``. Heavy imports happen inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from assay.cli.app import app

cache_app = typer.Typer(help="Inspect or empty the judge response cache.", no_args_is_help=True)
judges_app = typer.Typer(help="Check judge endpoints and estimate costs.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")
app.add_typer(judges_app, name="judges")

_CACHE_HELP = "Cache file (default: $ASSAY_CACHE or .assay/cache.sqlite)."


@cache_app.command("stats")
def cache_stats(
    path: Path | None = typer.Option(None, "--path", help=_CACHE_HELP),
    ttl: float | None = typer.Option(None, "--ttl", help="Count entries older than this many seconds as expired."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Entries, size, lifetime hits and misses, and entries per model."""
    import json

    from assay.judges.cache import ResponseCache, default_cache_path

    target = path or default_cache_path()
    if not target.exists():
        typer.echo(f"{target}: no cache yet", err=True)
        raise typer.Exit(1)
    with ResponseCache(target, ttl_s=ttl) as cache:
        stats = cache.stats()
    if as_json:
        typer.echo(json.dumps({
            "path": stats.path, "entries": stats.entries, "expired": stats.expired,
            "size_bytes": stats.size_bytes, "hits": stats.lifetime_hits,
            "misses": stats.lifetime_misses, "by_model": stats.by_model,
        }))
        return
    from rich.console import Console

    from assay.cli.tables.judges import cache_table

    Console().print(cache_table(stats, expired=ttl is not None))


@cache_app.command("clear")
def cache_clear(
    path: Path | None = typer.Option(None, "--path", help=_CACHE_HELP),
    older_than: float | None = typer.Option(None, "--older-than", help="Only entries older than this many seconds."),
    model: str | None = typer.Option(None, "--model", help="Only entries of this model."),
) -> None:
    """Delete cached replies (all of them, or the old ones / one model's)."""
    from assay.judges.cache import ResponseCache, default_cache_path

    target = path or default_cache_path()
    if not target.exists():
        typer.echo(f"{target}: no cache yet")
        return
    with ResponseCache(target) as cache:
        removed = cache.clear(older_than_s=older_than, model=model)
    typer.echo(f"removed {removed} cached replies from {target}")


@app.command("fake-judge")
def fake_judge(
    port: int = typer.Option(8089, "--port", help="Port on 127.0.0.1 (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", "--host"),
    policy: str = typer.Option("MET", "--policy", help="MET | UNMET | CANNOT_ASSESS | fixed:LABEL | truth:FILE.jsonl | dataset:FILE.json | perturbed:RATE:FILE.json | coin:P (MET with probability P, a fresh draw each request)"),
    error_rate: float = typer.Option(0.0, "--error-rate", min=0.0, max=1.0, help="Answer wrongly this often (deterministic per seed and request)."),
    latency_ms: float = typer.Option(0.0, "--latency-ms", min=0.0, help="Reply latency."),
    jitter_ms: float = typer.Option(0.0, "--jitter-ms", min=0.0, help="Uniform ± jitter on the latency."),
    slow_share: float = typer.Option(0.0, "--slow-share", min=0.0, max=1.0, help="Share of the "
                                     "questions (fixed per prompt, on every attempt) answered "
                                     "--slow-factor times slower: a heavy-tailed endpoint."),
    slow_factor: float = typer.Option(40.0, "--slow-factor", min=1.0, help="How much slower "
                                      "the --slow-share questions are answered."),
    rate_limit: float = typer.Option(0.0, "--429-rate", min=0.0, max=1.0, help="Share of requests answered 429."),
    retry_after: float | None = typer.Option(1.0, "--retry-after", help="Retry-After seconds on 429s."),
    server_error: float = typer.Option(0.0, "--500-rate", min=0.0, max=1.0, help="Share answered 500."),
    timeout: float = typer.Option(0.0, "--timeout-rate", min=0.0, max=1.0, help="Share never answered."),
    malformed: float = typer.Option(0.0, "--malformed-rate", min=0.0, max=1.0, help="Share with broken JSON."),
    no_json_schema: bool = typer.Option(False, "--no-json-schema", help="Reject response_format json_schema (400)."),
    seed: int = typer.Option(0, "--seed"),
    log: Path | None = typer.Option(None, "--log", help="Append every request as a JSON line to this file."),
    stages: Path | None = typer.Option(None, "--stages", help="JSON/YAML {stage: reply} answering non-grading calls by schema name."),
    rubric: list[Path] | None = typer.Option(None, "--rubric", help="Rubric or items file(s) whose multi-choice criteria "
                                      "MET/UNMET should answer (highest/lowest-valued option)."),
    models: list[str] | None = typer.Option(None, "--model", help="Also play a model under test "
                                            "of this name: NAME (answers quote the question) or "
                                            "NAME=FILE (YAML/JSON {answers: {TEXT: ANSWER}, "
                                            "default: ANSWER}). Repeatable."),
    batch_delay_s: float = typer.Option(0.0, "--batch-delay-s", min=0.0, help="Seconds a batch "
                                        "(OpenAI Batch API, Anthropic Message Batches) stays in "
                                        "progress before its requests are answered."),
    batch_expire: int = typer.Option(0, "--batch-expire", min=0, help="The first N batches "
                                     "expire with half their requests answered."),
) -> None:
    """Run the fake OpenAI-compatible (and Anthropic) judge server until Ctrl+C or SIGTERM.

    The fake judge is a stand-in that answers by rule, not a model: every criterion gets the
    --policy answer (MET by default); on a multi-choice criterion MET picks the highest-valued
    option and UNMET the lowest, which needs the rubric (--rubric); fixed:LABEL names an option.
    """
    import asyncio

    from assay.errors import ConfigError, InputError
    from assay.judges.config import LOOPBACK_HOSTS
    from assay.stop_signals import stop_on_signals
    from assay.testing import BatchScript, FakeJudgeServer, Faults, Latency, policy_from_string

    if slow_share and jitter_ms:
        typer.echo("--slow-share and --jitter-ms: choose one", err=True)
        raise typer.Exit(2)
    latency = (Latency.heavy_tail(latency_ms / 1000, slow_share, slow_factor, seed) if slow_share
               else Latency.uniform(max(0.0, latency_ms - jitter_ms) / 1000,
                                    (latency_ms + jitter_ms) / 1000)
               if jitter_ms else latency_ms / 1000)

    try:
        server = FakeJudgeServer(
            policy=policy_from_string(policy, error_rate=error_rate, seed=seed),
            latency=latency,
            faults=Faults(rate_limit=rate_limit, server_error=server_error, timeout=timeout,
                          malformed=malformed, retry_after=retry_after),
            port=port, host=host, seed=seed, json_schema=not no_json_schema, log_path=log,
            keep_log=False, stages=stages, rubrics=rubric or None,
            models=_model_scripts(models or []),
            batches=BatchScript(complete_after_s=batch_delay_s, expire=batch_expire),
        )
    except (InputError, ConfigError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None

    async def serve() -> None:
        await server.start()
        stop = stop_on_signals()  # before saying it listens: a signal sent then is not lost
        typer.echo(f"fake judge listening on {server.base_url}  (spec: openai-compatible:fake@{server.base_url})", err=True)
        typer.echo(f"a stand-in that answers by rule (--policy {policy}), not a model", err=True)
        if host not in LOOPBACK_HOSTS - {"0.0.0.0"}:
            typer.echo(f"warning: --host {host} is beyond loopback: the fake judge has no "
                       "authentication and answers anyone who can reach this port (and "
                       "--log records what they send); bind 127.0.0.1 unless other machines "
                       "must reach it", err=True)
        for name in server.models:
            typer.echo(f"model under test {name!r}: openai-compatible:{name}@{server.base_url}",
                       err=True)
        try:
            await stop.wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


@judges_app.command("check")
def judges_check(
    specs: list[str] = typer.Argument(..., help="Judge specs or names from assay.toml."),
    config: Path | None = typer.Option(None, "--config", help="Judge config file (default assay.toml)."),
) -> None:
    """Check that each judge is configured (known provider, key present) and reachable, and
    say what its server tells of itself: context size and parallel slots (llama.cpp's /props,
    vLLM's max_model_len), the requests in flight and the attempt timeout it will get."""
    import asyncio

    from assay.errors import AssayError
    from assay.judges import make_judge
    from assay.judges.secrets import redact

    async def check_all() -> int:
        failed = 0
        for spec in specs:
            try:
                judge = make_judge(spec, config_file=config)
                async with judge:
                    await judge.check()
                    server = await judge.discover_server()
                typer.echo(redact(f"ok    {judge.id}  {judge.config.base_url}"))
                if server is not None:
                    typer.echo(f"      server: {server.describe()}")
                in_flight = judge.in_flight
                typer.echo(f"      {in_flight['max_in_flight']} requests in flight "
                           f"({in_flight['source']}); attempts wait up to "
                           f"{judge.timeouts.ceiling:g} s")
            except AssayError as exc:
                failed += 1
                typer.echo(f"FAIL  {spec}: {exc}")
        return failed

    if asyncio.run(check_all()):
        raise typer.Exit(1)


@judges_app.command("estimate")
def judges_estimate(
    model: str = typer.Option(..., "--model", help="Model name as priced (e.g. gpt-4.1-mini)."),
    calls: int = typer.Option(..., "--calls", min=0),
    prompt_tokens: int = typer.Option(..., "--prompt-tokens", min=0, help="Per call."),
    completion_tokens: int = typer.Option(200, "--completion-tokens", min=0, help="Per call."),
    pricing: Path | None = typer.Option(None, "--pricing", help="Extra pricing file (JSON/TOML)."),
) -> None:
    """Dry-run estimate of tokens and dollars for a number of calls."""
    from assay.judges.pricing import Pricing, estimate_cost

    table = Pricing.default().merged(Pricing.load(pricing)) if pricing else None
    est = estimate_cost(model, prompt_tokens, completion_tokens, calls, pricing=table)
    dollars = f"${est.usd:,.4f}" if est.priced else "unknown (no price for this model)"
    typer.echo(f"{est.n_calls} calls to {model}: {est.prompt_tokens:,} prompt + "
               f"{est.completion_tokens:,} completion tokens, {dollars}")


def _model_scripts(options: list[str]) -> dict[str, Any]:
    """``--model NAME`` / ``--model NAME=FILE`` as model scripts by name."""
    from assay.errors import ConfigError
    from assay.testing.models import ModelScript, as_model_scripts

    scripts: dict[str, Any] = {}
    for option in options:
        name, _, path = option.partition("=")
        if not name:
            raise ConfigError(f"--model {option!r}: give NAME or NAME=FILE")
        scripts[name] = as_model_scripts({name: path})[name] if path else ModelScript()
    return scripts
