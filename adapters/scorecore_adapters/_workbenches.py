"""Which ``scorecore view`` workbenches are running on this machine, and over which store.

While a workbench serves a store it keeps one small JSON file in a per-user runtime directory
(``$XDG_RUNTIME_DIR/scorecore/views``, else ``scorecore-<uid>/views`` in the temp directory,
both 0700): the store's identity (a password never), the address served and its pid. The
write token is never in it: whoever follows a link to the workbench reads, and writes only
with the token ``scorecore view`` printed. ``scorecore report`` reads the files to link each
run to its page in the workbench. A file whose process is gone, or whose address no longer
answers, is stale: it is ignored and removed.

This module needs no web stack: the report finds a workbench without the view extra.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from scorecore_adapters.storage import StoreUrl
from scorecore_adapters.storage._common import redact_url

__all__ = ["find_view", "recorded", "store_identity", "views_dir"]

_ANSWER_TIMEOUT: Final = 0.5


def views_dir() -> Path | None:
    """The directory of the running workbenches' records (made 0700 when missing), or
    ``None`` when no private one can be had (a temp directory someone else owns)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        where = Path(runtime) / "scorecore" / "views"
    else:
        uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
        where = Path(tempfile.gettempdir()) / f"scorecore-{uid}" / "views"
    try:
        # Each folder made 0700 (mkdir's parents=True would leave the upper one open).
        where.parent.mkdir(mode=0o700, exist_ok=True)
        where.mkdir(mode=0o700, exist_ok=True)
        if hasattr(os, "getuid"):
            # A shared temp directory: another user could have made the folder first and
            # planted records pointing at a server of theirs.
            for folder in (where.parent, where):
                status = folder.stat()
                if status.st_uid != os.getuid() or status.st_mode & 0o077:
                    return None
    except OSError:
        return None
    return where


def store_identity(url: str | StoreUrl) -> str:
    """What names a store across processes: a SQLite file's resolved path, a PostgreSQL
    URL with its password masked.

    >>> store_identity("postgresql://me:s3cret@db/scores")
    'postgres:postgresql://me:***@db/scores'
    """
    parsed = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
    if parsed.kind == "sqlite" and parsed.path is not None and parsed.path != ":memory:":
        return "sqlite:" + str(Path(parsed.path).resolve())
    return f"{parsed.kind}:{redact_url(parsed.url)}"


@contextlib.contextmanager
def recorded(url: str | StoreUrl, host: str, port: int) -> Iterator[Path | None]:
    """While the block runs, a record that a workbench at ``host:port`` (as served: an IPv6
    address in brackets) serves the store ``url``; removed on the way out. Yields its path
    (``None``: no private directory, nothing recorded)."""
    where = views_dir()
    if where is None:
        yield None
        return
    path = where / f"{os.getpid()}-{port}.json"
    record = {"store": store_identity(url), "host": host, "port": port, "pid": os.getpid()}
    partial = path.with_suffix(".tmp")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(record, out)
        partial.replace(path)
    except OSError:
        # A workbench that cannot say it runs still serves; the report just has no links.
        yield None
        return
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if sys.platform == "win32":
        # Signal 0 is CTRL_C_EVENT there: whether the address answers decides alone.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=_ANSWER_TIMEOUT):
            return True
    except OSError:
        return False


def find_view(url: str | StoreUrl) -> str | None:
    """The address (``http://HOST:PORT``, no token) of a running workbench over the store
    ``url``, or ``None``; stale records met on the way are removed."""
    where = views_dir()
    if where is None:
        return None
    wanted = store_identity(url)
    for path in sorted(where.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            host, port, pid = str(record["host"]), int(record["port"]), int(record["pid"])
            store = str(record["store"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # half written by a process that died, or not ours
            continue
        if not _alive(pid) or not _answers(host, port):
            path.unlink(missing_ok=True)
            continue
        if store == wanted:
            return f"http://{host}:{port}"
    return None
