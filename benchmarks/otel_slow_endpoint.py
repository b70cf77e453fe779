"""`scorecore eval --otel-endpoint` against a slow OTLP/HTTP endpoint: how many events arrive.

N items (default 10,000), one function scorer, so N `gen_ai.evaluation.result` events, sent to
a receiver on 127.0.0.1 that answers each export after DELAY seconds (default 10). Prints the
wall time, the events the receiver got, and the command's own `otel:` line. Before the export
queue, the SDK's batch processor dropped what did not fit its 2,048-span queue.

    .venv/bin/python benchmarks/otel_slow_endpoint.py [N] [DELAY] [extra eval flags ...]
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from pathlib import Path

from scorecore_adapters.cli import main
from tests.otlp_receiver import otlp_receiver

SCORERS = '''
from scorecore import create_scorer

one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
'''


def run(items: int, delay: float, flags: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        (tmp / "scorers.py").write_text(SCORERS)
        (tmp / "data.jsonl").write_text("".join(
            json.dumps({"id": f"i{n}", "input": "q", "output": "a"}) + "\n"
            for n in range(items)))
        with otlp_receiver(delay=delay) as receiver:
            out, err = io.StringIO(), io.StringIO()
            started = time.monotonic()
            code = main(["eval", str(tmp / "scorers.py"), "--data", str(tmp / "data.jsonl"),
                         "--store", f"sqlite:{tmp / 'scores.db'}", "--no-cache",
                         "--otel-endpoint", receiver.url, *flags], out=out, err=err)
            took = time.monotonic() - started
            got = sum(1 for s in receiver.spans() if s["name"] == "evaluation one")
    print(f"{items:,} items, {delay:g} s per export: exit {code}, {took:.1f} s, "
          f"the endpoint received {got:,} of {items:,} events")
    for line in out.getvalue().splitlines():
        if line.startswith("otel:"):
            print(line)


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000,
        float(sys.argv[2]) if len(sys.argv) > 2 else 10.0, sys.argv[3:])
