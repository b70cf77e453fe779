"""A local OTLP/HTTP traces receiver on 127.0.0.1 (shared by tests): it records the protobuf
bodies posted to it and can answer each export slowly, as an overloaded collector does."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass
class Receiver:
    """The receiver's traces URL and what was posted to it."""

    url: str
    bodies: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    """Seconds each export waits before it is answered."""
    released: threading.Event = field(default_factory=threading.Event)
    """Set to answer every waiting and later export at once (the server stops with it set)."""

    def spans(self) -> list[dict[str, Any]]:
        """Every span received: ids in hex, attributes as a flat dict."""
        from google.protobuf.json_format import MessageToDict  # noqa: PLC0415

        found: list[dict[str, Any]] = []
        for body in list(self.bodies):
            request = MessageToDict(ExportTraceServiceRequest.FromString(body))
            for resource in request.get("resourceSpans", []):
                for scope in resource.get("scopeSpans", []):
                    for span in scope.get("spans", []):
                        for key in ("traceId", "spanId", "parentSpanId"):
                            span[key] = base64.b64decode(span.get(key, "")).hex()
                        span["attributes"] = {a["key"]: next(iter(a["value"].values()), None)
                                              for a in span.get("attributes", [])}
                        found.append(span)
        return found


@contextmanager
def otlp_receiver(*, delay: float = 0.0) -> Iterator[Receiver]:
    """A receiver answering every export with 200 after ``delay`` seconds; stopped on exit."""
    receiver = Receiver(url="", delay=delay)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the OTLP/HTTP exporter posts protobuf to /v1/traces
            body = self.rfile.read(int(self.headers["Content-Length"]))
            receiver.released.wait(receiver.delay)
            receiver.bodies.append(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        thread.join()
        server.server_close()
