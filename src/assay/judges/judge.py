"""The :class:`Judge`: one endpoint + model, asked :class:`JudgeRequest`s, answering
:class:`JudgeReply`s. It never raises for model, transport or parse trouble: every problem
comes back as a classified :class:`Failure` with the raw reply.

One ``ask`` = budget check → cache lookup → (limits → budget reservation → HTTP → retry)* →
parse → up to ``max_reasks`` re-asks (2 by default), each quoting its reply's parse error →
cost → cache store.

Every call sends a completion budget (``max_tokens``: the judge's own, else the request's, see
:mod:`assay.judges.completion`). A structured reply cut at it (finish reason ``length``) is never
parsed: it is asked once more with the stage's cap, the same messages (a cut reply is never
quoted back: it would only lengthen the prompt), and is a ``truncated`` failure if cut again.
A request the endpoint refuses as too long for its context is a ``context_length`` failure,
never retried (:mod:`assay.judges.context_overflow`). Each attempt reserves its estimated cost
from the budget before it is sent and settles it with its real cost (:mod:`assay.judges.budget`);
an attempt abandoned on its timeout (or cancelled in flight) settles at its estimate, since the
provider bills the reply it generated, and the reply's ``estimated_usd`` says how much of its
cost is so estimated. The preflight (:meth:`Judge.check`) is paid the same way.

Each HTTP attempt waits at most the judge's ``timeout_s`` when set, else, on a free endpoint, a
timeout fitted to its reply latencies (:mod:`assay.judges.timeouts`), so a hung request frees
its slot in a fraction of a second on a fast endpoint and still gets a minute on a slow one; a
paid endpoint's attempt (:attr:`Judge.paid`) waits the ceiling, as abandoning it is billed. A timeout is
retried like a server error (backoff), and neither narrows the in-flight limit: only 429s do
(:mod:`assay.judges.limits`). A 429 with ``Retry-After`` waits what the server asks; the
exponential backoff grows only with the retries that backed off, so a call that was asked to
wait twice does not then wait 2² times longer for its first 500, and only while the endpoint
is in trouble (:class:`~assay.judges.retry.EndpointHealth`): a 500 among mostly good answers
is retried after the base backoff however many the call had.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any, Self

import orjson

from assay.errors import ConfigError
from assay.judges.anthropic import max_tokens_of
from assay.judges.budget import Budget, CallEstimator, PreflightSpend, message_chars
from assay.judges.cache import ResponseCache, request_cache_key
from assay.judges.completion import DEFAULT_BUDGET
from assay.judges.config import JudgeConfig
from assay.judges.context_fit import fit
from assay.judges.context_overflow import context_overflow
from assay.judges.free_text import text_answer
from assay.judges.limits import Limiter
from assay.judges.local_servers import (
    LOCAL_PRESETS,
    SERVER_MODES,
    asks_server,
    mode_chain,
    start_mode,
    timeout_ceiling,
)
from assay.judges.openai_compat import TEXT_MODE, WireReply
from assay.judges.preflight import (
    PREFLIGHT_MAX_TOKENS,
    PREFLIGHT_MESSAGES,
    PREFLIGHT_SCHEMA,
    check_preflight_answer,
    http_message,
)
from assay.judges.pricing import Pricing, tokens_in
from assay.judges.prompt_caching import (
    CachePlan,
    CacheTTL,
    min_cacheable_tokens,
    pays,
    write_factor,
)
from assay.judges.retry import (
    EndpointHealth,
    classify_status,
    is_retryable,
    parse_retry_after,
    retry_delay,
)
from assay.judges.secrets import redact, redact_data
from assay.judges.server_info import ServerInfo, discover
from assay.judges.simple_evals import MODE as SIMPLE_EVALS
from assay.judges.simple_evals import SAMPLER_MODE, simple_evals_reply
from assay.judges.structured import parse_reply, reask_messages
from assay.judges.timeouts import AttemptTimeouts
from assay.judges.transport import HttpResult, Transport
from assay.judges.types import Failure, FailureKind, JudgeReply, JudgeRequest, Usage
from assay.judges.wires import wire_for
from assay.logs import get_logger

log = get_logger("assay.judges")
CUT = frozenset({"length", "max_tokens"})  # finish reasons of a reply cut at its budget (OpenAI's, Anthropic's)


class Judge:
    """A judge endpoint. Build it with :func:`assay.judges.make_judge`.

    Example (against the fake judge server)::

        async with FakeJudgeServer(policy="MET") as server:
            async with make_judge(f"openai-compatible:fake@{server.base_url}") as judge:
                reply = await judge.ask(JudgeRequest(messages=({"role": "user", "content": "..."},),
                                                     schema=VERDICT_SCHEMA))
                reply.data["verdict"]   # "MET"
    """

    def __init__(
        self,
        config: JudgeConfig,
        transport: Transport,
        *,
        cache: ResponseCache | None = None,
        budget: Budget | None = None,
        pricing: Pricing | None = None,
    ):
        self.config = config
        self.id = config.judge_id
        self.spec = config.spec
        self.model = config.model
        self.cache = cache
        self.budget = budget
        self.pricing = pricing or Pricing.default()
        self.limiter = Limiter(config.limits)
        self._transport = transport
        self._wire = wire_for(config)
        # a free-text request of a simple-evals config is its sampler's, exactly
        self._text_mode = SAMPLER_MODE if config.structured == SIMPLE_EVALS else TEXT_MODE
        self._modes = ((SIMPLE_EVALS,) if config.structured == SIMPLE_EVALS
                       else mode_chain(config.structured) if config.structured in SERVER_MODES
                       and config.wire == "openai"
                       else self._wire.modes[start_mode(config.structured, self._wire.modes):])
        self._price = config.price or self.pricing.price_for(config.model)
        self.estimator = CallEstimator(self._price, max_tokens_of(config)
                                       if config.wire == "anthropic" else config.max_tokens)
        self._rng = random.Random()
        self._params = config.request_params()
        self.total_usage = Usage()
        self.total_cost_usd = 0.0
        self.estimated_cost_usd = 0.0  # of total_cost_usd: attempts abandoned without a reply
        self.calls = 0
        self._deferred_check: asyncio.Future[Failure | None] | bool = False
        self._preflight_spent = PreflightSpend()  # not yet recorded in a run or job store
        self.timeouts = AttemptTimeouts(  # fitted to a free endpoint if unset
            config.timeout_s, ceiling_s=timeout_ceiling(config.provider, config.timeout_ceiling_s),
            fitted=not self.paid)
        self.server: ServerInfo | None = None  # what the server said of itself, once asked
        self._server_asked: asyncio.Future[None] | None = None  # done once it has answered
        # A local preset's server is asked before the judge's first request, whoever made it:
        # its slots are the requests in flight (not every command makes the preflight).
        self._asks_server = asks_server(config.provider, config.wire)
        self.health = EndpointHealth()  # whether a call's backoff grows (assay.judges.retry)
        self._warned_fit = False  # a prompt close to a silently cutting server's context

    def __repr__(self) -> str:
        return redact(f"Judge(id={self.id!r}, model={self.model!r}, base_url={self.config.base_url!r})")

    @property
    def paid(self) -> bool:
        """Whether a provider bills this judge's every attempt: a price is known for its
        model (the pricing table or the judge's ``price``) and it is not a local server. A
        paid judge's abandoned attempts are counted at their estimate, and its attempts wait
        the ceiling before they are abandoned (:mod:`assay.judges.timeouts`)."""
        price = self._price
        return (price is not None and (price.input > 0 or price.output > 0)
                and self.config.provider not in LOCAL_PRESETS)

    @property
    def attempt_timeout_s(self) -> float:
        """How long an attempt waits for its reply now (see :mod:`assay.judges.timeouts`)."""
        return self.timeouts.seconds

    @property
    def max_reasks(self) -> int:
        """How many times a reply that does not parse is asked again (0 with ``reask=False``)."""
        return self.config.max_reasks if self.config.reask else 0

    @property
    def structured_mode(self) -> str:
        """The strongest reply format this endpoint has accepted so far."""
        return self._modes[0]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool and write any batched cache rows."""
        if self.cache is not None:
            self.cache.flush()
        await self._transport.aclose()

    def cache_key(self, request: JudgeRequest) -> str:
        return request_cache_key(self.config, request, self._params)

    @property
    def in_flight(self) -> dict[str, Any]:
        """The requests in flight allowed now and why (what run manifests record).

        >>> from assay.judges import make_judge
        >>> make_judge("llamacpp:gemma").in_flight
        {'max_in_flight': 64, 'source': 'the default'}

        Where the width follows the replies' latency (a local server that says no slots),
        ``max_in_flight`` is the width now and ``reached`` the widest it went.
        """
        limiter = self.limiter
        if limiter.follows_latency:
            return {"max_in_flight": limiter.width, "source": limiter.in_flight_source,
                    "reached": limiter.reached}
        return {"max_in_flight": limiter.max_in_flight, "source": limiter.in_flight_source}

    async def check(self, timeout_s: float = 5.0) -> None:
        """Preflight: one real request to the endpoint's completion path, outside the cache,
        paid for like any request: reserved from the budget and settled at its cost (see
        :meth:`take_preflight`). Raise :class:`ConfigError` if it cannot be reached, refuses the key,
        or answers that the path or model does not exist (a wrong base URL fails here, before
        any run is created). A rate limit or a server error is transient: the run goes on and
        retries as usual. ``timeout_s`` is a floor; the judge's own ``timeout_s`` applies if
        longer. A local preset's judge then asks the server about itself
        (:meth:`discover_server`)."""
        await self._preflight(timeout_s)
        if self._asks_server:
            await self.discover_server()

    async def discover_server(self) -> ServerInfo | None:
        """What the server says of itself (:mod:`assay.judges.server_info`: context size,
        parallel slots), asked once; the slots become the requests in flight unless the user
        chose a number (``limits.max_in_flight``, ``--concurrency``); a local preset's server
        that says no slots gets a width that follows the replies' latency
        (:meth:`~assay.judges.limits.Limiter.follow_latency`). Concurrent callers wait for the
        one question."""
        if self.config.wire != "openai":
            return None
        asked = self._server_asked
        if asked is None:
            asked = self._server_asked = asyncio.get_running_loop().create_future()
            try:
                self._preflight_spent.requests += 1  # the server's own question (free)
                server = self.server = await discover(self._transport, self.model,
                                                      self.config.provider)
                limiter = self.limiter
                if server is not None and server.slots is not None:
                    if limiter.follow_server(server.slots, f"{server.source} total_slots"):
                        log.info("judge %s: %d requests in flight, %s", self.id, server.slots,
                                 limiter.in_flight_source)
                elif self._asks_server and limiter.follow_latency():
                    log.info("judge %s: %s", self.id, limiter.in_flight_source)
            finally:
                asked.set_result(None)
        await asyncio.shield(asked)
        return self.server

    @property
    def preflight_pending(self) -> bool:
        """Whether preflight requests were made since the last :meth:`take_preflight`."""
        return self._preflight_spent.requests > 0

    def take_preflight(self) -> PreflightSpend:
        """The preflight requests made since the last take (their tokens and cost are in
        :attr:`total_cost_usd` and the budget already), for a run or job store to record.

        >>> from assay.judges import make_judge
        >>> make_judge("llamacpp:gemma").take_preflight().requests
        0
        """
        spent, self._preflight_spent = self._preflight_spent, PreflightSpend()
        return spent

    async def _preflight(self, timeout_s: float) -> None:
        max_tokens = self.config.max_tokens or PREFLIGHT_MAX_TOKENS
        body = self._wire.build_body(self.config, PREFLIGHT_MESSAGES, PREFLIGHT_SCHEMA,
                                     "preflight", self._modes[0], max_tokens=max_tokens)
        where = redact(self._transport.url(self._wire.path))
        held, budget = None, self.budget
        if budget is not None and self._price:
            held = self.estimator.estimate(PREFLIGHT_MESSAGES, PREFLIGHT_SCHEMA, max_tokens)
            if not await budget.reserve(held):
                raise ConfigError(f"judge {self.id!r}: the budget of ${budget.max_usd:g} "
                                  f"cannot pay for its preflight request (about ${held:.6f})")
        cost, usage = 0.0, Usage()
        try:
            result = await self._transport.post_json(
                self._wire.path, body, timeout_s=max(timeout_s, self.timeouts.ceiling))
            reply = self._read(result) if isinstance(result, HttpResult) and \
                result.status == 200 else None
            if isinstance(reply, WireReply):
                usage = reply.usage
                cost = self.pricing.cost(self.model, usage, self._price) if self._price else 0.0
            elif isinstance(result, Failure) and result.kind is FailureKind.TIMEOUT:
                cost = self._abandoned_cost(held, PREFLIGHT_MESSAGES, PREFLIGHT_SCHEMA, max_tokens)
        except BaseException:  # cancelled in flight: sent and abandoned, billed all the same
            cost = self._abandoned_cost(held, PREFLIGHT_MESSAGES, PREFLIGHT_SCHEMA, max_tokens)
            raise
        finally:
            if held is not None and budget is not None:
                budget.settle(held, cost)
            self._preflight_spent.add(usage, cost)
            self.total_cost_usd += cost
        if isinstance(result, Failure):
            raise ConfigError(f"judge {self.id!r}: cannot reach {where} ({result.message})")
        if result.status != 200 and not self._wire.rejects_mode(result.status, result.body):
            check_preflight_answer(self.id, where, result)

    def defer_check(self) -> None:
        """Make the preflight :meth:`check` just before the first request that leaves the cache,
        instead of now: a run served wholly from the cache sends nothing. If that check fails,
        every call that needs the endpoint fails with its message (none is retried)."""
        self._deferred_check = True

    async def _checked(self) -> Failure | None:
        """The deferred preflight's outcome (made once; concurrent first calls wait for it)."""
        pending = self._deferred_check
        if pending is True:
            pending = self._deferred_check = asyncio.get_running_loop().create_future()
            try:
                await self.check()
                pending.set_result(None)
                self._deferred_check = False
            except ConfigError as exc:
                pending.set_result(Failure(FailureKind.TRANSPORT, str(exc), 0))
            except BaseException as exc:
                pending.set_result(Failure(FailureKind.TRANSPORT, redact(f"preflight: {exc}"), 0))
                raise
        if pending is False:  # no check deferred (callers test that first)
            return None
        return await asyncio.shield(pending)

    async def ask(self, request: JudgeRequest) -> JudgeReply:
        """Ask once (with retries, format fallbacks and up to ``max_reasks`` re-asks); never
        raises for model, transport or parse failures."""
        started = time.perf_counter()
        if self.budget is not None and self.budget.exhausted:
            self.budget.refuse()
            return JudgeReply(self.id, None, "", failure=_budget_failure(self.budget))
        cache, key = self.cache, None
        if cache is not None and cache.writes:
            looked_up = request.looked_up
            if looked_up is not None and looked_up[0] is self:  # cached() found no reply
                key = looked_up[1]
            else:
                key = self.cache_key(request)
                if cache.reads:
                    hit = cache.get(key)
                    if hit is not None:
                        return JudgeReply(self.id, hit.data, hit.raw, Usage(), 0.0,
                                          time.perf_counter() - started, True, 0)
        messages, usage, attempts = request.messages, Usage(), 0
        reasks, max_reasks = 0, self.max_reasks
        exact = self._modes[0] == SIMPLE_EVALS  # simple-evals' reply rule: no mode fallback
        resend = exact or request.bool_field is not None  # re-ask as simple-evals does
        first_limit = limit = self.completion_limit(request)
        abandoned = Abandoned()
        while True:
            outcome, n, call_usage = await self._exchange(messages, request, limit, abandoned)
            attempts += n
            usage = usage + call_usage
            if isinstance(outcome, _Failed):
                return self._finish(request, None, outcome.raw_text, usage, attempts, started,
                                    outcome.failure, key, abandoned=abandoned)
            if request.text:
                data, failure = text_answer(outcome)
                return self._finish(request, data, outcome.text, usage, attempts, started,
                                    failure, key, abandoned=abandoned)
            if outcome.refusal:
                return self._finish(request, None, outcome.text or outcome.refusal, usage, attempts,
                                    started, Failure(FailureKind.REFUSAL, redact(outcome.refusal)),
                                    key, abandoned=abandoned)
            if outcome.finish_reason in CUT:
                grown = self._grown_limit(request)
                if limit == first_limit and grown is not None:
                    limit = grown  # asked again as it was, with the stage's cap
                    continue
                if exact and reasks < max_reasks:  # simple-evals sends the same request again
                    reasks += 1
                    continue
                return self._finish(request, None, outcome.text, usage, attempts, started,
                                    self._truncated(request, limit, first_limit), key,
                                    abandoned=abandoned)
            parsed = (simple_evals_reply(outcome.text) if exact
                      else parse_reply(outcome.text, request.schema, request.bool_field))
            if parsed.ok:
                return self._finish(request, parsed.data, outcome.text, usage, attempts, started,
                                    None, key, abandoned=abandoned)
            if reasks >= max_reasks:
                assert parsed.kind is not None  # a reply that did not parse says why
                return self._finish(request, None, outcome.text, usage, attempts, started,
                                    Failure(parsed.kind, parsed.error), key, abandoned=abandoned)
            reasks += 1
            if resend:  # simple-evals sends the same request again, quoting nothing
                continue
            # each re-ask quotes the last reply and its error (not every earlier one): the
            # prompt stays the original plus one exchange however many re-asks there are
            messages = reask_messages(request.messages, outcome.text, parsed.error, request.schema)

    def cached(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply | None]:
        """The replies the cache holds for ``requests`` (None where it holds none), read in
        one query per batch: what :meth:`ask` answers from the cache, without a call each.
        :meth:`ask` does not look a request up again that was not found here. Nothing is
        served (all None) without a readable cache or once the budget is spent."""
        cache = self.cache
        if (cache is None or not cache.reads or not cache.writes
                or (self.budget is not None and self.budget.exhausted)):
            return [None] * len(requests)
        started = time.perf_counter()
        keys = [self.cache_key(request) for request in requests]
        hits = cache.get_many(keys)
        latency = (time.perf_counter() - started) / max(1, len(keys))
        replies: list[JudgeReply | None] = []
        for request, key in zip(requests, keys):
            hit = hits.get(key)
            if hit is None:
                object.__setattr__(request, "looked_up", (self, key))
                replies.append(None)
            else:
                replies.append(JudgeReply(self.id, hit.data, hit.raw, Usage(), 0.0, latency,
                                          True, 0))
        return replies

    def ask_sync(self, request: JudgeRequest) -> JudgeReply:
        """Blocking :meth:`ask` for scripts and notebooks (runs on a background event loop)."""
        from assay.judges.sync import run_sync

        return run_sync(self.ask(request))

    def _finish(self, request, data, raw, usage, attempts, started, failure, key,
                price_factor: float = 1.0, *, abandoned: Abandoned | None = None) -> JudgeReply:
        """The reply of a finished call, counted, costed (× ``price_factor``: batch prices
        are half; plus the estimate of each attempt ``abandoned`` without a reply, which the
        provider bills all the same) and cached when it succeeded."""
        estimated = abandoned.usd if abandoned is not None else 0.0
        cost = (self.pricing.cost(self.model, usage, self._price) * price_factor
                if self._price else 0.0) + estimated
        self.calls += 1
        self.total_usage = self.total_usage + usage
        self.total_cost_usd += cost
        self.estimated_cost_usd += estimated
        scrubbed = redact(raw) if raw else raw
        # An endpoint may echo a key into the explanation. Without escapes in the reply, every
        # string of ``data`` is a piece of ``raw`` as it stands, so a reply with nothing to
        # scrub has nothing to scrub in ``data`` either.
        if data is not None and (scrubbed != raw or (raw and "\\" in raw)):
            data = redact_data(data)
        raw = scrubbed
        if failure is None and key is not None and self.cache is not None:  # a key needs a cache
            self.cache.put(key, judge=self.id, model=self.model, data=data, raw=raw,
                           usage=usage.as_dict())
        elif failure is not None and log.isEnabledFor(10):
            log.debug("judge %s failed: %s", self.id, failure)
        return JudgeReply(self.id, data, raw, usage, cost, time.perf_counter() - started,
                          False, attempts, failure, estimated,
                          abandoned.attempts if abandoned is not None else 0)

    def cache_plan(self, head_chars: int, sharing: int, ttl: CacheTTL = "5m") -> CachePlan | None:
        """How ``sharing`` calls whose prompts start with the same ``head_chars`` characters
        are best cached (:mod:`assay.judges.prompt_caching`), or None where caching the head
        would not lower the bill: caching turned off (``prompt_caching = false``), no price
        with a cached-input discount (a local server's judge), a head under the model's
        minimum, or too few calls to repay the cache write.

        >>> from assay.judges import make_judge
        >>> judge = make_judge("anthropic:claude-sonnet-4-5@http://127.0.0.1:9/v1")
        >>> judge.cache_plan(5000, 14), judge.cache_plan(2000, 14), judge.cache_plan(5000, 1)
        (CachePlan(ttl='5m'), None, None)
        """
        price = self._price
        if (not self.config.prompt_caching or price is None or price.cached_input is None
                or not 0 <= price.cached_input < price.input):
            return None
        if tokens_in(head_chars) < min_cacheable_tokens(self.config.wire, self.model):
            return None
        wire = self.config.wire
        if not pays(sharing, write=write_factor(wire, ttl), read=price.cached_input / price.input):
            return None
        return CachePlan(ttl)

    def completion_limit(self, request: JudgeRequest) -> int | None:
        """The ``max_tokens`` a request is sent with first: the judge's own when its config
        sets one, else the request's budget (:data:`DEFAULT_BUDGET` for a structured request
        that declares none; none for a free-text answer that declares none)."""
        if self.config.max_tokens is not None:
            return self.config.max_tokens
        budget = request.budget or (None if request.text else DEFAULT_BUDGET)
        return budget.tokens if budget is not None else None

    def _grown_limit(self, request: JudgeRequest) -> int | None:
        """The ``max_tokens`` of the one retry of a cut reply (None: no larger one allowed)."""
        if self.config.max_tokens is not None or request.text:
            return None
        return (request.budget or DEFAULT_BUDGET).grown

    def _truncated(self, request: JudgeRequest, limit: int | None, first: int | None) -> Failure:
        """The failure of a reply cut at ``limit`` (``first``: the limit it was first sent with)."""
        if self.config.max_tokens is not None:
            why = (self.config.set_by("max_tokens")
                   or "the judge's own max_tokens: raise it in the judge's config to allow more")
        elif limit != first:
            why = f"the stage's cap, after a first cut at {first}"
        else:
            why = "the stage's cap"
        return Failure(FailureKind.TRUNCATED,
                       f"{request.schema_name}: the reply was cut at max_tokens={limit} ({why})")

    def request_body(self, request: JudgeRequest, messages: Any = None, mode: str | None = None,
                     max_tokens: int | None = None) -> dict[str, Any]:
        """The body ``request`` is sent with: ``messages`` (default: the request's) in
        ``mode`` (default: the strongest accepted so far), with ``max_tokens`` (default:
        :meth:`completion_limit`)."""
        if mode is None:
            mode = self._text_mode if request.text else self._modes[0]
        # a head under the model's minimum is not cached even if marked: it is sent unmarked
        cache_prefix = request.cache_prefix
        if cache_prefix and tokens_in(cache_prefix) < min_cacheable_tokens(self.config.wire,
                                                                            self.model):
            cache_prefix = 0
        body = self._wire.build_body(
            self.config, request.messages if messages is None else messages, request.schema,
            request.schema_name, mode, cache_prefix=cache_prefix, cache_ttl=request.cache_ttl,
            max_tokens=self.completion_limit(request) if max_tokens is None else max_tokens)
        if request.sample and "seed" in body:
            body["seed"] += request.sample
        return body

    async def _exchange(self, messages, request: JudgeRequest, max_tokens: int | None,
                        abandoned: Abandoned) -> tuple[Any, int, Usage]:
        """One logical call: HTTP attempts with retries and format downgrades; each attempt
        abandoned on its timeout is added to ``abandoned`` at its estimate."""
        attempts, retries, timed_out = 0, 0, 0
        backed_off = 0  # retries that waited a backoff (not a server's Retry-After)
        policy = self.config.retry
        limiter = self.limiter
        if self._deferred_check is not False:
            problem = await self._checked()
            if problem is not None:
                return _Failed(problem, ""), attempts, Usage()
        if self._asks_server and (self._server_asked is None or not self._server_asked.done()):
            await self.discover_server()
        if self.server is not None and self.server.cuts_silently:
            refused = self._unfit(messages, max_tokens)
            if refused is not None:
                return _Failed(refused, ""), attempts, Usage()
        while True:
            mode = self._text_mode if request.text else self._modes[0]
            body = self.request_body(request, messages, mode, max_tokens)
            estimate = (self._estimate_tokens(messages, max_tokens) if limiter.tpm is not None
                        else 0)
            sent_in = await limiter.acquire(estimate, retry=attempts > 0)
            budget = self.budget
            held = None  # this attempt's reservation
            if budget is not None:
                try:  # may wait for the attempts in flight to settle
                    held = self.estimator.estimate(messages, request.schema, max_tokens)
                    fits = await budget.reserve(held)
                except BaseException:
                    limiter.release()
                    raise
                if not fits:  # spent, or this attempt could overrun it
                    limiter.release()
                    budget.refuse()
                    return _Failed(_budget_failure(budget), ""), attempts, Usage()
            attempt = self.timeouts.attempt(timed_out)
            sent = time.perf_counter()
            try:
                async with attempt:
                    result = await self._transport.post_json(self._wire.path, body)
            except TimeoutError:
                result = Failure(FailureKind.TIMEOUT, f"no reply within {attempt.limit:g} s")
            except BaseException:  # cancelled in flight: the request was sent, and is billed
                usd = self._bill_abandoned(held, messages, request, max_tokens)
                self.total_cost_usd += usd
                self.estimated_cost_usd += usd
                raise
            finally:
                limiter.release()
            attempts += 1
            retry_after, raw = None, ""
            reply = (self._read(result) if isinstance(result, HttpResult) and result.status == 200
                     else None)
            if isinstance(result, Failure) and result.kind is FailureKind.TIMEOUT:
                # abandoned: the model answered all the same, and the provider bills it
                abandoned.add(self._bill_abandoned(held, messages, request, max_tokens))
            elif held is not None:
                self._settle(held, reply.usage if isinstance(reply, WireReply) else None)
            if isinstance(result, HttpResult):
                raw = result.body.decode("utf-8", "replace")
                if result.status == 200:
                    self.timeouts.replied(time.perf_counter() - sent)
                    self.health.answered(True)
                    if isinstance(reply, WireReply):
                        limiter.record_success(estimate, reply.usage.total_tokens,
                                               time.perf_counter() - sent)
                        return reply, attempts, reply.usage
                    assert reply is not None  # a 200 was read: a reply or why it is not one
                    failure = reply
                elif (overflow := context_overflow(result.status, result.body)) is not None:
                    failure = Failure(FailureKind.CONTEXT_LENGTH,
                                      overflow.message(request.schema_name), result.status)
                elif (not request.text and len(self._modes) > 1
                      and self._wire.rejects_mode(result.status, result.body)):
                    log.info("judge %s: endpoint rejected %s replies; falling back", self.id, mode)
                    self._modes = self._modes[1:]
                    continue
                else:
                    # (a success other than 200, e.g. 204, has no reply to read: a transport failure)
                    kind = classify_status(result.status) or FailureKind.TRANSPORT
                    failure = Failure(kind, http_message(result), result.status)
                    if kind is FailureKind.RATE_LIMIT:
                        retry_after = parse_retry_after(result.headers)
                        if retry_after is not None:
                            retry_after = min(retry_after, policy.max_retry_after_s)
                        limiter.record_rate_limited(retry_after, sent_in)
            else:
                failure = result
                if failure.kind is FailureKind.TIMEOUT:
                    self.timeouts.timed_out(attempt.limit)
                    timed_out += 1
            retryable = is_retryable(failure.kind, failure.status)
            if retryable and failure.kind is not FailureKind.RATE_LIMIT:
                self.health.answered(False)  # a 5xx, a timeout, a dropped connection
            if not retryable or retries >= policy.max_retries:
                return _Failed(failure, raw), attempts, Usage()
            delay = retry_delay(backed_off if self.health.troubled else 0, policy, retry_after,
                                self._rng)
            retries += 1
            backed_off += retry_after is None
            if log.isEnabledFor(10):
                log.debug("judge %s: %s; retry %d in %.2f s", self.id, failure, retries, delay)
            if delay > 0:
                await asyncio.sleep(delay)

    def _unfit(self, messages: Any, max_tokens: int | None) -> Failure | None:
        """The failure of a prompt that cannot fit a server that would cut it silently (not
        sent), after a warning, once, for one that may not (:mod:`assay.judges.context_fit`)."""
        found = fit(self.server, tokens_in(message_chars(messages)), max_tokens)
        if found is None:
            return None
        if found.refuse:
            return Failure(FailureKind.CONTEXT_LENGTH, found.message)
        if not self._warned_fit:
            self._warned_fit = True
            log.warning("judge %s: %s", self.id, found.message)
        return None

    def _abandoned_cost(self, held: float | None, messages, schema: dict[str, Any] | None,
                        max_tokens: int | None) -> float:
        """The cost of a request sent and abandoned without its reply (billed all the same):
        its reservation, else the estimate of :class:`~assay.judges.budget.CallEstimator`; 0
        for an unpriced judge."""
        if held is not None:
            return held
        return self.estimator.estimate(messages, schema, max_tokens) if self._price else 0.0

    def _bill_abandoned(self, held: float | None, messages, request: JudgeRequest,
                        max_tokens: int | None) -> float:
        """:meth:`_abandoned_cost` of an attempt, settled as spent in the budget."""
        usd = self._abandoned_cost(held, messages, request.schema, max_tokens)
        if held is not None:
            assert self.budget is not None
            self.budget.settle(held, usd)
        return usd

    def _settle(self, held: float, usage: Usage | None) -> None:
        """Replace an attempt's budget reservation by its real cost (none without a reply)."""
        assert self.budget is not None
        cost = self.pricing.cost(self.model, usage, self._price) if usage and self._price else 0.0
        self.estimator.observe(cost)
        self.budget.settle(held, cost)

    def _read(self, result: HttpResult) -> WireReply | Failure:
        try:
            payload = orjson.loads(result.body)
            return self._wire.read(payload)
        except (orjson.JSONDecodeError, AttributeError, TypeError, IndexError, KeyError) as exc:
            return Failure(FailureKind.SERVER_ERROR,
                           f"the endpoint's HTTP reply is not a valid response ({exc})", 200)

    def _estimate_tokens(self, messages, max_tokens: int | None) -> int:
        return tokens_in(message_chars(messages)) + (max_tokens or 0)


class Abandoned:
    """The attempts of one call abandoned on their timeout, and their estimated cost."""

    __slots__ = ("attempts", "usd")

    def __init__(self) -> None:
        self.attempts, self.usd = 0, 0.0

    def add(self, usd: float) -> None:
        self.attempts += 1
        self.usd += usd


class _Failed:
    """A failed exchange: the classified failure and the raw text of the last HTTP reply."""

    __slots__ = ("failure", "raw_text")

    def __init__(self, failure: Failure, raw_text: str):
        self.failure = failure
        self.raw_text = raw_text


def _budget_failure(budget: Budget) -> Failure:
    return Failure(FailureKind.BUDGET, budget.failure_message())
