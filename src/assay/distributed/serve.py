"""``assay serve`` replicas on Ray Serve: the same reward server, N copies behind Serve's proxy.

Each replica is a Ray Serve deployment replica that runs the reward server of
:mod:`assay.rewards.server` unchanged (its own scorer, judge, micro-batcher and limits) on a
loopback port, and hands it every request Serve routes to it: same paths (``/v1/rewards``,
``/get_reward``, ``/v1/select``, ``/health``, ``/metrics``), same bodies, same status codes,
same bearer-token check. Serve's HTTP proxy spreads requests over the replicas and restarts a
replica that dies.

Example (needs Ray Serve: ``pip install 'ray[serve]'``)::

    app = reward_app({"judge": "vllm:Qwen/Qwen3-8B", "bank": "health-score"}, replicas=4)
    serve.run(app, name="assay-serve", route_prefix="/")
"""

from __future__ import annotations

import asyncio
from typing import Any

from assay.errors import ConfigError

FORWARDED_HEADERS = ("authorization", "content-type", "accept")
RETURNED_HEADERS = ("content-type", "retry-after")


class RewardReplica:
    """One replica: the reward server on 127.0.0.1, started on the first request."""

    def __init__(self, scorer_options: dict[str, Any], server_options: dict[str, Any]):
        self._scorer_options = scorer_options
        self._server_options = server_options
        self._url: str | None = None
        self._http: Any = None
        self._server: Any = None
        self._starting = asyncio.Lock()

    async def _start(self) -> str:
        async with self._starting:
            if self._url is None:
                import aiohttp

                from assay.rewards.server import RewardServer, ServeConfig
                from assay.rewards.setup import build_scorer

                config = ServeConfig(host="127.0.0.1", port=0, **self._server_options)
                self._server = RewardServer(build_scorer(**self._scorer_options), config)
                self._url = await self._server.start()
                self._http = aiohttp.ClientSession(auto_decompress=False)
        return self._url

    async def __call__(self, request: Any) -> Any:
        from starlette.responses import Response

        url = self._url or await self._start()
        target = url + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS}
        async with self._http.request(request.method, target, data=await request.body(),
                                      headers=headers) as reply:
            body = await reply.read()
            kept = {k: v for k, v in reply.headers.items() if k.lower() in RETURNED_HEADERS}
            return Response(body, status_code=reply.status, headers=kept)


def reward_app(scorer_options: dict[str, Any], *, replicas: int = 2,
               server_options: dict[str, Any] | None = None) -> Any:
    """The Ray Serve application: ``replicas`` copies of the reward server built by
    :func:`assay.rewards.setup.build_scorer` with ``scorer_options``."""
    try:
        from ray import serve
    except ImportError:
        raise ConfigError("--replicas needs Ray Serve: pip install 'ray[serve]'") from None
    if replicas < 1:
        raise ConfigError("--replicas must be at least 1")
    deployment = serve.deployment(RewardReplica, name="assay-serve", num_replicas=replicas,
                                  ray_actor_options={"num_cpus": 0})
    return deployment.bind(scorer_options, server_options or {})


def start_replicas(scorer_options: dict[str, Any], *, replicas: int, host: str, port: int,
                   token: str | None, address: str | None = None,
                   server_options: dict[str, Any] | None = None) -> str:
    """Start Ray (or join ``address``), Serve's proxy on ``host:port`` and the replicas; return
    the base URL. Beyond loopback a token is required, as for ``assay serve``."""
    from assay.distributed.ray_env import ensure_ray
    from assay.judges.config import LOOPBACK_HOSTS

    if host not in LOOPBACK_HOSTS - {"0.0.0.0"} and not token:
        raise ConfigError(f"binding to {host} exposes the server beyond this machine: "
                          "set a bearer token (assay serve --token-env VAR)")
    ensure_ray(address, num_cpus=None if address else max(2, replicas))
    from ray import serve

    if port == 0:  # Serve's proxy needs a concrete port
        import socket

        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    serve.start(http_options={"host": host, "port": port})
    options = {**(server_options or {}), "token": token}
    serve.run(reward_app(scorer_options, replicas=replicas, server_options=options),
              name="assay-serve", route_prefix="/")
    return f"http://{host}:{port}"
