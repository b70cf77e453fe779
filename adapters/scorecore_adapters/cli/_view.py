"""``scorecore view``: the review workbench over a store, served on 127.0.0.1."""

from __future__ import annotations

import argparse
import signal
import threading
import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

from scorecore_adapters.cli._common import DEFAULT_STORE, EXIT_PASSED, UsageError, open_url


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return int(text)


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM unwinds (a SystemExit) instead of ending the process on the spot: the
    workbench's record is removed however it is stopped, before the server takes the signal
    over and after it hands it back (uvicorn raises it again once shut down)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def view_arguments(command: argparse.ArgumentParser) -> None:
    """The flags of ``scorecore view``."""
    command.add_argument("--store", default=DEFAULT_STORE, help="sqlite:PATH or postgresql://...")
    command.add_argument("--host", default="127.0.0.1",
                         help="the address to listen on (default 127.0.0.1: this machine only)")
    command.add_argument("--port", type=_port, default=8765,
                         help="the port (default 8765; 0 picks a free one)")
    command.add_argument("--no-browser", action="store_true",
                         help="print the URL but do not open a browser")
    command.add_argument("--read-only", action="store_true",
                         help="browse only: labelling is refused")


def view_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Serve the workbench until interrupted; the first line printed is its URL (with the
    write token)."""
    from scorecore_adapters.view import bind, serve  # noqa: PLC0415 - the view extra
    from scorecore_adapters.view._server import recorded_at  # noqa: PLC0415 - the view extra

    open_url(args.store, must_exist=True)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
                         ) from None
    # Recorded from before its URL is printed until it stops (Ctrl-C and SIGTERM included),
    # so that `scorecore report` over the same store links its runs here.
    with sock, _terminable(), recorded_at(args.store, sock):
        url, server = serve(args.store, sock, read_only=args.read_only)
        print(url, file=out, flush=True)
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"warning: listening on {args.host}: anyone who can reach it and has the "
                  f"URL can label", file=err)
        if not args.no_browser:
            webbrowser.open(url)
        server.run(sockets=[sock])
    return EXIT_PASSED
