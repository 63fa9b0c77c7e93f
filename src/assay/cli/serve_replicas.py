"""The work behind ``assay serve --replicas N``: start the replicas, wait for a signal, stop."""

from __future__ import annotations

import signal
import sys
import threading
from dataclasses import asdict
from typing import Any


def serve_replicas(scorer_options: dict[str, Any], config: Any, *, replicas: int,
                   address: str | None) -> None:
    """Serve ``replicas`` copies until SIGINT or SIGTERM, then shut Serve down."""
    from assay.distributed.serve import start_replicas

    server_options = {k: v for k, v in asdict(config).items() if k not in ("host", "port", "token")}
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    url = start_replicas({k: (str(v) if hasattr(v, "as_posix") else v)
                          for k, v in scorer_options.items()},
                         replicas=replicas, host=config.host, port=config.port,
                         token=config.token, address=address, server_options=server_options)
    print(f"assay serve: listening on {url} ({replicas} replicas on Ray Serve, "
          f"{'token required' if config.token else 'no token'})", file=sys.stderr, flush=True)
    stop.wait()
    from ray import serve

    serve.shutdown()
    print("assay serve: stopped", file=sys.stderr, flush=True)
