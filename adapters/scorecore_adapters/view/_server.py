"""Serving the workbench: bound to 127.0.0.1 by default, its URL (with the token) first."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import uvicorn

from scorecore_adapters._workbenches import recorded
from scorecore_adapters.storage import StoreUrl
from scorecore_adapters.view._app import create_app
from scorecore_adapters.view._security import Guard

__all__ = ["bind", "running", "serve"]

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port).

    Raises:
        OSError: the address is taken or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _address(sock: socket.socket) -> tuple[str, int]:
    host, port = sock.getsockname()[:2]
    return (f"[{host}]" if ":" in host else host), port


def recorded_at(url: str | StoreUrl, sock: socket.socket) -> contextlib.AbstractContextManager[
        object]:
    """While the block runs, a record in the user's runtime directory that the workbench on
    ``sock`` serves ``url`` (its address and pid, never its token): ``scorecore report``
    links each run to its page here."""
    return recorded(url, *_address(sock))


def _url(sock: socket.socket, guard: Guard) -> str:
    shown, port = _address(sock)
    guard.allow_host(shown, port)
    return f"http://{shown}:{port}/?token={guard.token}"


def _server(url: str | StoreUrl, read_only: bool, guard: Guard) -> uvicorn.Server:
    app = create_app(url, read_only=read_only, guard=guard)
    # No access log: the first request's line would hold the token.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    return uvicorn.Server(config)


def serve(url: str | StoreUrl, sock: socket.socket, *, read_only: bool = False,
          guard: Guard | None = None) -> tuple[str, uvicorn.Server]:
    """The workbench's URL (with its token) and the server that will serve it on ``sock``
    (call ``server.run(sockets=[sock])``)."""
    guard = guard or Guard()
    return _url(sock, guard), _server(url, read_only, guard)


@contextmanager
def running(url: str | StoreUrl, *, read_only: bool = False,
            host: str = DEFAULT_HOST) -> Iterator[str]:
    """The workbench served from a background thread on a free port while the block runs;
    yields its URL with the token (for tests and notebooks).

    >>> import anyio, httpx, os, tempfile
    >>> from scorecore_adapters.storage import SqliteScoreStore
    >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
    >>> async def make() -> None:
    ...     async with SqliteScoreStore(path):
    ...         pass
    >>> anyio.run(make)
    >>> with running(f"sqlite:{path}") as address, httpx.Client() as client:
    ...     page = client.get(address, follow_redirects=True).text  # the token → a cookie
    ...     refused = httpx.get(address.split("?")[0]).status_code  # no token, no cookie
    >>> "Batches" in page, refused
    (True, 403)
    """
    sock = bind(host, 0)
    address, server = serve(url, sock, read_only=read_only)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the workbench did not start (see its log)")
            thread.join(0.02)
        with recorded_at(url, sock):
            yield address
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
