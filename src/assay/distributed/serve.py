"""``assay serve`` replicas on Ray Serve: the same reward server, N copies behind Serve's proxy.

Each replica is a Ray Serve deployment replica that runs the reward server of
:mod:`assay.rewards.server` unchanged (its own scorer, judge, micro-batcher and limits) on a
loopback port, and hands it every request Serve routes to it: same paths (``/v1/rewards``,
``/get_reward``, ``/v1/select``, ``/health``, ``/metrics``), same bodies, same status codes,
same bearer-token check. Serve's HTTP proxy spreads requests over the replicas and restarts a
replica that dies.

Several servers share a cluster: each is its own Serve app (``assay-serve``, ``assay-serve-2``,
... or ``--app-name``) under its own path prefix (``http://HOST:PORT/NAME/v1/rewards``), an app
of the same name is never replaced, the URL printed is the one that answered its ``/health``
(through the proxy the cluster already runs, if it runs one), and stopping a server (SIGINT or
SIGTERM) deletes its app alone.

Example (needs Ray Serve: ``pip install 'ray[serve]'``)::

    deployed = start_replicas({"judge": "vllm:Qwen/Qwen3-8B", "bank": "health-score"},
                              replicas=4, host="127.0.0.1", port=8000, token=None)
    print(deployed.url)           # http://127.0.0.1:8000/assay-serve
    stop_replicas(deployed.name)
"""

from __future__ import annotations

import asyncio
import itertools
import re
from dataclasses import dataclass
from typing import Any

from assay.errors import ConfigError
from assay.judges.config import LOOPBACK_HOSTS

APP_PREFIX = "assay-serve"
READY_TIMEOUT_S = 120.0
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
        path = own_path(request.scope)
        target = url + path + (f"?{request.url.query}" if request.url.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS}
        async with self._http.request(request.method, target, data=await request.body(),
                                      headers=headers) as reply:
            body = await reply.read()
            kept = {k: v for k, v in reply.headers.items() if k.lower() in RETURNED_HEADERS}
            return Response(body, status_code=reply.status, headers=kept)


def own_path(scope: dict[str, Any]) -> str:
    """A request's path below the app's route prefix (Serve keeps the prefix in the path and
    puts it in ``root_path``).

    Example:
        >>> own_path({"path": "/assay-serve-2/v1/rewards", "root_path": "/assay-serve-2"})
        '/v1/rewards'
        >>> own_path({"path": "/health", "root_path": ""})
        '/health'
    """
    path, root = scope.get("path", "/"), scope.get("root_path", "")
    if root and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    return path or "/"


def reward_app(scorer_options: dict[str, Any], *, replicas: int = 2,
               server_options: dict[str, Any] | None = None, name: str = APP_PREFIX) -> Any:
    """The Ray Serve application: ``replicas`` copies of the reward server built by
    :func:`assay.rewards.setup.build_scorer` with ``scorer_options``."""
    try:
        from ray import serve
    except ImportError:
        raise ConfigError("--replicas needs Ray Serve: pip install 'ray[serve]'") from None
    if replicas < 1:
        raise ConfigError("--replicas must be at least 1")
    deployment = serve.deployment(RewardReplica, name=name, num_replicas=replicas,
                                  ray_actor_options={"num_cpus": 0})
    return deployment.bind(scorer_options, server_options or {})


@dataclass(frozen=True)
class Deployment:
    """One ``assay serve --replicas`` server on a cluster: its Serve app and the URL that
    answers for it (checked before it is returned); ``note`` says when the cluster's proxy was
    already running elsewhere than ``--host``/``--port`` asked."""

    name: str
    url: str
    note: str | None = None


def app_name(wanted: str | None, taken: set[str]) -> str:
    """The Serve app name of a new server: ``wanted`` if free, else the first free of
    ``assay-serve``, ``assay-serve-2``, ... (an app is never replaced silently).

    Example:
        >>> app_name(None, {"assay-serve", "other"}), app_name("rm-a", set())
        ('assay-serve-2', 'rm-a')
    """
    if wanted is not None:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", wanted):
            raise ConfigError(f"--app-name {wanted!r}: use letters, digits, '.', '_' and '-' "
                              "(it is also the URL's path prefix)")
        if wanted in taken:
            raise ConfigError(f"--app-name {wanted}: a Serve app of that name is already "
                              "deployed on this cluster (another assay serve?); pick another "
                              "name or stop that server")
        return wanted
    return next(name for n in itertools.count(1)
                if (name := APP_PREFIX if n == 1 else f"{APP_PREFIX}-{n}") not in taken)


def start_replicas(scorer_options: dict[str, Any], *, replicas: int, host: str, port: int,
                   token: str | None, address: str | None = None,
                   server_options: dict[str, Any] | None = None,
                   name: str | None = None, ready_timeout_s: float = READY_TIMEOUT_S) -> Deployment:
    """Start Ray (or join ``address``) and Serve's proxy on ``host:port`` (or use the cluster's
    proxy if Serve already runs there), deploy the replicas as their own app at ``/NAME``, and
    return once its ``/health`` answers through the proxy. Beyond loopback a token is required,
    as for ``assay serve``, and so it is when the cluster's proxy already listens beyond it."""
    from assay.distributed.ray_env import ensure_ray

    if not _is_loopback(host) and not token:
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
    proxy_host, proxy_port = _proxy_address(host, port)
    if not _is_loopback(proxy_host) and not token:
        raise ConfigError(f"Ray Serve's proxy on this cluster already listens on {proxy_host}:"
                          f"{proxy_port}, beyond loopback: set a bearer token (assay serve "
                          "--token-env VAR)")
    name = app_name(name, set(serve.status().applications))
    options = {**(server_options or {}), "token": token}
    serve.run(reward_app(scorer_options, replicas=replicas, server_options=options, name=name),
              name=name, route_prefix=f"/{name}")
    url = f"http://{_url_host(proxy_host)}:{proxy_port}/{name}"
    try:
        _wait_until_answering(url, proxy_host, ready_timeout_s)
    except ConfigError:
        serve.delete(name)
        raise
    note = None
    if (proxy_host, proxy_port) != (host, port):
        note = (f"Ray Serve's proxy on this cluster was already running on {proxy_host}:"
                f"{proxy_port}; --host {host} --port {port} were not applied")
    return Deployment(name, url, note)


def stop_replicas(name: str) -> None:
    """Delete this server's Serve app, and only it: other apps and Serve's proxy stay."""
    from ray import serve

    serve.delete(name)


def _proxy_address(host: str, port: int) -> tuple[str, int]:
    """Where the cluster's Serve proxy listens: ours, or the one already running (Serve
    ignores new HTTP options once it runs)."""
    try:
        from ray.serve.context import _get_global_client

        config = _get_global_client().http_config
        return str(config.host), int(config.port)
    except (ImportError, AttributeError):  # no such internals: the health check still decides
        return host, port


def _wait_until_answering(url: str, proxy_host: str, timeout_s: float) -> None:
    """Poll ``url/health`` (through the proxy on this machine when it listens on every
    interface) until it answers 200."""
    import time
    import urllib.error
    import urllib.request

    probe = url if proxy_host not in ("0.0.0.0", "::", "") else url.replace(
        f"//{_url_host(proxy_host)}:", "//127.0.0.1:", 1)
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{probe}/health", timeout=5) as reply:
                if reply.status == 200:
                    return
                last = f"HTTP {reply.status}"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.5)
    raise ConfigError(f"the replicas did not answer at {probe}/health within {timeout_s:g} s "
                      f"({last}); the app was deleted")


def _is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS - {"0.0.0.0"}


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
