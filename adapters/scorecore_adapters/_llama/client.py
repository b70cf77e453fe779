"""The parent's side of the local judge's worker processes, and the pipes no fork may keep.

One worker per model file and load options (:class:`~scorecore_adapters._llama.run.LoadKey`),
started on first use and kept warm for the process. A call holds the worker's lock from its
request to its reply, so one worker never runs two generations at once and replies never mix,
whichever thread or event loop calls. A worker that dies is reported as :class:`WorkerDied`
(the signal and the end of its stderr) and forgotten; the next call starts another.

Both the workers and :func:`scorecore_adapters.local.llama_server`'s guard end when the end of
a pipe held here closes. A child made by ``os.fork`` (``multiprocessing``'s fork start method
too) would inherit that end and keep them alive after this process is killed, so a fork handler
closes every such end in the child.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final, final

from scorecore_adapters._llama.run import LoadKey
from scorecore_adapters._llama.worker import read_frame, write_frame

_TAIL_CHARS: Final = 2000  # of a dead process's output, quoted in the error
_TAIL_LINES: Final = 20
_LINES_BEFORE_FAULT: Final = 10  # quoted ahead of a fault's report
_POLL_MS: Final = 50  # between looks at a call's stop event while a reply is awaited


def death(returncode: int | None) -> str:
    """How a process ended, for a reader: ``"SIGSEGV"``, ``"exit code 3"``."""
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def output_tail(log: IO[bytes]) -> str:
    """The last lines a process wrote to ``log`` (a file it shared), or ``"(no output)"``."""
    log.flush()
    log.seek(0, os.SEEK_END)
    size = log.tell()
    log.seek(max(0, size - _TAIL_CHARS * 4))
    text = log.read().decode("utf-8", "replace")
    # A fault's report (the signal, then every thread's Python stack) starts with this line:
    # quote it from there, or the stacks of idle threads push it out of the tail.
    fault = text.rfind("Fatal Python error:")
    if fault >= 0:
        report = text[fault:].rstrip()
        if len(report) > _TAIL_CHARS:
            report = report[:_TAIL_CHARS] + "\n..."
        # What the process said just before the fault often says why it was ending (a port
        # already in use, which llama_server reads to choose another; a file it could not
        # load): keep those lines ahead of the report, as room allows.
        kept: list[str] = []
        room = _TAIL_CHARS // 2
        for line in reversed(text[:fault].rstrip().splitlines()[-_LINES_BEFORE_FAULT:]):
            if len(line) >= room:
                break
            kept.append(line)
            room -= len(line) + 1
        return "\n".join([*reversed(kept), report])
    lines = text[-_TAIL_CHARS:].rstrip().splitlines()[-_TAIL_LINES:]
    return "\n".join(lines) or "(no output)"


@final
class WorkerDied(Exception):  # noqa: N818 - what happened, not an error of the caller's
    """The worker process ended while a call needed it."""

    def __init__(self, how: str, tail: str) -> None:
        super().__init__(f"the local judge's worker died: {how}")
        self.how = how
        self.tail = tail


# --- what a fork must not keep ----------------------------------------------------------------

_INHERITED_FDS: set[int] = set()  # ends of pipes whose closing tells a process to end
_GUARD_PIPES: weakref.WeakSet[IO[bytes]] = weakref.WeakSet()


def keep_from_forks(pipe: IO[bytes]) -> None:
    """Close ``pipe`` in any child forked from this process (the llama_server guard's stdin)."""
    _GUARD_PIPES.add(pipe)


def _after_fork_in_child() -> None:
    # Only the forking thread runs in the child: a lock another thread held at the fork stays
    # held for ever there, so the child gets a fresh one.
    global _WORKERS_LOCK  # noqa: PLW0603 - replaced in a forked child only
    _WORKERS_LOCK = threading.Lock()
    for fd in list(_INHERITED_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _INHERITED_FDS.clear()
    for pipe in list(_GUARD_PIPES):
        with contextlib.suppress(OSError, ValueError):
            pipe.close()
    for worker in list(_WORKERS.values()):
        worker.forget_in_child()
    _WORKERS.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


# --- the workers ------------------------------------------------------------------------------


def worker_command() -> list[str]:
    """The command that starts a worker (its arguments follow)."""
    return [sys.executable, "-m", "scorecore_adapters._llama.worker"]


def _environment() -> dict[str, str]:
    # The worker imports this very package, wherever it was found (a checkout on sys.path too).
    here = str(Path(__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here if not path else f"{here}{os.pathsep}{path}"}


@final
class Worker:
    """One worker process and the pipes to it."""

    def __init__(self, key: LoadKey) -> None:
        self.key = key
        self.lock = threading.Lock()
        self._next_id = 0
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the worker's life
        request_read, self._request = os.pipe()
        self._reply, reply_write = os.pipe()
        import json  # noqa: PLC0415

        try:
            self.process = subprocess.Popen(  # noqa: S603 - our interpreter, arguments as a list
                [*worker_command(), json.dumps(key.to_json()), str(request_read),
                 str(reply_write)],
                pass_fds=(request_read, reply_write), stdin=subprocess.DEVNULL,
                stdout=self._log, stderr=self._log, env=_environment(),
            )
        except BaseException:
            for fd in (self._request, self._reply):
                os.close(fd)
            self._log.close()
            raise
        finally:
            os.close(request_read)
            os.close(reply_write)
        _INHERITED_FDS.update((self._request, self._reply))
        self.dead: WorkerDied | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def forget_in_child(self) -> None:
        """In a forked child: this worker is the parent's; drop it without touching it."""
        self.dead = WorkerDied("it belongs to the parent of a forked process", "")

    def _died(self) -> WorkerDied:
        if self.dead is None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # the reply pipe broke but the process lives on
                self.process.kill()
                self.process.wait(timeout=10)
            self.dead = WorkerDied(death(self.process.returncode), output_tail(self._log))
            self._close()
        return self.dead

    def _close(self) -> None:
        for fd in (self._request, self._reply):
            _INHERITED_FDS.discard(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            self._log.close()

    def call(self, message: Mapping[str, Any], stop: threading.Event | None = None,
             ) -> dict[str, Any]:
        """Send one request and wait for its reply; ``stop`` set meanwhile asks the worker to
        end the generation. Raises :class:`WorkerDied` when the worker is gone."""
        with self.lock:
            if self.dead is not None:
                raise self.dead
            self._next_id += 1
            ident = self._next_id
            try:
                write_frame(self._request, {**message, "id": ident})
            except OSError:
                raise self._died() from None
            asked_to_stop = False
            waiting = select.poll()  # (not select.select: it fails for descriptors past 1023)
            waiting.register(self._reply, select.POLLIN)
            while True:
                if stop is not None and not asked_to_stop and stop.is_set():
                    asked_to_stop = True
                    with contextlib.suppress(OSError):  # a dead worker shows on the read
                        write_frame(self._request, {"op": "stop", "id": ident})
                if stop is not None and not asked_to_stop and not waiting.poll(_POLL_MS):
                    continue
                try:
                    reply = read_frame(self._reply)
                except (OSError, ValueError):
                    reply = None
                if reply is None:
                    raise self._died()
                if reply.get("id") == ident:
                    return reply

    def close(self) -> None:
        """End the worker: closing its request pipe tells it to exit."""
        # A call abandoned by its caller may still hold the lock until its reply: closing the
        # pipes then also ends that call (the worker exits at the end of its request pipe).
        acquired = self.lock.acquire(timeout=1)
        try:
            if self.dead is None:
                self.dead = WorkerDied("it was closed", "")
                self._close()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=5)
        finally:
            if acquired:
                self.lock.release()


_WORKERS: dict[LoadKey, Worker] = {}
_WORKERS_LOCK = threading.Lock()


def worker_for(key: LoadKey) -> Worker:
    """The live worker for ``key``, started when there is none (or the last one died)."""
    with _WORKERS_LOCK:
        found = _WORKERS.get(key)
        if found is None or found.dead is not None:
            found = _WORKERS[key] = Worker(key)
        return found


def forget(worker: Worker) -> None:
    """Drop a dead worker, so the next call starts another."""
    with _WORKERS_LOCK:
        if _WORKERS.get(worker.key) is worker:
            del _WORKERS[worker.key]


@atexit.register
def close_all() -> None:
    """End every worker (at exit; they would end anyway when this process's pipes close)."""
    with _WORKERS_LOCK:
        workers = list(_WORKERS.values())
        _WORKERS.clear()
    for worker in workers:
        worker.close()
