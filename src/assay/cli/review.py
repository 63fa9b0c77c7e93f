"""``assay review``: the local review app for a run's verdicts and rubrics."""

from __future__ import annotations

from pathlib import Path

import typer

from assay.cli.app import app


@app.command()
def review(
    run: Path = typer.Argument(..., help="A run directory (assay grade), or a rubric file "
                                         "(e.g. assay generate's output) to curate."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address; beyond loopback needs --token."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0 picks a free one)."),
    reviewer: str | None = typer.Option(
        None, "--reviewer", help="Your name, stored with each label you give through this "
                                 "server; without it a login page asks each browser for one."),
    token: str | None = typer.Option(None, "--token", envvar="ASSAY_REVIEW_TOKEN",
                                     help="Required on every request (open /?token=... once)."),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Another name the server answers to in the Host header (an IP "
                                 "address or DNS name it is reached by; repeatable). Loopback "
                                 "names and the --host address always are."),
) -> None:
    """Walk the items, see each verdict with its explanation, agree / disagree / correct it;
    accept, edit or reject rubric criteria. Labels land in RUN/labels.sqlite; reviewed rubrics
    in reviewed-rubrics/ as new versions."""
    from assay.cli.output import fail
    from assay.errors import AssayError

    try:
        from aiohttp import web

        from assay.review.app import check_binding, make_app

        check_binding(host, token)
        application = make_app(run, reviewer=reviewer, token=token, host=host,
                               allow_hosts=allow_host)
    except (AssayError, OSError) as exc:
        fail(exc)
    if port == 0:  # pick the free port here, so the address printed is the real one
        import socket

        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    who = f"as {reviewer}" if reviewer else "each browser logs in with its reviewer's name"
    typer.echo(f"reviewing {run} at http://{host}:{port}/ ({who}; Ctrl-C to stop)", err=True)
    web.run_app(application, host=host, port=port, print=None, access_log=None)
