"""The fake server's batch endpoints: OpenAI's Files + Batch API and Anthropic's Message Batches.

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}/content``,
``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window: 24h``) and
``GET /v1/batches/{id}`` (``status`` validating → in_progress → finalizing → completed, or
expired; ``output_file_id`` / ``error_file_id`` JSONL lines keyed by ``custom_id``).
Anthropic: ``POST /v1/messages/batches`` (``requests: [{custom_id, params}]``),
``GET /v1/messages/batches/{id}`` (``processing_status`` in_progress → ended, ``results_url``)
and ``GET /v1/messages/batches/{id}/results`` (lines ``{custom_id, result: {type: succeeded |
errored | canceled | expired, ...}}``).

Each request of a batch is answered by the server's own chat or messages endpoint over
loopback HTTP, so policies, faults (a scripted 500 becomes an errored request), the prompt cache
and the request log apply to batch requests as to live ones (the server bills them as batch
requests: they carry :data:`BATCH_HEADER`). The requests of a batch are answered
``concurrency`` at a time, in the order submitted, as a provider processes them "asynchronously
and concurrently": an entry of the prompt cache written by one is read by those that start
after its reply, not by those already running. :class:`BatchScript` adds what only batches do:
slow completion, expiry and that concurrency.

Example::

    async with FakeJudgeServer(batches=BatchScript(complete_after_s=2, expire=1)) as server:
        ...   # the first batch expires with half its requests answered; later ones complete
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import ClientSession, TCPConnector, web

_FORWARDED = ("authorization", "x-api-key", "api-key", "anthropic-version")
BATCH_HEADER = "x-fake-batch"  # on the server's own requests that answer a batch's
_EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass(frozen=True)
class BatchScript:
    """How the fake server's batches behave.

    ``complete_after_s``: a batch stays ``in_progress`` this long before its requests are
    answered (slow completion). ``expire``: the first ``expire`` batches created expire, with
    only the first half of their requests answered (the rest come back expired).
    ``concurrency``: how many of a batch's requests are answered at once.
    """

    complete_after_s: float = 0.0
    expire: int = 0
    concurrency: int = 64


class FakeBatches:
    """The files and batches of one fake server (kept in memory while it runs)."""

    def __init__(self, script: BatchScript, base_url: Any):
        self.script = script
        self._base_url = base_url  # a callable: the server's port is known once it started
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}  # OpenAI and Anthropic batch objects
        self._results: dict[str, bytes] = {}  # Anthropic results JSONL by batch id
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()
        self.created = 0  # batches created, both providers

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{file_id}/content", self._content)
        app.router.add_post("/v1/batches", self._create_openai)
        app.router.add_get("/v1/batches", self._list_openai)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve_openai)
        app.router.add_post("/v1/messages/batches", self._create_anthropic)
        app.router.add_get("/v1/messages/batches/{batch_id}", self._retrieve_anthropic)
        app.router.add_get("/v1/messages/batches/{batch_id}/results", self._results_anthropic)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- OpenAI -------------------------------------------------------------------------------

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if purpose != "batch" or not isinstance(upload, web.FileField):
            return _openai_error(400, "expected multipart fields purpose=batch and file")
        data = upload.file.read()
        file_id = f"file-fake{next(self._ids)}"
        self.files[file_id] = data
        return web.json_response({"id": file_id, "object": "file", "bytes": len(data),
                                  "created_at": int(time.time()), "filename": upload.filename,
                                  "purpose": "batch"})

    async def _content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["file_id"])
        if data is None:
            return _openai_error(404, "No such File object")
        return web.Response(body=data, content_type="application/jsonl")

    async def _create_openai(self, request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        data = self.files.get(body.get("input_file_id", ""))
        if data is None:
            return _openai_error(400, "input_file_id: no such file")
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return _openai_error(400, "endpoint must be /v1/chat/completions and "
                                      "completion_window 24h")
        lines = [orjson.loads(line) for line in data.splitlines() if line.strip()]
        batch_id = f"batch_fake{next(self._ids)}"
        batch: dict[str, Any] = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
            "input_file_id": body["input_file_id"], "completion_window": "24h",
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()), "metadata": body.get("metadata"),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self.batches[batch_id] = batch
        self._start(self._run_openai(batch, lines, _forwarded(request)))
        return web.json_response(batch)

    async def _list_openai(self, request: web.Request) -> web.Response:
        limit = int(request.query.get("limit", "20"))
        batches = [b for b in reversed(self.batches.values()) if b.get("object") == "batch"]
        return web.json_response({"object": "list", "data": batches[:limit],
                                  "has_more": len(batches) > limit})

    async def _retrieve_openai(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None or batch.get("object") != "batch":
            return _openai_error(404, "No such Batch object")
        return web.json_response(batch)

    async def _run_openai(self, batch: dict[str, Any], lines: list[dict], headers: dict) -> None:
        expires = self._expires()
        batch["status"] = "in_progress"
        await asyncio.sleep(self.script.complete_after_s)
        answered = lines[: len(lines) // 2] if expires else lines
        replies = await self._answer([(line["url"].removeprefix("/v1"), line["body"])
                                      for line in answered], headers)
        batch["status"] = "finalizing"
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for n, (line, (status, payload)) in enumerate(zip(answered, replies)):
            record = {"id": f"batch_req_{n}", "custom_id": line["custom_id"],
                      "response": {"status_code": status, "request_id": f"req_{n}",
                                   "body": payload}, "error": None}
            (out if status == 200 else err).append(record)
        for n, line in enumerate(lines[len(answered):], len(answered)):
            err.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"], "response": None,
                        "error": {"code": "batch_expired", "message": _EXPIRED_MESSAGE}})
        batch["output_file_id"] = self._file(out)
        batch["error_file_id"] = self._file(err)
        batch["request_counts"].update(completed=len(out), failed=len(err))
        batch["status"] = "expired" if expires else "completed"

    def _file(self, records: list[dict]) -> str | None:
        if not records:
            return None
        file_id = f"file-fake{next(self._ids)}"
        self.files[file_id] = b"".join(orjson.dumps(r) + b"\n" for r in records)
        return file_id

    # --- Anthropic ----------------------------------------------------------------------------

    async def _create_anthropic(self, request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _anthropic_error(400, "requests: expected a non-empty list")
        batch_id = f"msgbatch_fake{next(self._ids)}"
        batch: dict[str, Any] = {
            "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
            "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0,
                               "canceled": 0, "expired": 0},
            "ended_at": None, "created_at": _now(), "expires_at": None,
            "cancel_initiated_at": None, "archived_at": None, "results_url": None}
        self.batches[batch_id] = batch
        self._start(self._run_anthropic(batch, requests, _forwarded(request)))
        return web.json_response(batch)

    async def _retrieve_anthropic(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None or batch.get("type") != "message_batch":
            return _anthropic_error(404, "batch not found")
        return web.json_response(batch)

    async def _results_anthropic(self, request: web.Request) -> web.Response:
        data = self._results.get(request.match_info["batch_id"])
        if data is None:
            return _anthropic_error(404, "results are not available until the batch has ended")
        return web.Response(body=data, content_type="application/binary")

    async def _run_anthropic(self, batch: dict[str, Any], requests: list[dict],
                             headers: dict) -> None:
        expires = self._expires()
        await asyncio.sleep(self.script.complete_after_s)
        answered = requests[: len(requests) // 2] if expires else requests
        replies = await self._answer([("/messages", r["params"]) for r in answered], headers)
        counts = batch["request_counts"]
        lines = []
        for one, (status, payload) in zip(answered, replies):
            if status == 200:
                result: dict[str, Any] = {"type": "succeeded", "message": payload}
                counts["succeeded"] += 1
            else:
                result = {"type": "errored", "error": payload}
                counts["errored"] += 1
            lines.append({"custom_id": one["custom_id"], "result": result})
        for one in requests[len(answered):]:
            lines.append({"custom_id": one["custom_id"], "result": {"type": "expired"}})
            counts["expired"] += 1
        counts["processing"] = 0
        self._results[batch["id"]] = b"".join(orjson.dumps(line) + b"\n" for line in lines)
        batch.update(processing_status="ended", ended_at=_now(),
                     results_url=f"{self._base_url()}/messages/batches/{batch['id']}/results")

    # --- shared -------------------------------------------------------------------------------

    def _expires(self) -> bool:
        self.created += 1
        return self.created <= self.script.expire

    def _start(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, calls: list[tuple[str, dict]], headers: dict) -> list[tuple[int, Any]]:
        """Each call answered by the server's own endpoint: (HTTP status, JSON body)."""
        connector = TCPConnector(limit=max(1, self.script.concurrency))
        async with ClientSession(headers={**headers, BATCH_HEADER: "1"},
                                 connector=connector) as session:
            async def one(path: str, body: dict) -> tuple[int, Any]:
                async with session.post(self._base_url() + path, data=orjson.dumps(body),
                                        headers={"Content-Type": "application/json"}) as reply:
                    raw = await reply.read()
                    try:
                        return reply.status, orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        return reply.status, {"error": {"message": raw.decode("utf-8", "replace")}}

            return list(await asyncio.gather(*(one(path, body) for path, body in calls)))


def _forwarded(request: web.Request) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _openai_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}},
                             status=status)


def _anthropic_error(status: int, message: str) -> web.Response:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}},
                             status=status)
