"""The providers' batch APIs, spoken natively: OpenAI's Files + Batch API and Anthropic's
Message Batches. Each submits requests under a ``custom_id``, reports a batch's state, and
reads its results back as one :class:`BatchOutcome` per ``custom_id``.

OpenAI: the requests are uploaded as a JSONL file (``POST /files``, ``purpose=batch``; one line
``{custom_id, method: POST, url: /v1/chat/completions, body}`` each), then ``POST /batches``
creates the batch; ``GET /batches/{id}`` is polled until ``completed``, ``expired``, ``failed``
or ``cancelled``; the lines of its ``output_file_id`` and ``error_file_id`` (``GET
/files/{id}/content``) carry each request's ``response`` (``status_code``, ``body``) or
``error``. Anthropic: ``POST /messages/batches`` with ``requests: [{custom_id, params}]``;
``GET /messages/batches/{id}`` is polled until ``processing_status`` is ``ended``; each line
of ``/results`` holds ``result.type`` succeeded (``message``), errored (``error``), canceled
or expired.

Example:
    >>> lines = OpenAIBatches().input_lines([("k1", {"model": "gpt-4.1", "messages": []})])
    >>> lines.decode().strip()
    '{"custom_id":"k1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1","messages":[]}}'
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from assay.errors import AssayError
from assay.judges.retry import classify_status
from assay.judges.transport import HttpResult, Transport
from assay.judges.types import Failure, FailureKind

_EXCERPT = 300
EXPIRED = "the request expired in its batch (not run within the provider's 24 h window)"


class BatchError(AssayError):
    """A batch could not be submitted, polled or read (the message names the batch and why)."""


@dataclass(frozen=True, slots=True)
class BatchState:
    """A batch as the provider reports it: ``status`` in the provider's own words."""

    id: str
    status: str
    ended: bool
    result_files: tuple[str, ...] = ()  # OpenAI: output and error file ids


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """One request's result: the reply body (a chat completion or a message), or a failure."""

    custom_id: str
    payload: dict[str, Any] | None
    failure: Failure | None = None


class OpenAIBatches:
    """OpenAI's Batch API (``/v1/chat/completions`` requests, 24 h window)."""

    provider = "openai"
    ENDED = frozenset({"completed", "expired", "failed", "cancelled"})

    def input_lines(self, requests: list[tuple[str, dict[str, Any]]]) -> bytes:
        return b"".join(orjson.dumps({"custom_id": custom_id, "method": "POST",
                                      "url": "/v1/chat/completions", "body": body}) + b"\n"
                        for custom_id, body in requests)

    async def submit(self, transport: Transport, requests: list[tuple[str, dict[str, Any]]],
                     timeout_s: float, submission: str) -> str:
        """Upload the requests and create their batch, tagged ``metadata.assay_submission``."""
        boundary = uuid.uuid4().hex
        form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"assay-batch.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n"
                ).encode() + self.input_lines(requests) + f"\r\n--{boundary}--\r\n".encode()
        uploaded = _json(await transport.post_bytes(
            "/files", form, f"multipart/form-data; boundary={boundary}", timeout_s),
            "upload the batch input file")
        created = _json(await transport.post_json(
            "/batches", {"input_file_id": uploaded["id"], "endpoint": "/v1/chat/completions",
                         "completion_window": "24h", "metadata": {"assay_submission": submission}},
            timeout_s), "create the batch")
        return str(created["id"])

    async def find(self, transport: Transport, submission: str, timeout_s: float) -> str | None:
        """The id of the batch created under ``submission``, among the latest 100, if any."""
        listed = _body(await transport.get("/batches?limit=100", timeout_s), "list the batches")
        try:
            batches = orjson.loads(listed).get("data") or []
        except (orjson.JSONDecodeError, AttributeError):
            raise BatchError(f"cannot list the batches: not a list: {_excerpt(listed)}") from None
        for batch in batches:
            if (batch.get("metadata") or {}).get("assay_submission") == submission:
                return str(batch["id"])
        return None

    async def state(self, transport: Transport, batch_id: str, timeout_s: float) -> BatchState:
        batch = _json(await transport.get(f"/batches/{batch_id}", timeout_s),
                      f"read batch {batch_id}")
        files = tuple(f for f in (batch.get("output_file_id"), batch.get("error_file_id")) if f)
        status = str(batch.get("status"))
        return BatchState(batch_id, status, status in self.ENDED, files)

    async def results(self, transport: Transport, state: BatchState,
                      timeout_s: float) -> list[BatchOutcome]:
        outcomes = []
        for file_id in state.result_files:
            text = _body(await transport.get(f"/files/{file_id}/content", timeout_s),
                         f"download {file_id} of batch {state.id}")
            for line in _lines(text, f"{file_id} of batch {state.id}"):
                outcomes.append(self._outcome(line))
        return outcomes

    @staticmethod
    def _outcome(line: dict[str, Any]) -> BatchOutcome:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or {}
        error = line.get("error") or {}
        status = response.get("status_code")
        if status == 200 and isinstance(response.get("body"), dict):
            return BatchOutcome(custom_id, response["body"])
        if error.get("code") == "batch_expired":
            return BatchOutcome(custom_id, None, Failure(FailureKind.TIMEOUT, EXPIRED))
        if isinstance(status, int):
            kind = classify_status(status) or FailureKind.TRANSPORT
            message = _excerpt(orjson.dumps(response.get("body")))
            return BatchOutcome(custom_id, None, Failure(kind, f"HTTP {status}: {message}", status))
        return BatchOutcome(custom_id, None, Failure(
            FailureKind.SERVER_ERROR, f"batch error {error.get('code')}: {error.get('message')}"))


class AnthropicBatches:
    """Anthropic's Message Batches (``/v1/messages/batches``)."""

    provider = "anthropic"

    async def submit(self, transport: Transport, requests: list[tuple[str, dict[str, Any]]],
                     timeout_s: float, submission: str) -> str:
        created = _json(await transport.post_json(
            "/messages/batches", {"requests": [{"custom_id": custom_id, "params": body}
                                               for custom_id, body in requests]}, timeout_s),
            "create the message batch")
        return str(created["id"])

    async def find(self, transport: Transport, submission: str, timeout_s: float) -> str | None:
        """Message Batches carry no metadata: a batch created by a session that stopped before
        recording its id cannot be found (its requests are submitted again)."""
        return None

    async def state(self, transport: Transport, batch_id: str, timeout_s: float) -> BatchState:
        batch = _json(await transport.get(f"/messages/batches/{batch_id}", timeout_s),
                      f"read message batch {batch_id}")
        status = str(batch.get("processing_status"))
        return BatchState(batch_id, status, status == "ended")

    async def results(self, transport: Transport, state: BatchState,
                      timeout_s: float) -> list[BatchOutcome]:
        text = _body(await transport.get(f"/messages/batches/{state.id}/results", timeout_s),
                     f"download the results of message batch {state.id}")
        return [self._outcome(line) for line in _lines(text, f"results of batch {state.id}")]

    @staticmethod
    def _outcome(line: dict[str, Any]) -> BatchOutcome:
        custom_id = str(line.get("custom_id"))
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            return BatchOutcome(custom_id, result["message"])
        if kind == "expired":
            return BatchOutcome(custom_id, None, Failure(FailureKind.TIMEOUT, EXPIRED))
        if kind == "canceled":
            return BatchOutcome(custom_id, None, Failure(
                FailureKind.TRANSPORT, "the request was canceled with its batch"))
        error = (result.get("error") or {}).get("error") or {}
        failure_kind = {"rate_limit_error": FailureKind.RATE_LIMIT,
                        "api_error": FailureKind.SERVER_ERROR,
                        "overloaded_error": FailureKind.SERVER_ERROR}.get(
            str(error.get("type")), FailureKind.TRANSPORT)
        status = 400 if failure_kind is FailureKind.TRANSPORT else None  # not retried as is
        return BatchOutcome(custom_id, None, Failure(
            failure_kind, f"errored in batch: {error.get('type')}: "
                          f"{_excerpt(str(error.get('message', '')).encode())}", status))


def batches_for(wire: str) -> OpenAIBatches | AnthropicBatches:
    """The batch API of a judge's wire (``openai`` or ``anthropic``)."""
    return AnthropicBatches() if wire == "anthropic" else OpenAIBatches()


def _body(result: HttpResult | Failure, doing: str) -> bytes:
    if isinstance(result, Failure):
        raise BatchError(f"cannot {doing}: {result.message}")
    if result.status != 200:
        raise BatchError(f"cannot {doing}: HTTP {result.status}: {_excerpt(result.body)}")
    return result.body


def _json(result: HttpResult | Failure, doing: str) -> dict[str, Any]:
    body = _body(result, doing)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BatchError(f"cannot {doing}: the reply is not JSON: {_excerpt(body)}") from None
    if not isinstance(data, dict) or "id" not in data:
        raise BatchError(f"cannot {doing}: the reply has no id: {_excerpt(body)}")
    return data


def _lines(text: bytes, where: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise BatchError(f"{where}, line {n}: not JSON: {_excerpt(line)}") from None
        if not isinstance(record, dict) or "custom_id" not in record:
            raise BatchError(f"{where}, line {n}: no custom_id")
        out.append(record)
    return out


def _excerpt(body: bytes) -> str:
    from assay.judges.secrets import redact

    return redact(body[:_EXCERPT].decode("utf-8", "replace").strip())
