"""The fake judge server: OpenAI chat completions and Anthropic messages over real HTTP.

Example (async)::

    async with FakeJudgeServer(policy={"c1": "MET"}, latency=0.01) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        ...
        server.requests[0]["criterion_id"]   # "c1"

Example (sync, e.g. a notebook or a non-async test):
    >>> with FakeJudgeServer.run_in_thread(policy="UNMET") as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import orjson
from aiohttp import web

from assay.judges.preflight import PREFLIGHT_PROMPT
from assay.testing.batches import BATCH_HEADER, BatchScript, FakeBatches
from assay.testing.bill import ProviderBill
from assay.testing.context_errors import OVERFLOW_FAULTS, overflow_reply
from assay.testing.faults import Faults, Latency, as_latency
from assay.testing.models import ModelAnswer, ModelScript, as_model_scripts
from assay.testing.options import option_scales, resolve_answer
from assay.testing.policies import Policy, as_policy
from assay.testing.prompt_cache import Lookup, PromptCache
from assay.testing.prompts import parse_prompt, prompt_text
from assay.testing.render import render
from assay.testing.server_props import ServerProfile
from assay.testing.stages import StageRequest, StageScript, as_stage_script

_SENSITIVE = ("authorization", "x-api-key", "api-key", "cookie")
_REFUSAL = "I'm sorry, but I can't help with that."


class FakeJudgeServer:
    """A scriptable fake judge on 127.0.0.1.

    Args:
        policy: the answer per criterion — a label (``"MET"``), a dict by criterion id or text,
            a :mod:`assay.testing.policies` policy, or any ``callable(CriterionView) -> str``.
        latency: seconds per reply (float), ``(low, high)`` uniform, or a :class:`Latency`.
        faults: a :class:`Faults` script and/or fault rates.
        port: 0 picks a free port.
        seed: seeds fault draws and latency sampling.
        json_schema / json_mode / tools: whether the endpoint accepts ``response_format``
            json_schema, json_object, and Anthropic tools (else it answers 400, as some do).
        usage: fixed token counts to report, e.g. ``{"prompt_tokens": 100,
            "completion_tokens": 20, "cached_tokens": 0, "reasoning_tokens": 0}``; by default
            about one token per 4 characters.
        log_path: also append each request to this JSONL file (for other processes).
        rubrics: rubrics (or rubric/item files) whose multi-choice criteria it may be asked
            about, so that MET and UNMET answer the highest- and lowest-valued option (see
            :mod:`assay.testing.options`).
        keep_log: keep :attr:`requests` in memory (turn off for long benchmarks).
        require_key: answer 401 unless this key is sent (``Authorization: Bearer``,
            ``x-api-key`` or ``api-key``); the 401 body echoes the key sent, as real APIs do,
            so that clients can be tested for redaction.
        echo_headers: request headers whose values every explanation repeats (chat
            completions), as a careless or hostile endpoint might: for redaction tests.
        stages: replies for non-grading calls (generation stages, routers, RAG metrics, ...),
            chosen by the request's schema name: a :class:`~assay.testing.stages.StageScript`,
            a mapping ``{stage: reply}`` or a JSON/YAML fixture file. Faults and latency apply
            to them as to verdicts; their log entries carry ``"stage"``.
        models: models under test, by model name (see :mod:`assay.testing.models`): a request
            naming one is answered with that script's free text; faults and latency apply;
            their log entries carry ``"stage": "model:NAME"``.
        batches: how its batch endpoints (OpenAI Files + Batch API, Anthropic Message
            Batches) behave: a :class:`~assay.testing.batches.BatchScript` (slow completion,
            expiry); each batch request is answered like a live one, faults included.
        prompt_cache: cache prompts and bill them as the providers do (OpenAI: prefixes
            processed before, automatically; Anthropic: the prefix marked ``cache_control``),
            each model from its own minimum length (or ``prompt_cache_min_tokens`` for every
            model), an entry readable once the reply of the request that wrote it has begun,
            for 5 minutes (or 1 hour) after its last use (:mod:`assay.testing.prompt_cache`);
            a :class:`~assay.testing.prompt_cache.PromptCache` of your own (e.g. on a clock a
            test moves). What the provider would bill is in :attr:`bill`
            (:mod:`assay.testing.bill`).
        server: what it says about itself (:mod:`assay.testing.server_props`): llama.cpp's
            ``/props`` (context size, parallel slots), vLLM's ``max_model_len``, Ollama's
            ``/api/ps`` and ``/api/show``, LM Studio's ``/api/v1/models``; by default none,
            as a hosted API.
        slots: decode at most this many requests at once and queue the others, as a local
            server does (the latency of a queued request grows with the queue); None: no limit.

    :attr:`peak_in_flight` is the largest number of requests handled at once;
    :attr:`preflights` counts clients' preflight checks (kept out of :attr:`requests`);
    :attr:`preflight_delay_s` (0) holds each preflight reply back that long (a check cancelled
    in flight).
    """

    def __init__(
        self,
        policy: Any = "MET",
        latency: float | tuple[float, float] | Latency | None = 0.0,
        faults: Faults | None = None,
        port: int = 0,
        seed: int = 0,
        *,
        host: str = "127.0.0.1",
        json_schema: bool = True,
        json_mode: bool = True,
        tools: bool = True,
        usage: Mapping[str, int] | None = None,
        log_path: str | Path | None = None,
        keep_log: bool = True,
        require_key: str | None = None,
        echo_headers: tuple[str, ...] = (),
        stages: StageScript | Mapping[str, Any] | str | Path | None = None,
        rubrics: Any = None,
        models: Mapping[str, ModelScript | Mapping[str, Any]] | str | Path | None = None,
        batches: BatchScript | None = None,
        prompt_cache: bool | PromptCache = False,
        prompt_cache_min_tokens: int | None = None,
        server: ServerProfile | None = None,
        slots: int | None = None,
    ):
        self.policy: Policy = as_policy(policy)
        self.models = as_model_scripts(models)
        self.stages: StageScript = as_stage_script(stages)
        self.option_scales = option_scales(rubrics)
        self.latency = as_latency(latency)
        self.faults = faults or Faults()
        self.host, self.port, self.seed = host, port, seed
        self.json_schema, self.json_mode, self.tools = json_schema, json_mode, tools
        self.usage = dict(usage) if usage else None
        self.keep_log = keep_log
        self.require_key = require_key
        self.echo_headers = tuple(echo_headers)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.preflights = 0
        self.preflight_delay_s = 0.0
        self.requests: list[dict[str, Any]] = []
        self._rng = random.Random(seed)
        self._log_file = open(log_path, "ab") if log_path else None  # noqa: SIM115
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._count = 0
        self.batches = FakeBatches(batches or BatchScript(), lambda: self.base_url)
        self.prompt_cache = (prompt_cache if isinstance(prompt_cache, PromptCache)
                             else PromptCache(prompt_cache_min_tokens) if prompt_cache else None)
        self.bill = ProviderBill()
        self.profile = server or ServerProfile()
        self.slots = slots
        self.models_asked: set[str] = set()  # the models requests have named
        self._slots: asyncio.Semaphore | None = None  # made on the server's loop, in start()

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def __repr__(self) -> str:
        return f"FakeJudgeServer({self.base_url!r}, requests={len(self.requests)})"

    def reset(self) -> None:
        """Forget the request log."""
        self.requests.clear()

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> Self:
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._middleware])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_get("/health", self._health)
        app.router.add_get("/api/ps", self._ollama_ps)
        app.router.add_post("/api/show", self._ollama_show)
        app.router.add_get("/api/v1/models", self._lm_studio_models)
        self.batches.routes(app)
        self._closing = asyncio.Event()
        self._slots = asyncio.Semaphore(self.slots) if self.slots else None
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the bound port (port 0 picks a free one)
        return self

    async def stop(self) -> None:
        if self._closing is not None:
            self._closing.set()
        await self.batches.aclose()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @classmethod
    def run_in_thread(cls, *args: Any, **kwargs: Any) -> FakeJudgeServer:
        """Start a server on its own event loop in a daemon thread and return it started.
        Stop it with :meth:`close` or by using it as a (sync) context manager."""
        server = cls(*args, **kwargs)
        started = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            server._loop = loop
            try:
                loop.run_until_complete(server.start())
            except BaseException as exc:  # noqa: BLE001  re-raised in the caller's thread below
                errors.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(server.stop())
            loop.close()

        server._thread = threading.Thread(target=main, name="fake-judge", daemon=True)
        server._thread.start()
        started.wait()
        if errors:
            raise errors[0]
        return server

    def close(self) -> None:
        """Stop a server started with :meth:`run_in_thread`."""
        if self._loop is not None and self._thread is not None:
            if self._closing is not None:  # set by start() before run_in_thread returns
                self._loop.call_soon_threadsafe(self._closing.set)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- handlers ---------------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        if self.require_key is not None:
            sent = (request.headers.get("Authorization", "").removeprefix("Bearer ")
                    or request.headers.get("x-api-key") or request.headers.get("api-key") or "")
            if sent != self.require_key:
                return _error(401, f"Incorrect API key provided: {sent}.", None,
                              request.path.endswith("/messages"))
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await handler(request)
        finally:
            self.in_flight -= 1

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self.profile.model_entry("fake")]})

    async def _health(self, request: web.Request) -> web.Response:
        """``GET /health``, as llama.cpp's server answers it once its model is loaded."""
        return web.json_response({"status": "ok"})

    async def _props(self, request: web.Request) -> web.Response:
        if self.profile.props is None:
            return _error(404, "File Not Found")
        return web.json_response(self.profile.props)

    async def _ollama_ps(self, request: web.Request) -> web.Response:
        if self.profile.ollama_model is None:
            return _error(404, "404 page not found")
        return web.json_response(self.profile.ollama_ps(self.models_asked))

    async def _ollama_show(self, request: web.Request) -> web.Response:
        if self.profile.ollama_model is None:
            return _error(404, "404 page not found")
        return web.json_response(self.profile.ollama_show())

    async def _lm_studio_models(self, request: web.Request) -> web.Response:
        if self.profile.lm_studio_context is None:
            return _error(404, "Unexpected endpoint or method.")
        return web.json_response(self.profile.lm_studio_models(sorted(self.models_asked)
                                                                or ["fake"]))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        request["raw_body"] = raw  # logged as sent, for byte-exact request tests
        body = orjson.loads(raw)
        response_format = body.get("response_format") or {}
        kind = response_format.get("type")
        text_in = prompt_text(body.get("messages", []))
        self.models_asked.add(str(body.get("model", "fake")))
        if PREFLIGHT_PROMPT in text_in:
            return await self._preflight(body)
        if body.get("model") in self.models:
            return await self._model_reply(request, body, text_in)
        if (kind == "json_schema" and not self.json_schema) or (kind == "json_object" and not self.json_mode):
            self._reject(request, body, text_in)
            return _error(400, f"response_format {kind} is not supported by this server")
        schema = (response_format.get("json_schema") or {}).get("schema") if kind == "json_schema" else None
        stage = (response_format.get("json_schema") or {}).get("name") if kind == "json_schema" else None
        stage_request = self._stage_request(stage, text_in, schema, body)
        cached = (self.prompt_cache.lookup_openai(body, text_in)
                  if self.prompt_cache is not None else None)
        fault, views, answers = await self._decide(request, body, text_in, stage_request)
        if fault is not None and (early := self._http_fault(fault)) is not None:
            return await early
        reply_text: str | None
        reply_text, finish = self._reply_text(fault, schema, answers, views, stage_request)
        if self.echo_headers and fault is None and stage_request is None:
            reply_text = self._echo(request, reply_text)
        refusal = None
        if fault == "refusal":
            reply_text, refusal, finish = None, _REFUSAL, "stop"
        usage = self._cached_usage(self._usage(text_in, reply_text or refusal or ""), cached)
        self._billed(request, usage)
        message = {"role": "assistant", "content": reply_text, "refusal": refusal}
        return self._chat_reply(body.get("model", "fake"), message, finish, usage)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        request["raw_body"] = raw  # logged as sent, for byte-exact request tests
        body = orjson.loads(raw)
        tools = body.get("tools") or []
        text_in = prompt_text(body.get("messages", []), body.get("system"))
        if PREFLIGHT_PROMPT in text_in:
            return await self._preflight(body, anthropic=True)
        if body.get("model") in self.models:
            return await self._model_reply(request, body, text_in, anthropic=True)
        if tools and not self.tools:
            self._reject(request, body, text_in)
            return _anthropic_error(400, "tools are not supported by this server")
        schema = tools[0].get("input_schema") if tools else None
        stage_request = self._stage_request(tools[0].get("name") if tools else None, text_in,
                                            schema, body)
        cached = (self.prompt_cache.lookup_anthropic(body)
                  if self.prompt_cache is not None else None)
        fault, views, answers = await self._decide(request, body, text_in, stage_request)
        if fault is not None and (early := self._http_fault(fault, anthropic=True)) is not None:
            return await early
        stop = "end_turn"
        content: list[dict[str, Any]]
        if fault == "refusal":
            content = [{"type": "text", "text": _REFUSAL}]
            stop, out_text = "refusal", _REFUSAL
        elif tools and fault is None:
            data = (_as_object(self.stages.answer(stage_request)) if stage_request is not None
                    else render(schema, answers, views))
            content = [{"type": "tool_use", "id": f"toolu_fake_{self._count}",
                        "name": tools[0].get("name", "verdict"), "input": data}]
            stop, out_text = "tool_use", orjson.dumps(data).decode()
        else:
            out_text, finish = self._reply_text(fault, schema, answers, views, stage_request)
            stop = "max_tokens" if finish == "length" else "end_turn"
            content = [{"type": "text", "text": out_text}]
        usage = self._cached_usage(self._usage(text_in, out_text), cached)
        self._billed(request, usage)
        return self._messages_reply(body.get("model", "fake"), content, stop, usage)

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's Responses API, for models under test (simple-evals samples o3 so)."""
        raw = await request.read()
        request["raw_body"] = raw
        body = orjson.loads(raw)
        given = body.get("input") or []
        messages = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
        text_in = prompt_text(messages)
        if PREFLIGHT_PROMPT in text_in:
            return await self._preflight(body, responses=True)
        if body.get("model") not in self.models:
            return _error(404, f"The model '{body.get('model')}' does not exist (the fake "
                          "server answers the Responses API for models under test only)")
        return await self._model_reply(request, {**body, "messages": messages}, text_in,
                                       responses=True)

    async def _model_reply(self, request: web.Request, body: dict, text_in: str,
                           anthropic: bool = False, responses: bool = False
                           ) -> web.StreamResponse:
        """An answer of a model under test: free text from its script (faults apply)."""
        name = body["model"]
        messages = list(body.get("messages") or [])
        self._count += 1
        fault = self.faults.next(self._rng)
        delay = self.latency.sample(self._rng, text_in)
        self._record(request, body, parse_prompt(""), [], fault, f"model:{name}")
        await self._decode(delay)
        if fault is not None and (early := self._http_fault(fault, anthropic)) is not None:
            return await early
        answer = self.models[name].answer(messages, seed=body.get("seed"))
        if fault == "truncated":
            answer = ModelAnswer(answer.text[: max(1, len(answer.text) // 2)], answer.reasoning,
                                 "length")
        refused = fault == "refusal"
        if refused:
            answer = ModelAnswer(_REFUSAL, None, "refusal" if anthropic else "stop")
        usage = self._usage(text_in, answer.text + (answer.reasoning or ""))
        self._billed(request, usage)
        if anthropic:
            content: list[dict[str, Any]] = []
            if answer.reasoning:
                content.append({"type": "thinking", "thinking": answer.reasoning,
                                "signature": "fake"})
            content.append({"type": "text", "text": answer.text})
            stop = {"length": "max_tokens", "stop": "end_turn"}.get(answer.finish_reason,
                                                                  answer.finish_reason)
            return self._messages_reply(name, content, stop, usage)
        if responses:
            return self._responses_reply(name, answer, refused, usage)
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if refused:
            message.update(content=None, refusal=_REFUSAL)
        if answer.reasoning:
            message["reasoning_content"] = answer.reasoning
        return self._chat_reply(name, message, answer.finish_reason, usage)

    def _chat_reply(self, model: str, message: dict[str, Any], finish: str,
                    usage: dict[str, int]) -> web.Response:
        """A chat-completions reply carrying ``message``."""
        payload = {
            "id": f"chatcmpl-fake-{self._count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {
                "prompt_tokens": usage["prompt_tokens"],
                "completion_tokens": usage["completion_tokens"],
                "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
                "completion_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
            },
        }
        return web.Response(body=orjson.dumps(payload), content_type="application/json")

    def _responses_reply(self, model: str, answer: ModelAnswer, refused: bool,
                         usage: dict[str, int]) -> web.Response:
        """A Responses API reply carrying ``answer`` (its thinking as a reasoning summary)."""
        output: list[dict[str, Any]] = []
        if answer.reasoning:
            output.append({"type": "reasoning", "id": f"rs_fake_{self._count}", "summary": [
                {"type": "summary_text", "text": answer.reasoning}]})
        part = ({"type": "refusal", "refusal": _REFUSAL} if refused
                else {"type": "output_text", "text": answer.text, "annotations": []})
        output.append({"type": "message", "id": f"msg_fake_{self._count}", "status": "completed",
                       "role": "assistant", "content": [part]})
        cut = answer.finish_reason == "length"
        payload = {
            "id": f"resp_fake_{self._count}", "object": "response", "created_at": int(time.time()),
            "model": model, "status": "incomplete" if cut else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
            "output": output,
            "usage": {"input_tokens": usage["prompt_tokens"],
                      "output_tokens": usage["completion_tokens"],
                      "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                      "input_tokens_details": {"cached_tokens": usage["cached_tokens"]},
                      "output_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]}},
        }
        return web.Response(body=orjson.dumps(payload), content_type="application/json")

    def _messages_reply(self, model: str, content: list[dict[str, Any]], stop: str,
                        usage: dict[str, int]) -> web.Response:
        """An Anthropic messages reply carrying ``content``."""
        payload = {
            "id": f"msg_fake_{self._count}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": usage["prompt_tokens"] - usage["cached_tokens"]
                      - usage.get("cache_write_tokens", 0),
                      "output_tokens": usage["completion_tokens"],
                      "cache_read_input_tokens": usage["cached_tokens"],
                      "cache_creation_input_tokens": usage.get("cache_write_tokens", 0),
                      "cache_creation": {
                          "ephemeral_5m_input_tokens": usage.get("cache_write_tokens", 0)
                          - usage.get("cache_write_1h_tokens", 0),
                          "ephemeral_1h_input_tokens": usage.get("cache_write_1h_tokens", 0)}},
        }
        return web.Response(body=orjson.dumps(payload), content_type="application/json")

    # --- helpers ----------------------------------------------------------------------------

    def _echo(self, request: web.Request, reply_text: str) -> str:
        sent = "; ".join(f"{h}: {request.headers[h]}" for h in self.echo_headers
                         if h in request.headers)
        data = orjson.loads(reply_text)

        def walk(value: Any) -> None:
            for key, sub in (value.items() if isinstance(value, dict) else enumerate(value)):
                if key == "explanation" and isinstance(sub, str):
                    value[key] = f"{sub} (you sent {sent})"
                elif isinstance(sub, dict | list):
                    walk(sub)

        walk(data)
        return orjson.dumps(data).decode()

    async def _preflight(self, body: dict, anthropic: bool = False, responses: bool = False
                         ) -> web.Response:
        """A client's preflight request: answered OK, counted in :attr:`preflights`, never
        in :attr:`requests` and never given a scripted fault (those are for judge calls); billed
        one token in and one out."""
        self.preflights += 1
        self.bill.live.add(input=1, output=1)
        if self.preflight_delay_s:
            await asyncio.sleep(self.preflight_delay_s)
        if responses:
            payload: dict[str, Any] = {
                "id": "resp_fake_preflight", "object": "response", "status": "completed",
                "model": body.get("model", "fake"), "output": [
                    {"type": "message", "role": "assistant", "content": [
                        {"type": "output_text", "text": '{"ok": true}'}]}],
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}
        elif anthropic:
            payload = {
                "id": "msg_fake_preflight", "type": "message", "role": "assistant",
                "model": body.get("model", "fake"), "stop_reason": "end_turn",
                "content": [{"type": "text", "text": '{"ok": true}'}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}
        else:
            payload = {
                "id": "chatcmpl-fake-preflight", "object": "chat.completion",
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": '{"ok": true}'}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return web.Response(body=orjson.dumps(payload), content_type="application/json")

    def _stage_request(self, name: str | None, text_in: str, schema, body: dict):
        if name is None or name not in self.stages:
            return None
        return StageRequest(name, text_in, schema, body, self.stages.next_request_number(name))

    async def _decide(self, request: web.Request, body: dict, text_in: str, stage_request=None):
        self._count += 1
        if stage_request is not None:
            views, answers = parse_prompt(""), []
        else:
            views = parse_prompt(text_in)
            answers = [resolve_answer(self.policy(v), v, self.option_scales) for v in views]
        fault = self.faults.next(self._rng, text_in)
        delay = self.latency.sample(self._rng, text_in)
        self._record(request, body, views, answers, fault,
                     stage_request.stage if stage_request is not None else None)
        await self._decode(delay)
        return fault, views, answers

    async def _decode(self, delay: float) -> None:
        """A reply's time: ``delay`` in one of the server's slots (waiting for a free one)."""
        if self._slots is None:
            if delay > 0:
                await asyncio.sleep(delay)
            return
        async with self._slots:
            await asyncio.sleep(delay)

    def _reject(self, request: web.Request, body: dict, text_in: str) -> None:
        self._count += 1
        self._record(request, body, parse_prompt(text_in), [], "unsupported_format")

    def _http_fault(self, fault: str, anthropic: bool = False):
        if fault == "rate_limit":
            headers = {}
            if self.faults.retry_after is not None:
                if self.faults.retry_after_ms:
                    headers["retry-after-ms"] = str(int(self.faults.retry_after * 1000))
                else:
                    headers["Retry-After"] = f"{self.faults.retry_after:g}"
            return _async(_error(429, "Rate limit reached (fake)", headers, anthropic))
        if fault == "server_error":
            return _async(_error(500, "The server had an error (fake)", None, anthropic))
        if fault in OVERFLOW_FAULTS:
            status, payload = overflow_reply(fault)
            return _async(web.Response(status=status, body=orjson.dumps(payload),
                                       content_type="application/json"))
        if fault == "bad_envelope":
            return _async(web.Response(body=b'{"choices": [', content_type="application/json"))
        if fault == "timeout":
            return self._hang()
        return None

    async def _hang(self) -> web.Response:
        assert self._closing is not None
        try:
            await asyncio.wait_for(self._closing.wait(), self.faults.hang_s)
        except TimeoutError:
            pass
        return _error(504, "gateway timeout (fake)")

    def _reply_text(self, fault, schema, answers, views, stage_request=None) -> tuple[str, str]:
        if stage_request is not None:
            data = self.stages.answer(stage_request)
        else:
            data = orjson.dumps(render(schema, answers, views)).decode()
        if fault == "malformed":
            return data.replace('"', "", 3) + " }", "stop"
        if fault == "truncated":
            return data[: max(1, len(data) // 2)], "length"
        if fault == "fenced":
            return f"Here is my assessment.\n```json\n{data}\n```\nLet me know if you need more.", "stop"
        if fault == "schema_mismatch":
            return '{"answer": "yes", "confidence": 0.9}', "stop"
        return data, "stop"

    def _cached_usage(self, usage: dict[str, int], cached: Lookup | None) -> dict[str, int]:
        """``usage`` with what the prompt cache read and wrote for the request (its reply is
        being sent: what it wrote becomes readable now)."""
        if cached is None or self.prompt_cache is None:
            return usage
        self.prompt_cache.replied(cached)
        read = min(cached.read, usage["prompt_tokens"])
        written = min(cached.written, usage["prompt_tokens"] - read)
        return {**usage, "cached_tokens": read, "cache_write_tokens": written,
                "cache_write_1h_tokens": written if cached.ttl == "1h" else 0}

    def _billed(self, request: web.Request, usage: dict[str, int]) -> None:
        """Add a reply's usage to :attr:`bill` (as a batch request's, if one of its batches)."""
        read, written = usage.get("cached_tokens", 0), usage.get("cache_write_tokens", 0)
        written_1h = usage.get("cache_write_1h_tokens", 0)
        tally = self.bill.batch if request.headers.get(BATCH_HEADER) else self.bill.live
        tally.add(input=usage["prompt_tokens"] - read - written, cache_read=read,
                  cache_write_5m=written - written_1h, cache_write_1h=written_1h,
                  output=usage["completion_tokens"])

    def _usage(self, text_in: str, text_out: str) -> dict[str, int]:
        if self.usage is not None:
            base = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0}
            return {**base, **self.usage}
        return {"prompt_tokens": max(1, len(text_in) // 4),
                "completion_tokens": max(1, len(text_out) // 4),
                "cached_tokens": 0, "reasoning_tokens": 0}

    def _record(self, request: web.Request, body: dict, views, answers, fault,
                stage: str | None = None) -> None:
        if not self.keep_log and self._log_file is None:
            return
        first = views[0]
        entry = {
            "n": self._count,
            "time": time.time(),
            "path": request.path,
            "headers": {str(k): ("[REDACTED]" if k.lower() in _SENSITIVE else v)
                        for k, v in request.headers.items()},
            "body": body,
            "criterion_id": first.criterion_id,
            "criterion_text": first.criterion_text,
            "response_text": first.response_text,
            "criteria": [v.as_dict() for v in views],
            "answers": answers,
            "fault": fault,
            "stage": stage,
            "raw_body": request.get("raw_body", b"").decode("utf-8", "replace"),
        }
        if self.keep_log:
            self.requests.append(entry)
        if self._log_file is not None:
            self._log_file.write(orjson.dumps(entry) + b"\n")
            self._log_file.flush()


def _as_object(text: str) -> Any:
    """A scripted stage reply as a tool-call input (Anthropic needs an object, not text)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return {"text": text}


def _error(status: int, message: str, headers: dict | None = None, anthropic: bool = False) -> web.Response:
    if anthropic:
        return _anthropic_error(status, message, headers)
    payload = {"error": {"message": message, "type": "fake_error", "code": status}}
    return web.Response(status=status, body=orjson.dumps(payload), headers=headers,
                        content_type="application/json")


def _anthropic_error(status: int, message: str, headers: dict | None = None) -> web.Response:
    kind = {429: "rate_limit_error", 500: "api_error"}.get(status, "invalid_request_error")
    payload = {"type": "error", "error": {"type": kind, "message": message}}
    return web.Response(status=status, body=orjson.dumps(payload), headers=headers,
                        content_type="application/json")


async def _async(response: web.Response) -> web.Response:
    return response
