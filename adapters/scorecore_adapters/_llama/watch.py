"""The servers :func:`scorecore_adapters.local.llama_server` runs, watched for a death.

A server that dies (a native fault: SIGSEGV) closes its connections, and an HTTP judge
pointed at it would only see ``RemoteProtocolError: Server disconnected``. The HTTP layer asks
:func:`death_of` when a request to a watched address fails on the way, and reports the death
instead: the signal and the end of the server's output.
"""

from __future__ import annotations

import subprocess
import threading
from typing import IO, TYPE_CHECKING, Final, final

from scorecore_adapters._llama.client import death, output_tail

if TYPE_CHECKING:
    from scorecore.judge import JudgeError

_SETTLE: Final = 2.0  # seconds a server that dropped a connection is given to finish dying


@final
class _Watched:
    __slots__ = ("error", "lock", "log", "process", "url")

    def __init__(self, url: str, process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
        self.url = url
        self.process = process
        self.log = log
        self.lock = threading.Lock()
        self.error: JudgeError | None = None


_WATCHED: dict[str, _Watched] = {}


def watch(url: str, process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    """Watch the server answering at ``url`` (its base URL) until :func:`unwatch`."""
    _WATCHED[url.rstrip("/") + "/"] = _Watched(url, process, log)


def unwatch(url: str) -> None:
    """Stop watching ``url`` (the server is being stopped on purpose)."""
    _WATCHED.pop(url.rstrip("/") + "/", None)


def watched(url: str) -> bool:
    """Whether a request to ``url`` goes to a watched server (cheap: no waiting)."""
    return any(url.startswith(prefix) for prefix in list(_WATCHED))


def death_of(url: str) -> JudgeError | None:
    """The error for the watched server behind ``url`` if it died, else ``None``.

    Blocks up to a couple of seconds: a failed request may reach here before the dying
    process is reaped.
    """
    for prefix, found in list(_WATCHED.items()):
        if not url.startswith(prefix):
            continue
        with found.lock:
            if found.error is None:
                try:
                    found.process.wait(timeout=_SETTLE)
                except subprocess.TimeoutExpired:
                    return None  # alive: a network problem of another kind
                from scorecore.judge import JudgeError  # noqa: PLC0415 - only when one died

                how = death(found.process.returncode)
                found.error = JudgeError(
                    kind="crashed", code=how if how.startswith("SIG") else None,
                    message=f"the local server at {found.url} died: {how}\n"
                            f"--- its output (last lines) ---\n{output_tail(found.log)}",
                    is_retryable=False,  # nothing restarts it
                )
            return found.error
    return None
