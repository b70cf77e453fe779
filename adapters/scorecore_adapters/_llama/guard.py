"""Run ``llama_cpp.server`` for as long as the process that started it lives.

``python -m scorecore_adapters._llama.guard [--repack-weights] SERVER-ARGS...`` runs the server
in this process and exits when standard input reaches its end:
:func:`scorecore_adapters.local.llama_server` keeps a pipe to it open, and the operating system
closes that pipe when the starting process ends in any way, ``kill -9`` included (a child it
forked does not keep the pipe open: it is closed in the child). So a server is never left
behind holding its memory and port (a parent-death signal would fire when the *thread* that
started the server ends instead).

Models load with llama.cpp's extra buffer types off (no weight repacking, which faults on some
CPUs: see :mod:`scorecore_adapters._llama.run`) unless ``--repack-weights`` comes first. The
parameters a model was loaded with are written to standard error once it is loaded.
"""

from __future__ import annotations

import faulthandler
import os
import runpy
import sys
import threading
from typing import Any, cast


def _exit_at_end_of_input() -> None:
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)  # the server keeps no state to save; its threads end with the process


def _report_load_parameters() -> None:
    import llama_cpp  # noqa: PLC0415 - the server needs it anyway

    from scorecore_adapters._llama.run import used_load_parameters  # noqa: PLC0415

    load = llama_cpp.Llama.__init__

    def init(self: llama_cpp.Llama, *args: Any, **kwargs: Any) -> None:
        load(self, *args, **kwargs)
        print(f"scorecore: model loaded with {used_load_parameters(self)}",  # noqa: T201
              file=sys.stderr, flush=True)

    cast(Any, llama_cpp.Llama).__init__ = init  # typed as a method when installed


def main() -> None:
    """Watch standard input in a daemon thread, then run the server with ``sys.argv[1:]``."""
    faulthandler.enable()  # a native fault's Python stack, quoted when the death is reported
    threading.Thread(target=_exit_at_end_of_input, name="parent-watch", daemon=True).start()
    arguments = sys.argv[1:]
    if arguments[:1] == ["--repack-weights"]:
        arguments = arguments[1:]
    else:
        from scorecore_adapters._llama.run import never_repack  # noqa: PLC0415

        never_repack()
    _report_load_parameters()
    sys.argv = ["llama_cpp.server", *arguments]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
