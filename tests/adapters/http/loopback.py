"""A real HTTP server on 127.0.0.1 speaking OpenAI Chat Completions and Anthropic Messages.

Tests script its replies: each request takes the next queued action (a reply, a provider
error, raw bytes, a dropped connection, a slow reply); with the queue empty it answers ``"ok"``.
Every request is recorded. The server runs in a background thread; :func:`serve` stops it,
wakes any handler still sleeping, and joins every thread, so nothing outlives a test.

By default every connection carries one request (HTTP/1.0), so no client keeps one open;
``serve(keep_alive=True)`` speaks HTTP/1.1 with persistent connections, as real providers do,
and counts the connections it accepted and still has open.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A successful completion. A ``str`` is the reply text; any other JSON value is sent as
    JSON text, or as the forced tool's input when an Anthropic request forced a tool."""

    content: Any = "ok"
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Error:
    """A provider-shaped error body with this status (OpenAI or Anthropic by the path)."""

    status: int
    type: str | None = None
    code: str | None = None
    message: str = "scripted error"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Raw:
    """These exact bytes as the body."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Drop:
    """Break the connection: with ``after_bytes=None`` reset it (RST) before any response;
    otherwise send the headers promising the full body, then only ``after_bytes`` of it."""

    after_bytes: int | None = None


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` (woken early when the server stops), then do ``then``."""

    seconds: float
    then: Action = field(default_factory=Reply)


Action = Reply | Error | Raw | Drop | Slow


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


def _openai_body(action: Reply, request: Any) -> dict[str, Any]:
    content = action.content if isinstance(action.content, str) else json.dumps(action.content)
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": request.get("model", "loopback") if isinstance(request, dict) else "loopback",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": action.finish_reason or "stop",
        }],
        "usage": dict(action.usage)
        if action.usage is not None
        else {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def _anthropic_body(action: Reply, request: Any) -> dict[str, Any]:
    forced = isinstance(request, dict) and "tool_choice" in request
    block: dict[str, Any]
    if forced and not isinstance(action.content, str):
        name = request["tool_choice"].get("name", "respond")
        block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": action.content}
        stop = "tool_use"
    else:
        text = action.content if isinstance(action.content, str) else json.dumps(action.content)
        block = {"type": "text", "text": text}
        stop = "end_turn"
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "loopback") if isinstance(request, dict) else "loopback",
        "content": [block],
        "stop_reason": action.finish_reason or stop,
        "usage": dict(action.usage)
        if action.usage is not None
        else {"input_tokens": 10, "output_tokens": 2},
    }


def _error_body(action: Error, anthropic: bool) -> dict[str, Any]:
    if anthropic:
        return {
            "type": "error",
            "error": {"type": action.type or "api_error", "message": action.message},
        }
    return {"error": {"message": action.message, "type": action.type, "code": action.code}}


class LoopbackServer(ThreadingHTTPServer):
    """The server; ``url`` is its root, e.g. ``http://127.0.0.1:54321``."""

    daemon_threads = False  # so server_close() joins every handler thread
    block_on_close = True
    request_queue_size = 256  # a burst of concurrent connects is accepted, never dropped

    def __init__(self, *, keep_alive: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _KeepAliveHandler if keep_alive else _Handler)
        self.stopping = threading.Event()
        self.requests: list[Recorded] = []
        self.connections_accepted = 0
        self._open: set[socket.socket] = set()
        self._changed = threading.Condition()
        self._script: deque[Action] = deque()
        self._lock = threading.Lock()

    @property
    def open_connections(self) -> int:
        """How many client connections are open right now."""
        with self._changed:
            return len(self._open)

    def wait_until_no_connection_is_open(self, timeout: float = 5.0) -> bool:
        """Wait (bounded) until every client connection has been closed; ``False`` on timeout.

        A closed connection is seen by the handler thread shortly after the client closes it.
        """
        with self._changed:
            return self._changed.wait_for(lambda: not self._open, timeout)

    def connection_opened(self, conn: socket.socket) -> None:
        with self._changed:
            self.connections_accepted += 1
            self._open.add(conn)
            self._changed.notify_all()

    def connection_closed(self, conn: socket.socket) -> None:
        with self._changed:
            self._open.discard(conn)
            self._changed.notify_all()

    def wake_idle_connections(self) -> None:
        """Shut down every open connection so handler threads blocked reading return."""
        with self._changed:
            for conn in self._open:
                with suppress(OSError):  # already closed by the client or a Drop action
                    conn.shutdown(socket.SHUT_RDWR)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *actions: Action) -> None:
        """Queue the replies for the next requests, in order."""
        with self._lock:
            self._script.extend(actions)

    def next_action(self) -> Action:
        with self._lock:
            return self._script.popleft() if self._script else Reply()

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up on a slow or broken reply are expected here, not errors."""


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer
    protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
    timeout = 5  # a stuck client can never hold a handler thread for long

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle's algorithm holds the body
        # back until the client's delayed ACK (~40 ms a reply on a persistent connection).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connection_opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.connection_closed(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.server.record(Recorded(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        ))
        self._act(self.server.next_action(), body)

    def _act(self, action: Action, request: Any) -> None:
        anthropic = self.path.rstrip("/").endswith("/messages")
        match action:
            case Slow(seconds=seconds, then=then):
                if self.server.stopping.wait(seconds):
                    return
                self._act(then, request)
            case Reply():
                body = _anthropic_body(action, request) if anthropic else _openai_body(
                    action, request
                )
                self._send(200, json.dumps(body).encode(), action.headers)
            case Error():
                self._send(action.status, json.dumps(_error_body(action, anthropic)).encode(),
                           action.headers)
            case Raw(status=status, body=raw, headers=headers):
                self._send(status, raw, headers)
            case Drop(after_bytes=None):
                # SO_LINGER 0: close() sends RST, the client sees ECONNRESET.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True
            case Drop(after_bytes=after):
                full = _anthropic_body if anthropic else _openai_body
                payload = json.dumps(full(Reply(), request)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[:after])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client gave up (a timeout test): nothing to answer
            self.close_connection = True


class _KeepAliveHandler(_Handler):
    protocol_version = "HTTP/1.1"  # connections persist until the client closes them


@contextmanager
def serve(*, keep_alive: bool = False) -> Iterator[LoopbackServer]:
    """Run a :class:`LoopbackServer` in a background thread for the duration of the block."""
    server = LoopbackServer(keep_alive=keep_alive)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.wake_idle_connections()
        server.server_close()
        thread.join(timeout=5)


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (for connection-refused tests)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
