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
  (:class:`~assay.rewards.batching.MicroBatcher`); the judges layer bounds the calls in flight
  and gives a free slot to the request with the fewest calls in flight (fair scheduling: a
  one-item request is not queued behind a thousand-item one).
* **Uploads**: a body must keep arriving (:mod:`assay.rewards.uploads`: ``body_timeout_s``
  between parts, ``min_body_rate`` bytes a second after that): a late one is a ``408`` and its
  connection is ended at once. A client that goes away mid-body is one log line and an
  ``aborted`` count in ``/metrics``. An idle connection, or one whose headers never end, is
  closed after 75 s.
* **Per-client limits**: a client (its bearer token, else its address) may have at most
  ``max_per_client`` requests being scored, and ``max_connections_per_client`` requests open
  (uploading or scored; a larger cap, so stalled uploads never take the scoring places); more
  get ``429`` with ``Retry-After``.
* **Per-request limits** (:mod:`assay.rewards.request_limits`): items, criteria per item and
  judge calls; over one is a ``413`` naming it. A criterion the server's template cannot grade
  is a ``400`` naming it. ``/v1/rewards`` refuses an item over grading's size limits with a
  ``413``; ``/get_reward`` withholds only that sample's reward (``extra_logs.oversized``).
* **Auth**: with a token every endpoint but ``/health`` needs ``Authorization: Bearer TOKEN``
  (the scheme in any case, RFC 7235) or the token as the path's first segments,
  ``/t/TOKEN/get_reward`` (for clients that send no header, such as OpenRLHF's
  ``--remote_rm_url``); both compared in constant time, and the token
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from assay.errors import AssayError, ConfigError, InputError, Issue
from assay.judges.config import LOOPBACK_HOSTS
from assay.rewards.batching import MicroBatcher
from assay.rewards.bodies import prompt_of, reward_items
from assay.rewards.metrics import ServerMetrics
from assay.rewards.openrlhf import openrlhf_items, openrlhf_reply
from assay.rewards.request_limits import (
    DEFAULT_MAX_CRITERIA,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_JUDGE_CALLS,
    RequestLimits,
)
from assay.rewards.scorer import RewardItem, RewardScorer
from assay.rewards.trl import scorer_bank
from assay.rewards.uploads import (
    DEFAULT_MIN_RATE,
    DEFAULT_TIMEOUT_S,
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    UploadLimits,
    read_body,
)
from assay.stop_signals import stop_on_signals

log = logging.getLogger("assay.serve")

DEFAULT_MAX_BODY_BYTES = 64 * 2**20
UNMATCHED = "(unmatched)"  # the one metrics label of every path no route serves
LOCAL_NAMES = LOOPBACK_HOSTS - {"0.0.0.0"}  # names that reach only this machine
MAX_ISSUES_SHOWN = 20  # a 400 names this many bad fields at most (a reply stays small)
KEEPALIVE_S = 75.0  # an idle connection's life (aiohttp's run_app default; nginx's is 75 s too)
_CLIENT = web.RequestKey("client", str)  # who sent the request (the per-client caps' key)


@dataclass(frozen=True)
class ServeConfig:
    """The server's settings; the per-client, per-request and upload limits are described in
    the module doc. ``max_connections_per_client`` (default: 8 × ``max_per_client``, at least
    128) must be above ``max_per_client``."""

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    max_per_client: int = 16
    max_connections_per_client: int | None = None
    batch_window_ms: float = 5.0
    max_batch: int = 512
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout_s: float = DEFAULT_TIMEOUT_S
    min_body_rate: float = DEFAULT_MIN_RATE
    max_items: int = DEFAULT_MAX_ITEMS
    max_criteria: int = DEFAULT_MAX_CRITERIA
    max_judge_calls: int = DEFAULT_MAX_JUDGE_CALLS
    shutdown_timeout_s: float = 60.0
    missing_reward: float = 0.0
    judge_concurrency: int | None = None  # the judge's requests in flight (None: its limits')

    def __post_init__(self) -> None:
        if self.host not in LOCAL_NAMES and not self.token:
            raise ConfigError(f"binding to {self.host} exposes the server beyond this machine: "
                              "set a bearer token (assay serve --token-env VAR)")
        if self.max_per_client < 1:
            raise ConfigError("max_per_client must be at least 1")
        if self.connection_cap <= self.max_per_client:
            raise ConfigError(f"max_connections_per_client ({self.connection_cap}) must be "
                              f"above max_per_client ({self.max_per_client}): uploads in "
                              "progress must not take the places of requests being scored")
        if self.judge_concurrency is not None and self.judge_concurrency < 1:
            raise ConfigError("judge_concurrency must be at least 1")
        _ = self.uploads, self.request_limits  # each checks its values

    @property
    def connection_cap(self) -> int:
        """Requests open per client at most (``max_connections_per_client`` or its default)."""
        return self.max_connections_per_client or max(128, 8 * self.max_per_client)

    @property
    def uploads(self) -> UploadLimits:
        return UploadLimits(self.max_body_bytes, self.body_timeout_s, self.min_body_rate)

    @property
    def request_limits(self) -> RequestLimits:
        return RequestLimits(self.max_items, self.max_criteria, self.max_judge_calls)


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
        self.uploads = self.config.uploads
        self.limits = self.config.request_limits
        self._open: Counter[str] = Counter()      # requests open per client (uploading or scored)
        self._scoring: Counter[str] = Counter()   # requests being scored per client
        self._idle = asyncio.Event()
        self._idle.set()
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.config.max_body_bytes,
                              middlewares=[self._guard])
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
        # an idle connection, or one whose headers never end, is closed after KEEPALIVE_S
        # (aiohttp's own default is an hour); it holds no place of its client's meanwhile
        self._runner = web.AppRunner(self.app(), handle_signals=False, access_log=None,
                                     keepalive_timeout=KEEPALIVE_S)
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
        if self._open[client] >= self.config.connection_cap:
            self.metrics.rejected["connection_limit"] += 1
            return _error(429, f"at most {self.config.connection_cap} requests open "
                          "per client (uploading or being scored)", {"Retry-After": "1"})
        request[_CLIENT] = client
        self._open[client] += 1
        self.metrics.in_flight += 1
        self._idle.clear()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            if request.transport is None or request.transport.is_closing():
                self.metrics.aborted["scoring"] += 1  # the client left before its answer
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        except BodyTimeout as exc:
            status = 408
            self.metrics.rejected["body_timeout"] += 1
            log.info("%s %s: 408, %s", request.method, route, exc)
            return await _closing(request, _error(408, str(exc)))
        except ClientGone as exc:
            status = 0
            self.metrics.aborted["upload"] += 1
            log.info("%s %s: %s", request.method, route, exc)
            return _error(400, str(exc))  # nobody reads it: the connection is gone
        finally:
            _release(self._open, client)
            self.metrics.in_flight -= 1
            if not self.metrics.in_flight:
                self._idle.set()
            if status:
                self.metrics.observe(route, status, time.perf_counter() - started)

    @contextmanager
    def _scoring_place(self, request: web.Request) -> Iterator[web.Response | None]:
        """Hold one of the client's ``max_per_client`` places for requests being scored, or
        yield the 429 that says there is none."""
        client = request[_CLIENT]
        if self._scoring[client] >= self.config.max_per_client:
            self.metrics.rejected["client_limit"] += 1
            yield _error(429, f"at most {self.config.max_per_client} requests being scored per "
                         "client", {"Retry-After": "1"})
            return
        self._scoring[client] += 1
        try:
            yield None
        finally:
            _release(self._scoring, client)

    def _client(self, request: web.Request) -> str | None:
        """Who is asking (for the per-client cap), or None when the token is missing or wrong:
        the ``/t/{token}/`` path segment if the route has one, else the bearer header."""
        token = self.config.token
        if token is None:
            return request.remote or "local"
        given = request.match_info.get("token")
        if given is None:
            given = bearer_token(request.headers.get("Authorization", ""))
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
        results = await self._score_request(
            request, "items", lambda body: reward_items(
                body, scorer_bank(self.scorer), criteria_required=criteria_required),
            where=lambda i: f"items[{i}].criteria", oversized_413=True)
        if isinstance(results, web.Response):
            return results
        return _json({"rewards": [r.reward for r in results],
                      "results": [r.to_dict() for r in results]})

    async def _openrlhf(self, request: web.Request) -> web.Response:
        # an oversized sample is not a 413 here: OpenRLHF would lose the whole batch, so that
        # sample's reward is withheld (its missing_reward, flagged in extra_logs) as in-process
        results = await self._score_request(
            request, "query", lambda body: openrlhf_items(self.scorer, body),
            where=lambda i: f"labels[{i}]", oversized_413=False)
        if isinstance(results, web.Response):
            return results
        return _json(openrlhf_reply(results, self.config.missing_reward))

    async def _select(self, request: web.Request) -> web.Response:
        if self.scorer.selector is None:
            return _error(404, "selection is off: start the server with --select")
        body = await self._json_body(request)
        with self._scoring_place(request) as refused:
            if refused is not None:
                return refused
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

    async def _score_request(self, request: web.Request, key: str,
                             read: Callable[[Any], list[RewardItem]], *,
                             where: Callable[[int], str], oversized_413: bool) -> Any:
        """The request's items (``read(body)``; ``body[key]`` is the list of them) scored in the
        next batch, or the error reply: 400 for a bad body or a criterion the template cannot
        grade, 413 for a request over a limit (``where(i)`` names item ``i``'s criteria) or,
        with ``oversized_413``, an item over a size limit, 502 when scoring fails."""
        with self.batcher.incoming():
            body = await self._json_body(request)
        # from here to submit nothing awaits: what the batcher queued waits for this request
        with self._scoring_place(request) as refused:
            if refused is not None:
                return refused
            listed = body.get(key) if isinstance(body, dict) else None
            if isinstance(listed, list) and (
                    why := self.limits.too_many_items(len(listed))) is not None:
                return _error(413, why)
            try:
                items = read(body)
            except InputError as exc:
                return _error(400, _issues(exc))
            if not items:
                return []
            if (refusal := self._refusal(items, where, oversized_413)) is not None:
                return refusal
            try:
                results = await self.batcher.submit(items)
            except AssayError as exc:
                return _error(502, str(exc))
        self.metrics.items += len(items)
        return results

    def _refusal(self, items: list[RewardItem], where: Callable[[int], str],
                 oversized_413: bool) -> web.Response | None:
        """The 400 or 413 of a request whose fields are all well formed, or None."""
        bank = scorer_bank(self.scorer)
        ungradable = [Issue(None, None, where(i), why) for i, item in enumerate(items)
                      if (why := self.scorer.ungradable(item.criteria)) is not None]
        if ungradable:
            return _error(400, _issues(InputError(ungradable)))
        why = self.limits.refusal([item.criteria for item in items],
                                  bank_size=len(bank) if bank is not None else 0, where=where)
        if why is not None:
            return _error(413, why)
        if oversized_413:
            for i, item in enumerate(items):  # the size limits of grading (assay.limits)
                if (why := self.scorer.refusal(item)) is not None:
                    return _error(413, f"items[{i}]: {why}")
        return None

    async def _json_body(self, request: web.Request) -> Any:
        """The request's JSON body, read within the upload limits: a late body raises
        :class:`BodyTimeout`, a client gone :class:`ClientGone` (the middleware answers both);
        a body over the size limit is a 413 and bad JSON a 400."""
        try:
            raw = await read_body(request.content, self.uploads, declared=request.content_length)
        except BodyTooLarge as exc:
            self.metrics.rejected["body_size"] += 1
            raise web.HTTPRequestEntityTooLarge(
                max_size=self.uploads.max_bytes,
                actual_size=request.content_length or self.uploads.max_bytes + 1,
                text=orjson.dumps({"error": str(exc)}).decode(),
                content_type="application/json") from None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise web.HTTPBadRequest(text=orjson.dumps({"error": f"invalid JSON: {exc}"}).decode(),
                                     content_type="application/json") from None


def bearer_token(header: str) -> str:
    """The token of an ``Authorization: Bearer TOKEN`` header ("" if it is not one); the scheme
    is matched in any case (RFC 7235 §2.1).

    >>> bearer_token("bearer abc"), bearer_token("BEARER  abc"), bearer_token("Basic abc")
    ('abc', 'abc', '')
    """
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _release(counts: Counter[str], client: str) -> None:
    counts[client] -= 1
    if not counts[client]:
        del counts[client]


async def _closing(request: web.Request, response: web.Response) -> web.Response:
    """Send ``response`` and end the connection's sending side at once (the client reads the
    reply and its end); what is left of a late body is then read and dropped for 10 s at most
    (aiohttp's lingering close), holding no place of the client's."""
    response.force_close()
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:  # the client went away meanwhile: nobody to answer
        return response
    transport = request.transport
    if transport is not None and transport.can_write_eof():
        transport.write_eof()
    return response


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
