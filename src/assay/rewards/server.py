"""``assay serve``: rewards and per-criterion grading over HTTP, for RL trainers.

Endpoints (JSON in and out):

=======================  ============================================================  =====
``GET /health``          status, bank, judge, whether selection is on                  open
``GET /metrics``         Prometheus text: requests, latency histogram, items, batches,
                         judge calls, rejections, selection calls saved                 auth
``POST /v1/rewards``     ``{"items": [{"prompt" | "messages", "completion",
                         "criteria"?}]}`` → ``{"rewards": [...], "results": [...]}``
                         (each result: reward, raw, criteria, met per criterion, failed)  auth
``POST /get_reward``     OpenRLHF's remote reward model (:mod:`assay.rewards.openrlhf`)  auth
``POST /v1/select``      ``{"prompt" | "messages"}`` → the selection (with ``--select``)  auth
=======================  ============================================================  =====

* **Batching**: items of concurrent requests are scored together
  (:class:`~assay.rewards.batching.MicroBatcher`); the judges layer bounds the calls in flight.
* **Per-client limits**: a client (its bearer token, else its address) may have at most
  ``max_per_client`` requests in progress; more get ``429`` with ``Retry-After``.
* **Auth**: with a token every endpoint but ``/health`` needs ``Authorization: Bearer TOKEN``
  or the token as the path's first segments, ``/t/TOKEN/get_reward`` (for clients that send no
  header, such as OpenRLHF's ``--remote_rm_url``); both compared in constant time, and the token
  is never logged nor a metrics label (routes are counted by template, ``/t/{token}/...``).
  Binding beyond loopback without a token is refused. Without a token (loopback only), a POST
  must say ``Content-Type: application/json`` (415 otherwise) and name a loopback ``Host``
  (421 otherwise): a web page the user visits can send neither a cross-site ``text/plain``
  form nor, through DNS rebinding, a foreign host, so it cannot spend judge calls.
* **Isolation**: every field of a request is checked before it joins a batch (see
  :mod:`assay.rewards.bodies`): a bad one is that request's 400 naming every bad field, and the
  requests batched with it are scored.
* **Graceful shutdown**: on SIGTERM/SIGINT (or :meth:`RewardServer.stop`) new requests get
  ``503``, requests in progress finish (up to ``shutdown_timeout_s``), then the judge's cache is
  flushed and its connections closed.

Example::

    server = RewardServer(build_scorer("vllm:Qwen/Qwen3-8B"), ServeConfig(port=8000))
    await server.start()      # ... await server.stop()
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from assay.errors import AssayError, ConfigError, InputError
from assay.judges.config import LOOPBACK_HOSTS
from assay.rewards.batching import MicroBatcher
from assay.rewards.bodies import prompt_of, reward_items
from assay.rewards.metrics import ServerMetrics
from assay.rewards.openrlhf import openrlhf_items, openrlhf_reply
from assay.rewards.scorer import RewardItem, RewardScorer
from assay.rewards.trl import scorer_bank
from assay.stop_signals import stop_on_signals

log = logging.getLogger("assay.serve")

DEFAULT_MAX_BODY_BYTES = 64 * 2**20
UNMATCHED = "(unmatched)"  # the one metrics label of every path no route serves
LOCAL_NAMES = LOOPBACK_HOSTS - {"0.0.0.0"}  # names that reach only this machine
MAX_BODY_BYTES = web.AppKey("max_body_bytes", int)
MAX_ISSUES_SHOWN = 20  # a 400 names this many bad fields at most (a reply stays small)


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    max_per_client: int = 16
    batch_window_ms: float = 5.0
    max_batch: int = 512
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    shutdown_timeout_s: float = 60.0
    missing_reward: float = 0.0
    judge_concurrency: int | None = None  # the judge's requests in flight (None: its limits')

    def __post_init__(self) -> None:
        if self.host not in LOCAL_NAMES and not self.token:
            raise ConfigError(f"binding to {self.host} exposes the server beyond this machine: "
                              "set a bearer token (assay serve --token-env VAR)")
        if self.max_per_client < 1:
            raise ConfigError("max_per_client must be at least 1")
        if self.max_body_bytes < 1:
            raise ConfigError("max_body_bytes must be at least 1")
        if self.judge_concurrency is not None and self.judge_concurrency < 1:
            raise ConfigError("judge_concurrency must be at least 1")


class RewardServer:
    def __init__(self, scorer: RewardScorer, config: ServeConfig | None = None):
        self.scorer = scorer
        self.config = config or ServeConfig()
        if self.config.judge_concurrency is not None:
            scorer.judge.limiter.set_max_in_flight(self.config.judge_concurrency)
        self.metrics = ServerMetrics()
        self.batcher = MicroBatcher(scorer, window_s=self.config.batch_window_ms / 1000,
                                    max_batch=self.config.max_batch)
        self.draining = False
        self._per_client: Counter[str] = Counter()
        self._idle = asyncio.Event()
        self._idle.set()
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.config.max_body_bytes,
                              middlewares=[self._guard])
        app[MAX_BODY_BYTES] = self.config.max_body_bytes
        app.router.add_get("/health", self._health)
        # With a token, every guarded route also answers under /t/{token}/ (see _client).
        prefixes = ("", "/t/{token}") if self.config.token else ("",)
        for prefix in prefixes:
            app.router.add_get(prefix + "/metrics", self._metrics)
            app.router.add_post(prefix + "/v1/rewards", self._rewards)
            app.router.add_post(prefix + "/get_reward", self._openrlhf)
            app.router.add_post(prefix + "/v1/select", self._select)
        return app

    async def start(self) -> str:
        """Start listening; returns the base URL."""
        self._runner = web.AppRunner(self.app(), handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.config.port,
                           shutdown_timeout=self.config.shutdown_timeout_s)
        await site.start()
        addresses = self._runner.addresses
        self.port = addresses[0][1] if addresses else self.config.port
        return f"http://{self.config.host}:{self.port}"

    async def stop(self) -> None:
        """Refuse new requests, let those in progress finish, close the judge."""
        self.draining = True
        try:
            await asyncio.wait_for(self._idle.wait(), self.config.shutdown_timeout_s)
        except TimeoutError:
            log.warning("shutdown: %d requests still in progress after %.0f s",
                        self.metrics.in_flight, self.config.shutdown_timeout_s)
        await self.batcher.drain()
        if self._runner is not None:
            await self._runner.cleanup()
        await self.scorer.aclose()

    async def serve_forever(self, on_ready: Any = None) -> None:
        """Run until SIGTERM or SIGINT, then shut down gracefully."""
        url = await self.start()
        stop = stop_on_signals()
        if on_ready is not None:
            on_ready(url)
        await stop.wait()
        await self.stop()

    # -- middleware: auth, drain, per-client limits, metrics ---------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        route = route_template(request)
        started = time.perf_counter()
        if route == "/health":
            return await handler(request)
        client = self._client(request)
        if client is None:
            self.metrics.rejected["auth"] += 1
            return _error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
        refusal = self._tokenless_refusal(request)
        if refusal is not None:
            return refusal
        if self.draining:
            self.metrics.rejected["draining"] += 1
            return _error(503, "the server is shutting down")
        if self._per_client[client] >= self.config.max_per_client:
            self.metrics.rejected["client_limit"] += 1
            return _error(429, f"at most {self.config.max_per_client} requests in progress per "
                          "client", {"Retry-After": "1"})
        self._per_client[client] += 1
        self.metrics.in_flight += 1
        self._idle.clear()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            self._per_client[client] -= 1
            if not self._per_client[client]:
                del self._per_client[client]
            self.metrics.in_flight -= 1
            if not self.metrics.in_flight:
                self._idle.set()
            self.metrics.observe(route, status, time.perf_counter() - started)

    def _client(self, request: web.Request) -> str | None:
        """Who is asking (for the per-client cap), or None when the token is missing or wrong:
        the ``/t/{token}/`` path segment if the route has one, else the bearer header."""
        token = self.config.token
        if token is None:
            return request.remote or "local"
        given = request.match_info.get("token")
        if given is None:
            header = request.headers.get("Authorization", "")
            given = header[7:] if header.startswith("Bearer ") else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            return None
        return f"token:{request.remote}"

    def _tokenless_refusal(self, request: web.Request) -> web.Response | None:
        """Without a token the server is on loopback, and only a web page the user visits can
        reach it uninvited: refuse a POST that is not JSON (a cross-site form or ``text/plain``
        fetch, which needs no CORS preflight) and a foreign ``Host`` (DNS rebinding)."""
        if self.config.token is not None:
            return None
        if _host_name(request.host) not in LOCAL_NAMES:
            self.metrics.rejected["host"] += 1
            return _error(421, "without a token only a loopback Host is served (set a token to "
                          "serve other names)")
        if request.method == "POST" and request.content_type != "application/json":
            self.metrics.rejected["content_type"] += 1
            return _error(415, "send Content-Type: application/json (without a token the "
                          "server accepts only JSON bodies)")
        return None

    # -- handlers ------------------------------------------------------------------------------
    async def _health(self, request: web.Request) -> web.Response:
        selector = self.scorer.selector
        bank = getattr(selector, "bank", None)
        fixed = self.scorer.fixed
        return _json({"status": "draining" if self.draining else "ok",
                      "judge": self.scorer.judge.id,
                      "selection": selector is not None,
                      "bank": getattr(bank, "id", None),
                      "bank_version": getattr(bank, "version", None),
                      "criteria": len(bank.criteria) if bank is not None
                      else (len(fixed) if fixed is not None else None)},
                     status=503 if self.draining else 200)

    async def _metrics(self, request: web.Request) -> web.Response:
        judge = self.scorer.judge
        gauges = {"batches_total": self.batcher.batches,
                  "batched_items_total": self.batcher.items,
                  "judge_calls_total": judge.calls,
                  "judge_cost_usd_total": judge.total_cost_usd,
                  "selection_calls_saved_total": getattr(self.scorer.selector, "calls_saved", 0)}
        if judge.cache is not None:
            gauges["judge_cache_hits_total"] = judge.cache.hits
        gauges.update(self.scorer.failures.as_metrics())
        return web.Response(text=self.metrics.render(gauges),
                            content_type="text/plain", charset="utf-8")

    async def _rewards(self, request: web.Request) -> web.Response:
        criteria_required = self.scorer.fixed is None and self.scorer.selector is None
        results = await self._score_request(request, lambda body: reward_items(
            body, scorer_bank(self.scorer), criteria_required=criteria_required))
        if isinstance(results, web.Response):
            return results
        return _json({"rewards": [r.reward for r in results],
                      "results": [r.to_dict() for r in results]})

    async def _openrlhf(self, request: web.Request) -> web.Response:
        results = await self._score_request(request,
                                            lambda body: openrlhf_items(self.scorer, body))
        if isinstance(results, web.Response):
            return results
        return _json(openrlhf_reply(results, self.config.missing_reward))

    async def _select(self, request: web.Request) -> web.Response:
        if self.scorer.selector is None:
            return _error(404, "selection is off: start the server with --select")
        body = await _body(request)
        try:
            if not isinstance(body, dict):
                raise InputError('expected {"prompt": TEXT} or {"messages": [...]}')
            item = RewardItem.of(prompt_of(body, "body"), "")
        except InputError as exc:
            return _error(400, _issues(exc))
        if (why := self.scorer.refusal(item)) is not None:
            return _error(413, why)
        try:
            selection = await self.scorer.selector.select(item.messages)
        except AssayError as exc:
            return _error(502, str(exc))
        return _json(selection.to_dict())

    async def _score_request(self, request: web.Request, read: Any) -> Any:
        """The request's items (``read(body)``) scored in the next batch, or the error reply:
        400 for a bad body, 413 for an item over a size limit, 502 when scoring fails."""
        with self.batcher.incoming():
            try:
                items = read(await _body(request))
            except InputError as exc:
                return _error(400, _issues(exc))
            if not items:
                return []
            for i, item in enumerate(items):  # the size limits of grading (assay.limits)
                if (why := self.scorer.refusal(item)) is not None:
                    return _error(413, f"items[{i}]: {why}")
        try:
            results = await self.batcher.submit(items)
        except AssayError as exc:
            return _error(502, str(exc))
        self.metrics.items += len(items)
        return results


def route_template(request: web.Request) -> str:
    """The route that serves ``request``, as registered (``/t/{token}/get_reward``, never the
    token itself), or one label for every path no route serves: metrics stay bounded.

    The route is found before middlewares run, so this reads it without routing again."""
    resource = request.match_info.route.resource
    if resource is None or isinstance(request.match_info.http_exception, web.HTTPException):
        return UNMATCHED
    return resource.canonical


def _host_name(host: str) -> str:
    """``Host`` without its port: ``[::1]:8000`` -> ``::1``, ``localhost:80`` -> ``localhost``."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _body(request: web.Request) -> Any:
    try:
        return orjson.loads(await request.read())
    except web.HTTPRequestEntityTooLarge as exc:
        limit = request.app[MAX_BODY_BYTES]
        message = f"the request body is over the server's limit of {limit:,} bytes " \
                  "(assay serve --max-body-bytes)"
        raise web.HTTPRequestEntityTooLarge(
            max_size=limit, actual_size=request.content_length or limit + 1,
            text=orjson.dumps({"error": message}).decode(),
            content_type="application/json") from exc
    except orjson.JSONDecodeError as exc:
        raise web.HTTPBadRequest(text=orjson.dumps({"error": f"invalid JSON: {exc}"}).decode(),
                                 content_type="application/json") from None


def _issues(exc: InputError, shown: int = MAX_ISSUES_SHOWN) -> str:
    """The error's issues, one a line, the first ``shown`` of them and how many more."""
    lines = [str(issue) for issue in exc.issues[:shown]]
    if len(exc.issues) > shown:
        lines.append(f"... and {len(exc.issues) - shown} more")
    return "\n".join(lines)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps({"error": message}), status=status,
                        content_type="application/json", headers=headers)
