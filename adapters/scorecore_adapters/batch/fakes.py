"""In-process fakes of OpenAI's Batch API and Anthropic's Message Batches, for offline tests.

Each fake is an ``httpx.MockTransport`` handler (``fake.client()`` gives an
``httpx.AsyncClient`` on it) that follows the provider's documented protocol: OpenAI's file
upload (``purpose=batch``), batch creation, the status ``validating → in_progress →
finalizing → completed`` (or ``expired``, ``cancelled``, ``failed``), output and error files;
Anthropic's batch creation, ``processing_status`` ``in_progress → ended`` and the
``results_url`` JSONL with ``succeeded``, ``errored``, ``canceled`` and ``expired`` results.
Time is read from the ``clock`` given (a :class:`~scorecore_adapters.testing.VirtualClock`
shared with the judge makes every wait virtual): a batch ends ``processing_seconds`` after it
was created. A batch's ``created_at`` is the wall clock's, as a provider stamps it (a judge
recovering a batch reads the listing back to its journalled prepare time).

``answer(body)`` gives each request's reply: a ``str`` (the reply text), or
``(status, error_body)`` for a request the provider fails. Knobs for the failure paths:
``refuse_next`` (statuses for the next batch creations, e.g. ``[429]``), ``expire_after``
(a batch answers only that many requests, then expires), ``cancel_after`` (the same, then
is cancelled), ``malformed`` (custom ids whose result line is broken), ``fail_status_reads``
(that many status reads answer 500), ``duplicated`` (custom ids whose result is followed by
a second line for the same id, a server error), ``reported_output_tokens`` (every answer's
usage claims that many output tokens: a result file lying about usage), and
``kill_at`` / ``kill_after_processing`` (raise :class:`SimulatedKill` on the n-th HTTP call,
before or after the fake acted on it, and on every call after it until :meth:`restart`: a
process killed mid-exchange).

>>> import anyio, json
>>> from scorecore_adapters.testing import VirtualClock
>>> fake = FakeOpenAIBatchAPI(lambda body: '{"score": 1}', clock=VirtualClock())
>>> async def listing():
...     async with fake.client() as client:
...         return (await client.get("https://api.openai.com/v1/batches")).json()["data"]
>>> anyio.run(listing)
[]
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeAlias

import attrs
import httpx

__all__ = ["FakeAnthropicBatchAPI", "FakeOpenAIBatchAPI", "FakeReply", "SimulatedKill"]

FakeReply: TypeAlias = str | tuple[int, Mapping[str, Any]]
"""A fake's reply to one request: the reply text, or ``(status, error_body)``."""

_CUSTOM_ID: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class SimulatedKill(BaseException):
    """Raised by a fake to stand for the process being killed (nothing should catch it)."""


def _tokens(value: object) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


@attrs.define(eq=False)
class _Batch:
    id: str
    created: float
    lines: list[tuple[str, Mapping[str, Any]]]
    answered: int  # how many requests the batch answers before its end
    terminal: str  # what it ends as
    cancel_requested: bool = False
    results: dict[str, list[dict[str, Any]]] | None = None
    input_file_id: str = ""
    metadata: Mapping[str, Any] = attrs.field(factory=dict)
    # The provider's own wall clock (its created_at), as a real provider stamps a batch.
    created_wall: float = attrs.field(factory=time.time)


class _Fake:
    """What both fakes share: the clock, the answers, the counters and the knobs."""

    def __init__(
        self, answer: Callable[[Mapping[str, Any]], FakeReply], *,
        clock: Callable[[], float], processing_seconds: float = 600.0,
        base_url: str,
    ) -> None:
        self.answer = answer
        self.clock = clock
        self.processing_seconds = processing_seconds
        self.base_url = base_url.rstrip("/")
        self.batches: dict[str, _Batch] = {}
        self.submitted: list[str] = []
        """Every ``custom_id`` submitted, in order, over all batches."""
        self.calls: list[str] = []
        """Every HTTP call as ``"METHOD path"``."""
        self.refuse_next: list[int] = []
        self.expire_after: int | None = None
        self.cancel_after: int | None = None
        self.malformed: set[str] = set()
        self.duplicated: set[str] = set()
        """Custom ids whose result line is followed by a second one (a server error)."""
        self.kill_at: int | None = None
        self.kill_after_processing = False
        self.fail_status_reads = 0
        """How many of the next batch status reads answer 500 (a provider outage)."""
        self.reported_output_tokens: int | None = None
        """The output tokens every answer's usage claims (``None``: what the reply holds)."""
        self.dead = False
        """Set by a simulated kill: every later call is refused until :meth:`restart`."""
        self._ids = 0

    def restart(self) -> None:
        """After a simulated kill: answer calls again (the provider never went away)."""
        self.dead = False
        self.kill_at = None

    def client(self) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` whose every request this fake answers."""
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:06d}"

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one HTTP request (the ``httpx.MockTransport`` handler)."""
        if self.dead:  # the killed process's other tasks: nothing they send arrives
            raise SimulatedKill("the process is dead")
        self.calls.append(f"{request.method} {request.url.path}")
        kill = self.kill_at is not None and len(self.calls) == self.kill_at
        if kill and not self.kill_after_processing:
            self.dead = True
            raise SimulatedKill(self.calls[-1])
        if self.fail_status_reads and request.method == "GET" and self._is_status(request):
            self.fail_status_reads -= 1
            return httpx.Response(500, json={"error": {"message": "internal error",
                                                       "type": "server_error"}})
        response = self._route(request)
        if kill:
            self.dead = True
            raise SimulatedKill(self.calls[-1])
        return response

    def _route(self, request: httpx.Request) -> httpx.Response:
        raise NotImplementedError

    def _is_status(self, request: httpx.Request) -> bool:
        return request.url.path.rstrip("/").rsplit("/", 1)[-1] in self.batches

    def _create(self, lines: list[tuple[str, Mapping[str, Any]]]) -> _Batch:
        answered, terminal = len(lines), "done"
        if self.expire_after is not None:
            answered, terminal = min(self.expire_after, len(lines)), "expired"
        elif self.cancel_after is not None:
            answered, terminal = min(self.cancel_after, len(lines)), "cancelled"
        batch = _Batch(id="", created=self.clock(), lines=lines, answered=answered,
                       terminal=terminal)
        self.submitted.extend(cid for cid, _ in lines)
        return batch

    def _output_tokens(self, reply: str) -> int:
        if self.reported_output_tokens is not None:
            return self.reported_output_tokens
        return _tokens(reply)

    def _ended(self, batch: _Batch) -> bool:
        return self.clock() - batch.created >= self.processing_seconds or (
            batch.cancel_requested)

    def duplicates(self) -> list[str]:
        """Custom ids submitted more than once (a correct client makes none)."""
        seen: set[str] = set()
        return [cid for cid in self.submitted if cid in seen or seen.add(cid)]  # type: ignore[func-returns-value]


def _error(status: int, message: str, type_: str = "invalid_request_error") -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message, "type": type_,
                                                  "code": None}})


def _multipart(request: httpx.Request) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name → (filename, content)."""
    match = re.search(r"boundary=([^;]+)", request.headers.get("content-type", ""))
    if match is None:
        return {}
    boundary = b"--" + match.group(1).strip('"').encode()
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in request.content.split(boundary)[1:-1]:
        head, _, content = part.strip(b"\r\n").partition(b"\r\n\r\n")
        disposition = head.decode(errors="replace")
        name = re.search(r'name="([^"]*)"', disposition)
        filename = re.search(r'filename="([^"]*)"', disposition)
        if name is not None:
            out[name.group(1)] = (filename.group(1) if filename else None, content)
    return out


class FakeOpenAIBatchAPI(_Fake):
    """OpenAI's Files and Batch endpoints (``/v1/files``, ``/v1/batches``) in memory.

    Args:
        answer: each request body's reply (see :data:`FakeReply`).
        clock: the time source (share the judge's virtual clock).
        processing_seconds: how long a batch runs before it ends.
        base_url: the API root it serves (any host is answered).
    """

    def __init__(
        self, answer: Callable[[Mapping[str, Any]], FakeReply], *,
        clock: Callable[[], float], processing_seconds: float = 600.0,
        base_url: str = "https://api.openai.com/v1",
    ) -> None:
        super().__init__(answer, clock=clock, processing_seconds=processing_seconds,
                         base_url=base_url)
        self.files: dict[str, tuple[str, bytes]] = {}
        self.statuses_seen: dict[str, list[str]] = {}
        """Every status each batch was read in, in order (for protocol tests)."""
        self.logprobs: Callable[[str], list[dict[str, Any]]] | None = None
        """The ``logprobs.content`` a reply carries when its body asks for them (``"logprobs":
        true``), as Chat Completions gives them; ``None`` (the default): the reply as one
        certain token."""

    def _route(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/v1")
        parts = [p for p in path.split("/") if p]
        if request.method == "POST" and parts == ["files"]:
            return self._upload(request)
        if request.method == "GET" and len(parts) == 3 and parts[0] == "files":
            found = self.files.get(parts[1])
            if found is None:
                return _error(404, f"No such File object: {parts[1]}")
            return httpx.Response(200, content=found[1])
        if request.method == "POST" and parts == ["batches"]:
            return self._create_batch(json.loads(request.content))
        if request.method == "GET" and parts == ["batches"]:
            return self._list(request)
        if parts[:1] == ["batches"] and len(parts) >= 2 and parts[1] in self.batches:
            batch = self.batches[parts[1]]
            if request.method == "POST" and parts[2:] == ["cancel"]:
                batch.cancel_requested = True
                return httpx.Response(200, json=self._object(batch))
            if request.method == "GET" and len(parts) == 2:
                return httpx.Response(200, json=self._object(batch))
        return _error(404, f"Unknown request URL: {request.method} {request.url.path}")

    def _upload(self, request: httpx.Request) -> httpx.Response:
        fields = _multipart(request)
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if purpose != "batch" or "file" not in fields:
            return _error(400, "a batch input file needs purpose=batch and a file")
        file_id = self._new_id("file-")
        self.files[file_id] = ("batch", fields["file"][1])
        return httpx.Response(200, json={
            "id": file_id, "object": "file", "bytes": len(fields["file"][1]),
            "created_at": int(self.clock()), "filename": fields["file"][0], "purpose": "batch",
        })

    def _create_batch(self, body: Mapping[str, Any]) -> httpx.Response:
        if self.refuse_next:
            status = self.refuse_next.pop(0)
            return _error(status, "Rate limit reached for batch creation",
                          "rate_limit_error" if status == 429 else "server_error")
        found = self.files.get(str(body.get("input_file_id")))
        if found is None or found[0] != "batch":
            return _error(400, "input_file_id must name a file uploaded with purpose=batch")
        if body.get("endpoint") != "/v1/chat/completions" or body.get(
                "completion_window") != "24h":
            return _error(400, "endpoint must be /v1/chat/completions, completion_window 24h")
        lines: list[tuple[str, Mapping[str, Any]]] = []
        for raw in found[1].decode().splitlines():
            line = json.loads(raw)
            if not _CUSTOM_ID.match(str(line.get("custom_id"))) or line.get(
                    "url") != "/v1/chat/completions" or line.get("method") != "POST":
                return _error(400, f"bad batch input line: {raw[:80]}")
            lines.append((line["custom_id"], line["body"]))
        if len({cid for cid, _ in lines}) != len(lines):
            return _error(400, "custom_id values must be unique within a batch")
        batch = self._create(lines)
        batch.id = self._new_id("batch_")
        batch.input_file_id = str(body["input_file_id"])
        batch.metadata = dict(body.get("metadata") or {})
        self.batches[batch.id] = batch
        return httpx.Response(200, json=self._object(batch))

    def _list(self, request: httpx.Request) -> httpx.Response:
        newest = sorted(self.batches.values(), key=lambda b: b.id, reverse=True)
        after = request.url.params.get("after")
        if after:
            newest = [b for b in newest if b.id < after]
        limit = int(request.url.params.get("limit", "20"))
        page = newest[:limit]
        return httpx.Response(200, json={
            "object": "list", "data": [self._object(b) for b in page],
            "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None,
            "has_more": len(newest) > limit,
        })

    def _status(self, batch: _Batch) -> str:
        elapsed = self.clock() - batch.created
        if batch.cancel_requested:
            return "cancelled"
        if elapsed < 0.05 * self.processing_seconds:
            return "validating"
        if elapsed < self.processing_seconds:
            return "in_progress"
        if elapsed < 1.05 * self.processing_seconds and batch.terminal == "done":
            return "finalizing"
        return "completed" if batch.terminal == "done" else batch.terminal

    def _object(self, batch: _Batch) -> dict[str, Any]:
        status = self._status(batch)
        self.statuses_seen.setdefault(batch.id, []).append(status)
        out: dict[str, Any] = {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "errors": None, "input_file_id": batch.input_file_id, "completion_window": "24h",
            "status": status, "output_file_id": None, "error_file_id": None,
            "created_at": int(batch.created_wall), "metadata": dict(batch.metadata),
            "request_counts": {"total": len(batch.lines), "completed": 0, "failed": 0},
        }
        if status in ("completed", "expired", "cancelled"):
            out.update(self._files(batch, status))
        return out

    def _files(self, batch: _Batch, status: str) -> dict[str, Any]:
        if batch.results is None:
            answered = 0 if batch.cancel_requested else batch.answered
            output: list[dict[str, Any]] = []
            errors: list[dict[str, Any]] = []
            for i, (cid, body) in enumerate(batch.lines):
                if i >= answered:
                    code = "batch_expired" if status == "expired" else "batch_cancelled"
                    errors.append({"id": f"batch_req_{cid}", "custom_id": cid, "response": None,
                                   "error": {"code": code, "message": f"request {code[6:]}"}})
                    continue
                reply = self.answer(body)
                if isinstance(reply, tuple):
                    errors.append({"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
                                   "response": {"status_code": reply[0], "request_id": cid,
                                                "body": reply[1]}})
                    continue
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": reply}}
                if body.get("logprobs"):
                    choice["logprobs"] = {"content": (
                        self.logprobs(reply) if self.logprobs is not None else [
                            {"token": reply, "logprob": 0.0, "top_logprobs": [
                                {"token": reply, "logprob": 0.0}]}])}
                completion = {
                    "id": f"chatcmpl-{cid}", "object": "chat.completion",
                    "model": body.get("model"), "choices": [choice],
                    "usage": {"prompt_tokens": _tokens(body.get("messages")),
                              "completion_tokens": self._output_tokens(reply),
                              "total_tokens": _tokens(body.get("messages"))
                              + self._output_tokens(reply)},
                }
                if cid in self.malformed:
                    completion = {"object": "chat.completion", "note": "no choices"}
                output.append({"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
                               "response": {"status_code": 200, "request_id": cid,
                                            "body": completion}})
                if cid in self.duplicated:
                    output.append({"id": f"batch_req_{cid}_2", "custom_id": cid, "error": None,
                                   "response": {"status_code": 500, "request_id": cid,
                                                "body": {"error": {"message": "copy",
                                                                   "type": "server_error"}}}})
            batch.results = {"output": output, "errors": errors}
        out: dict[str, Any] = {}
        for name, key in (("output_file_id", "output"), ("error_file_id", "errors")):
            lines = batch.results[key]
            if lines:
                file_id = f"file-{key}-{batch.id}"
                self.files[file_id] = (key, "".join(json.dumps(x) + "\n" for x in lines).encode())
                out[name] = file_id
        out["request_counts"] = {"total": len(batch.lines),
                                 "completed": len(batch.results["output"]),
                                 "failed": len(batch.results["errors"])}
        return out


class FakeAnthropicBatchAPI(_Fake):
    """Anthropic's Message Batches endpoints (``/v1/messages/batches``) in memory.

    Args:
        answer: each request's ``params``' reply (see :data:`FakeReply`).
        clock: the time source (share the judge's virtual clock).
        processing_seconds: how long a batch runs before it ends.
        base_url: the API root it serves (used in ``results_url``).
    """

    def __init__(
        self, answer: Callable[[Mapping[str, Any]], FakeReply], *,
        clock: Callable[[], float], processing_seconds: float = 600.0,
        base_url: str = "https://api.anthropic.com",
    ) -> None:
        super().__init__(answer, clock=clock, processing_seconds=processing_seconds,
                         base_url=base_url)

    def _route(self, request: httpx.Request) -> httpx.Response:
        parts = [p for p in request.url.path.split("/") if p]
        if parts[:3] != ["v1", "messages", "batches"]:
            return _error(404, f"Unknown request URL: {request.url.path}", "not_found_error")
        rest = parts[3:]
        if request.method == "POST" and not rest:
            return self._create_batch(json.loads(request.content))
        if request.method == "GET" and not rest:
            return self._list(request)
        batch = self.batches.get(rest[0]) if rest else None
        if batch is None:
            return _error(404, "batch not found", "not_found_error")
        if request.method == "POST" and rest[1:] == ["cancel"]:
            batch.cancel_requested = True
            return httpx.Response(200, json=self._object(batch))
        if request.method == "GET" and rest[1:] == ["results"]:
            if not self._ended(batch):
                return _error(400, "results are available once the batch has ended")
            return httpx.Response(200, content=self._results(batch))
        if request.method == "GET" and len(rest) == 1:
            return httpx.Response(200, json=self._object(batch))
        return _error(404, f"Unknown request URL: {request.url.path}", "not_found_error")

    def _create_batch(self, body: Mapping[str, Any]) -> httpx.Response:
        if self.refuse_next:
            status = self.refuse_next.pop(0)
            return httpx.Response(status, json={"type": "error", "error": {
                "type": "rate_limit_error" if status == 429 else "api_error",
                "message": "Number of request tokens has exceeded your rate limit"}})
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error(400, "requests: a non-empty list is required")
        lines: list[tuple[str, Mapping[str, Any]]] = []
        for item in requests:
            params = item.get("params") if isinstance(item, dict) else None
            cid = item.get("custom_id") if isinstance(item, dict) else None
            if not _CUSTOM_ID.match(str(cid)) or not isinstance(params, dict) or not {
                    "model", "max_tokens", "messages"} <= set(params):
                return _error(400, f"bad request in batch: {str(item)[:80]}")
            lines.append((str(cid), params))
        if len({cid for cid, _ in lines}) != len(lines):
            return _error(400, "custom_id values must be unique within a batch")
        batch = self._create(lines)
        batch.id = self._new_id("msgbatch_")
        self.batches[batch.id] = batch
        return httpx.Response(200, json=self._object(batch))

    def _list(self, request: httpx.Request) -> httpx.Response:
        newest = sorted(self.batches.values(), key=lambda b: b.id, reverse=True)
        after = request.url.params.get("after_id")
        if after:
            newest = [b for b in newest if b.id < after]
        limit = int(request.url.params.get("limit", "20"))
        page = newest[:limit]
        return httpx.Response(200, json={
            "data": [self._object(b) for b in page], "has_more": len(newest) > limit,
            "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None,
        })

    def _object(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        status = "ended" if ended else ("canceling" if batch.cancel_requested else "in_progress")
        return {
            "id": batch.id, "type": "message_batch", "processing_status": status,
            "request_counts": {"processing": 0 if ended else len(batch.lines),
                               "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "created_at": datetime.fromtimestamp(batch.created_wall, UTC).isoformat().replace(
                "+00:00", "Z"),
            "ended_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch.id}/results"
            if ended else None,
        }

    def _results(self, batch: _Batch) -> bytes:
        answered = 0 if batch.cancel_requested else batch.answered
        out = []
        for i, (cid, params) in enumerate(batch.lines):
            if i >= answered:
                kind = "expired" if batch.terminal == "expired" else "canceled"
                out.append({"custom_id": cid, "result": {"type": kind}})
                continue
            reply = self.answer(params)
            if isinstance(reply, tuple):
                out.append({"custom_id": cid, "result": {"type": "errored", "error": reply[1]}})
                continue
            if cid in self.malformed:
                out.append({"custom_id": cid, "result": {"type": "succeeded"}})
                continue
            forced = isinstance(params.get("tool_choice"), dict)
            content: list[dict[str, Any]] = (
                [{"type": "tool_use", "id": f"toolu_{cid}", "name": "respond",
                  "input": json.loads(reply)}] if forced else [{"type": "text", "text": reply}]
            )
            out.append({"custom_id": cid, "result": {"type": "succeeded", "message": {
                "id": f"msg_{cid}", "type": "message", "role": "assistant",
                "model": params.get("model"), "content": content,
                "stop_reason": "tool_use" if forced else "end_turn",
                "usage": {"input_tokens": _tokens(params.get("messages")),
                          "output_tokens": self._output_tokens(reply)},
            }}})
            if cid in self.duplicated:
                out.append({"custom_id": cid, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": "copy"}}}})
        return "".join(json.dumps(x) + "\n" for x in out).encode()
