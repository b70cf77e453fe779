"""The end of a local process's output quoted in errors (``output_tail``): the lines that say
why a server or worker ended stay in it, even when a fault's report follows them."""

from __future__ import annotations

import tempfile

from scorecore_adapters._llama.client import output_tail

FAULT = ("Fatal Python error: _enter_buffered_busy: could not acquire lock\n"
         "Python runtime state: finalizing\n\nCurrent thread 0x7f (most recent call first):\n"
         "  <no Python frame>\n")


def _tail_of(text: str) -> str:
    with tempfile.TemporaryFile() as log:
        log.write(text.encode())
        return output_tail(log)


def test_the_reason_before_a_fault_report_is_kept() -> None:
    """llama_server reads "address already in use" from the tail to choose another port; a
    fault at interpreter shutdown after it must not push it out."""
    text = ("x" * 1_800 + "\n") + "".join(f"INFO: line {n}\n" for n in range(40)) + (
        "ERROR:    [Errno 98] error while attempting to bind on address "
        "('127.0.0.1', 8000): address already in use\n"
        "INFO:     Waiting for application shutdown.\nINFO:     Application shutdown complete.\n"
        "~llama_context: CPU compute buffer size is 98.25 MiB\n" + FAULT)
    tail = _tail_of(text)
    assert "address already in use" in tail
    assert tail.rstrip().endswith("<no Python frame>")
    assert "Fatal Python error: _enter_buffered_busy" in tail
    assert "x" * 1_800 not in tail  # a long line before the fault does not crowd it out


def test_a_long_fault_report_is_quoted_from_its_start() -> None:
    """A report longer than the quote keeps its first line (the signal), not the stacks of
    idle threads at its end."""
    report = "Fatal Python error: Segmentation fault\n" + "".join(
        f'  File "m.py", line {n} in f\n' for n in range(150))
    tail = _tail_of("loading\n" + report)
    assert "Fatal Python error: Segmentation fault" in tail
    assert tail.endswith("\n...")
    assert tail.startswith("loading\n")


def test_without_a_fault_the_last_lines_are_quoted() -> None:
    assert _tail_of("".join(f"line {n}\n" for n in range(100))).splitlines()[-1] == "line 99"
    assert _tail_of("") == "(no output)"
