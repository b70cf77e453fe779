"""A campaign-sized fuzz of the OTLP readers, run by hand (the mutations are the fuzz test's:
tests/traces/otlp_mutations.py).

N mutated payloads (default 3,000), each fed to the JSON readers and, where it has a protobuf
form, to the protobuf readers (also a byte-flipped copy of it). Counts escapes (any exception
out of a reader or the transforms after it), hangs (a payload taking longer than the alarm)
and tracemalloc's peak per payload, first and last tenth, to show memory stays flat.

    PYTHONPATH=.:adapters .venv/bin/python benchmarks/otlp_fuzz.py [N] [SEED]
"""

from __future__ import annotations

import collections
import functools
import os
import random
import signal
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable
from types import FrameType

from tests.traces.otlp_mutations import (
    exercise_json,
    exercise_protobuf,
    flip_bytes,
    mutate,
    protobuf_bytes,
    seeds,
)

ALARM_SECONDS = int(os.environ.get("FUZZ_ALARM_SECONDS", "20"))


class _Hang(BaseException):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 34)  # noqa: S311 - fuzz
    payloads = seeds()
    signal.signal(signal.SIGALRM, _alarm)
    escapes: collections.Counter[str] = collections.Counter()
    hangs = protobuf_runs = 0
    peaks: list[int] = []
    example: dict[str, str] = {}
    started = time.perf_counter()
    tracemalloc.start()
    for index in range(total):
        payload = mutate(rng.choice(payloads), rng, rng.randint(1, 3))
        data = protobuf_bytes(payload)
        tracemalloc.reset_peak()
        runs: list[tuple[str, Callable[[], int]]] = [
            ("json", functools.partial(exercise_json, payload))]
        if data is not None:
            runs += [("protobuf", functools.partial(exercise_protobuf, data)),
                     ("protobuf-flipped",
                      functools.partial(exercise_protobuf, flip_bytes(data, rng)))]
        for label, run in runs:
            protobuf_runs += label != "json"
            signal.alarm(ALARM_SECONDS)
            try:
                run()
            except _Hang:
                hangs += 1
            except Exception as exc:  # noqa: BLE001 - counting escapes is the point
                key = f"{label}: {type(exc).__name__}"
                escapes[key] += 1
                example.setdefault(key, "".join(traceback.format_exception(exc)[-3:]))
            finally:
                signal.alarm(0)
        peaks.append(tracemalloc.get_traced_memory()[1])
        if index % 500 == 499:
            print(f"{index + 1} payloads, {sum(escapes.values())} escapes, {hangs} hangs",
                  file=sys.stderr)
    tracemalloc.stop()
    tenth = max(1, total // 10)
    print(f"payloads: {total} (JSON), protobuf runs: {protobuf_runs}; "
          f"escapes: {sum(escapes.values())}; hangs: {hangs}; "
          f"{time.perf_counter() - started:.1f} s")
    print(f"peak memory per payload: first tenth max {max(peaks[:tenth]) / 1e6:.1f} MB, "
          f"last tenth max {max(peaks[-tenth:]) / 1e6:.1f} MB, "
          f"overall max {max(peaks) / 1e6:.1f} MB")
    for key, count in escapes.most_common():
        print(f"  {count:5d}  {key}\n{example[key]}")


if __name__ == "__main__":
    main()
