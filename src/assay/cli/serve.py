"""``assay serve``: the reward and grading HTTP server for RL trainers. Heavy imports happen
inside the command."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app

# assay.rewards.server's, assay.rewards.uploads' and assay.rewards.request_limits' defaults
# (not imported here: heavy)
DEFAULT_MAX_BODY_BYTES = 64 * 2**20
DEFAULT_BODY_TIMEOUT_S, DEFAULT_MIN_BODY_RATE = 10.0, 16 * 1024
DEFAULT_MAX_ITEMS, DEFAULT_MAX_CRITERIA, DEFAULT_MAX_JUDGE_CALLS = 1024, 128, 32_768


@app.command()
def serve(
    judge: str = typer.Option(..., "--judge", "-j", help="The reward judge (a judge spec)."),
    bank: str = typer.Option("health-score", "--bank", help="'health-score', Health-SCORE's "
                             "baselines 'single-axis', 'multi-axes' or 'llm-generated' (a rubric "
                             "written per prompt by --rubric-writer), a bank file, or 'none' "
                             "(every request brings its criteria)."),
    rubric_writer: str | None = typer.Option(None, "--rubric-writer", help="With --bank "
                                             "llm-generated: the model writing each prompt's "
                                             "rubric (default: the reward judge's model)."),
    select: bool = typer.Option(False, "--select/--all-criteria", help="Per-prompt relevance "
                                "selection (Adaptive) or every bank criterion (Non-Adaptive)."),
    selector_judge: str | None = typer.Option(None, "--selector-judge", help="The relevance "
                                              "model (default: the reward judge's model)."),
    threshold: int = typer.Option(4, "--threshold", help="Relevance threshold (1-5)."),
    fallback: str = typer.Option("best", "--fallback", help="When nothing passes: best, all, none."),
    store: Path = typer.Option(Path("assay-selection.sqlite"), "--store",
                               help="Where selection calls are kept (reused across restarts; "
                               "'assay bank select --store' can fill it before training)."),
    cache: Path | None = typer.Option(None, "--cache", help="Judge response cache file."),
    config_file: Path | None = typer.Option(None, "--config", help="Judge config file "
                                            "(assay.toml): --judge may name a judge defined there."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Requests in "
                                           "flight to the judge (default: its "
                                           "limits.max_in_flight, 64)."),
    template: str = typer.Option("healthbench", "--template", help="healthbench or assay."),
    normalization: str = typer.Option("minmax", "--normalization",
                                      help="minmax, positive, count or none."),
    on_failure: str = typer.Option("no-reward", "--on-failure", help="A sample with a failed "
                                   "criterion call: no-reward (null; OpenRLHF gets 0.0), unmet, "
                                   "penalty-met or skip."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (beyond loopback a "
                             "token is required)."),
    port: int = typer.Option(8000, "--port", help="Port (0: any free one)."),
    token_env: str = typer.Option("ASSAY_SERVE_TOKEN", "--token-env", help="Environment "
                                  "variable holding the bearer token (never on the command line)."),
    max_per_client: int = typer.Option(16, "--max-per-client", min=1, help="Requests being "
                                       "scored per client; more get 429."),
    max_connections_per_client: int | None = typer.Option(
        None, "--max-connections-per-client", min=2, help="Requests open per client, uploading "
        "or scored (default: 8 x --max-per-client, at least 128); more get 429."),
    body_timeout_s: float = typer.Option(
        DEFAULT_BODY_TIMEOUT_S, "--body-timeout-s", min=0.001, help="The longest wait for the "
        "next part of a request body; a late body gets 408 and its connection is closed."),
    min_body_rate: float = typer.Option(
        DEFAULT_MIN_BODY_RATE, "--min-body-rate", min=1, help="Bytes a second a body must "
        "keep arriving at after its first --body-timeout-s (else 408)."),
    max_items: int = typer.Option(DEFAULT_MAX_ITEMS, "--max-items", min=1, help="Items per "
                                  "request at most; more is a 413."),
    max_criteria: int = typer.Option(DEFAULT_MAX_CRITERIA, "--max-criteria", min=1,
                                     help="Criteria an item may bring at most; more is a 413."),
    max_judge_calls: int = typer.Option(DEFAULT_MAX_JUDGE_CALLS, "--max-judge-calls", min=1,
                                        help="Judge calls per request at most (items x their "
                                        "criteria); more is a 413."),
    batch_window_ms: float = typer.Option(
        5.0, "--batch-window-ms", help="Micro-batching: the longest a request waits to share a "
        "batch, only while one is being scored and another request is being read."),
    max_batch: int = typer.Option(512, "--max-batch", help="Items per scorer batch at most."),
    max_body_bytes: int = typer.Option(DEFAULT_MAX_BODY_BYTES, "--max-body-bytes", min=1,
                                       help="Largest request body; larger ones get 413."),
    replicas: int | None = typer.Option(None, "--replicas", min=1, help="Run this many "
                                        "replicas on Ray Serve behind one address."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="With --replicas: join "
                                           "this Ray cluster (default: a local instance)."),
    budget: float | None = typer.Option(None, "--budget", min=0, help="Stop calling the judges "
                                        "after this many USD (every reward is then null)."),
    app_name: str | None = typer.Option(None, "--app-name", help="With --replicas: this "
                                        "server's Serve app name and URL prefix (default: the "
                                        "first free of assay-serve, assay-serve-2, ...)."),
) -> None:
    """Serve rewards over HTTP: /v1/rewards, OpenRLHF's /get_reward, /v1/select, /health,
    /metrics."""
    import asyncio
    import os
    import sys

    from assay.cli.output import fail
    from assay.errors import AssayError

    try:
        if replicas is not None:  # Ray's set-up first: its errors come before any heavy import
            from assay.distributed.ray_auth import check_ray_setup

            check_ray_setup(ray_address)
        from assay.rewards.server import RewardServer, ServeConfig
        from assay.rewards.setup import build_scorer

        config = ServeConfig(host=host, port=port, token=os.environ.get(token_env) or None,
                             max_per_client=max_per_client,
                             max_connections_per_client=max_connections_per_client,
                             batch_window_ms=batch_window_ms, max_batch=max_batch,
                             max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s,
                             min_body_rate=min_body_rate, max_items=max_items,
                             max_criteria=max_criteria, max_judge_calls=max_judge_calls,
                             judge_concurrency=concurrency)

        async def main() -> None:
            scorer = build_scorer(judge, bank=None if bank == "none" else bank, select=select,
                                  selector_judge=selector_judge,
                                  threshold=threshold, fallback=fallback, store=store,
                                  cache=cache, template=template, normalization=normalization,
                                  budget_usd=budget, on_failure=on_failure,
                                  config_file=config_file, rubric_writer=rubric_writer)
            server = RewardServer(scorer, config)
            await server.serve_forever(on_ready=lambda url: print(
                f"assay serve: listening on {url} (judge {scorer.judge.id}, "
                f"{'token required' if config.token else 'no token'})", file=sys.stderr,
                flush=True))
            print("assay serve: stopped", file=sys.stderr, flush=True)

        if replicas is not None:  # the same server, N copies on Ray Serve
            from assay.cli.serve_replicas import serve_replicas

            if budget is not None:  # each replica would hold a budget of its own
                raise ValueError("--budget: not with --replicas (each replica would spend it)")

            serve_replicas({"judge": judge, "bank": None if bank == "none" else bank,
                            "select": select, "selector_judge": selector_judge,
                            "threshold": threshold, "fallback": fallback, "store": store,
                            "cache": cache, "template": template,
                            "normalization": normalization, "on_failure": on_failure,
                            "config_file": config_file, "rubric_writer": rubric_writer},
                           config, replicas=replicas, address=ray_address,
                           app_name=app_name)
            return
        asyncio.run(main())
    except (AssayError, OSError, ValueError) as exc:
        fail(exc)
