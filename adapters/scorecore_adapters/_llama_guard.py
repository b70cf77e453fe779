"""Run ``llama_cpp.server`` for as long as the process that started it lives.

``python -m scorecore_adapters._llama_guard SERVER-ARGS...`` runs the server in this process
and exits when standard input reaches its end: :func:`scorecore_adapters.local.llama_server`
keeps a pipe to it open, and the operating system closes that pipe when the starting process
ends in any way, ``kill -9`` included. So a server is never left behind holding its memory and
port (a parent-death signal would fire when the *thread* that started the server ends instead).
"""

from __future__ import annotations

import os
import runpy
import sys
import threading


def _exit_at_end_of_input() -> None:
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)  # the server keeps no state to save; its threads end with the process


def main() -> None:
    """Watch standard input in a daemon thread, then run the server with ``sys.argv[1:]``."""
    threading.Thread(target=_exit_at_end_of_input, name="parent-watch", daemon=True).start()
    sys.argv = ["llama_cpp.server", *sys.argv[1:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
