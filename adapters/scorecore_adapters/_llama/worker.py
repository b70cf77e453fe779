"""The local judge's worker process: llama.cpp runs here, so a native fault ends only this process.

``python -m scorecore_adapters._llama.worker LOAD-KEY-JSON REQUEST-FD REPLY-FD`` serves
:class:`scorecore_adapters.local.LocalModel` (``isolation="process"``). Messages are frames on
two pipes: a 4-byte big-endian length, then that many bytes of UTF-8 JSON.

Requests (``id`` is the caller's number, echoed in the reply):

- ``{"op": "generate", "id", "arguments", "grammar", "timeout"}``: one chat completion
  (:func:`scorecore_adapters._llama.run.complete`); the reply is its outcome.
- ``{"op": "parses", "id", "grammar"}``: whether llama.cpp parses the grammar;
  the reply is ``{"parses": bool}``.
- ``{"op": "params", "id"}``: the load parameters the model was loaded with.
- ``{"op": "stop", "id"}``: end that generation at its next token (no reply of its own).

A thread reads the requests, so a stop reaches a generation while it runs. At the end of the
request pipe (the parent closed it, or ended in any way, ``kill -9`` included) the worker exits.
"""

from __future__ import annotations

import faulthandler
import json
import os
import queue
import signal
import struct
import sys
import threading
from collections.abc import Mapping
from typing import Any, Final

_HEADER: Final = struct.Struct(">I")


def write_frame(fd: int, message: Mapping[str, Any]) -> None:
    """Write one frame (raises ``OSError``, e.g. ``BrokenPipeError``, when the reader is gone)."""
    body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode("utf-8")
    data = memoryview(_HEADER.pack(len(body)) + body)
    while data:
        data = data[os.write(fd, data):]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict[str, Any] | None:
    """The next frame's message, or ``None`` at the end of the pipe."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    if body is None:
        return None
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ValueError("a frame is not a JSON object")  # noqa: TRY004 - a broken peer
    return message


def _serve(key_json: str, request_fd: int, reply_fd: int) -> None:
    from scorecore_adapters._llama.run import (  # noqa: PLC0415 - after the fault handler
        LoadKey,
        complete,
        grammar_parses,
        loaded,
        used_load_parameters,
    )

    key = LoadKey.from_json(json.loads(key_json))
    work: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    stops: dict[int, threading.Event] = {}
    stops_lock = threading.Lock()

    def read_requests() -> None:
        while True:
            message = read_frame(request_fd)
            if message is None:
                os._exit(0)  # the parent is gone or done: nothing to save
            if message.get("op") == "stop":
                with stops_lock:
                    event = stops.get(message.get("id", -1))
                if event is not None:
                    event.set()
                continue
            with stops_lock:
                stops[message["id"]] = threading.Event()
            work.put(message)

    threading.Thread(target=read_requests, name="requests", daemon=True).start()
    while True:
        message = work.get()
        ident = message["id"]
        with stops_lock:
            stop = stops[ident]
        reply: dict[str, Any]
        op = message.get("op")
        try:
            if op == "generate":
                reply = complete(key, message["arguments"], message["grammar"],
                                 message["timeout"], stop)
            elif op == "parses":
                reply = {"parses": grammar_parses(key.path, message["grammar"])}
            elif op == "params":
                reply = {"params": used_load_parameters(loaded(key).llama)}
            else:
                reply = {"error": {"kind": "unknown", "code": "bad_worker_request",
                                   "what": f"the worker has no operation {op!r}",
                                   "exception_type": None, "detail": None}}
        except Exception as exc:  # noqa: BLE001 - the worker answers, whatever happened
            reply = {"error": {"kind": "unknown", "code": None, "what": "the worker failed",
                               "exception_type": type(exc).__name__, "detail": f"{exc!s:.500}"}}
        with stops_lock:
            del stops[ident]
        write_frame(reply_fd, {"id": ident, **reply})


def main() -> None:
    """Serve requests until the request pipe ends."""
    # A native fault writes the Python stack to stderr, which the parent quotes when it reports
    # the worker's death.
    faulthandler.enable()
    # Ctrl-C in a terminal reaches the whole process group: the parent decides what happens,
    # and the worker ends when the parent closes its pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    key_json, request_fd, reply_fd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    try:
        _serve(key_json, request_fd, reply_fd)
    except BrokenPipeError:  # the parent closed the reply pipe: it is done with this worker
        os._exit(0)


if __name__ == "__main__":
    main()
