"""A scripted OpenAI-compatible chat server on 127.0.0.1: the same two-turn conversation for
every instrumentation the recorder runs.

The first request (no tool result among its messages) gets a ``get_weather(city="Paris")``
tool call; a request that carries the tool's result gets the final answer, which says the
weather, or that the service timed out when the tool's message says so. Standard library only:
it runs inside each instrumentation's own virtualenv.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "gpt-4o-mini"
SYSTEM = "You are a weather assistant. Answer in one sentence."
QUESTION = "What is the weather in Paris?"
TOOL = "get_weather"
ARGUMENTS = {"city": "Paris"}
RESULT = "Rainy, 12 degrees C"
FAILURE = "weather service timed out"
ANSWER = "It is rainy in Paris, 12 degrees C."
APOLOGY = "Sorry, the weather service timed out, so I cannot tell the weather in Paris."
CALL_ID = "call_weather_1"


def reply(request: dict[str, Any], number: int) -> dict[str, Any]:
    """The chat completion for ``request``: the tool call, or after the tool's result the
    answer (the apology when the result reports the time-out)."""
    tool_messages = [m for m in request.get("messages", []) if m.get("role") == "tool"]
    if tool_messages:
        said = json.dumps(tool_messages[-1].get("content"))
        text = APOLOGY if "timed out" in said else ANSWER
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": CALL_ID, "type": "function",
            "function": {"name": TOOL, "arguments": json.dumps(ARGUMENTS)}}]}
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-replay-{number}", "object": "chat.completion", "created": 1767225600,
        "model": MODEL, "system_fingerprint": "fp_replay",
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": {"prompt_tokens": 42 + 10 * number, "completion_tokens": 12,
                  "total_tokens": 54 + 10 * number},
    }


class _Handler(BaseHTTPRequestHandler):
    counter = 0

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        type(self).counter += 1
        self._send(200, reply(body, type(self).counter))

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the recorder's output stays the recording's


@contextmanager
def serving() -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    _Handler.counter = 0  # every recording numbers its model calls from 1
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
