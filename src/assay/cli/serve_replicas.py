"""The work behind ``assay serve --replicas N``: deploy this server's app, wait for a signal,
delete that app (and only it)."""

from __future__ import annotations

import signal
import sys
import threading
from dataclasses import asdict
from typing import Any


def serve_replicas(scorer_options: dict[str, Any], config: Any, *, replicas: int,
                   address: str | None, app_name: str | None = None) -> None:
    """Serve ``replicas`` copies until SIGINT or SIGTERM, then delete this server's Serve app;
    the cluster's other apps and Serve's proxy keep running."""
    from assay.distributed.serve import start_replicas, stop_replicas

    server_options = {k: v for k, v in asdict(config).items() if k not in ("host", "port", "token")}
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    deployed = start_replicas({k: (str(v) if hasattr(v, "as_posix") else v)
                               for k, v in scorer_options.items()},
                              replicas=replicas, host=config.host, port=config.port,
                              token=config.token, address=address, server_options=server_options,
                              name=app_name)
    for sig in (signal.SIGTERM, signal.SIGINT):  # ray.init put its own SIGTERM handler in
        signal.signal(sig, on_signal)
    if deployed.note:
        print(f"assay serve: {deployed.note}", file=sys.stderr, flush=True)
    print(f"assay serve: listening on {deployed.url} (Serve app {deployed.name}, {replicas} "
          f"replicas on Ray Serve, {'token required' if config.token else 'no token'})",
          file=sys.stderr, flush=True)
    while not stop.wait(0.5):  # wake up now and then: a signal handler runs between waits
        pass
    stop_replicas(deployed.name)
    print(f"assay serve: stopped (Serve app {deployed.name} deleted)", file=sys.stderr, flush=True)
