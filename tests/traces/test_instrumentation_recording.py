"""Each instrumentation row recorded again, live, gives what its committed fixture gives.

Runs only with ``SCORECORE_TEST_INSTRUMENTATIONS=1`` (``.ci/run`` sets it after
``bash .ci/instrumentations.sh`` made the libraries' virtualenvs, in
``SCORECORE_INSTRUMENTATIONS_HOME``): each row's ``.ci/instrumentations/record.py`` runs in its
own virtualenv against the loopback replay server, and the fresh files must have the committed
fixture's spans and log records (names, parents, attribute keys, status) and give the same agent
runs and scores through ``scorecore eval-traces``. A library whose output changed under the same
pins, or a lock file moved without recording the fixtures again, fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.traces.conformance import (
    ENCODINGS,
    FIXTURES,
    VARIANTS,
    meta,
    reading,
    rows,
    run_eval_traces,
)

ROOT = Path(__file__).resolve().parents[2]
RECORDER = ROOT / ".ci" / "instrumentations" / "record.py"
HOME = Path(os.environ.get("SCORECORE_INSTRUMENTATIONS_HOME") or Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scorecore-instrumentations")

pytestmark = pytest.mark.skipif(
    os.environ.get("SCORECORE_TEST_INSTRUMENTATIONS") != "1",
    reason="records the instrumentation libraries live: needs their virtualenvs "
           "(bash .ci/instrumentations.sh) and SCORECORE_TEST_INSTRUMENTATIONS=1")


def _attribute_keys(item: dict[str, Any]) -> list[str]:
    return sorted(a["key"] for a in item.get("attributes", []))


def shape(path: Path) -> list[Any]:
    """What a library wrote, without the values that differ between two runs (ids, times,
    ports, generated ids): per span its scope, name, parent's name, attribute keys, status code
    and event names; per log record its scope, event name, attribute keys and span's name."""
    request = json.loads(path.read_text(encoding="utf-8"))
    spans = [(scope["scope"].get("name"), span)
             for resource in request.get("resourceSpans", [])
             for scope in resource["scopeSpans"] for span in scope["spans"]]
    names = {span["spanId"]: span["name"] for _, span in spans}
    found: list[Any] = sorted(
        (scope, span["name"], names.get(span.get("parentSpanId", "")), _attribute_keys(span),
         span.get("status", {}).get("code", ""), sorted(e["name"] for e in span.get("events", [])))
        for scope, span in spans)
    found += sorted(
        (scope["scope"].get("name"), record.get("eventName", ""), _attribute_keys(record))
        for resource in request.get("resourceLogs", [])
        for scope in resource["scopeLogs"] for record in scope["logRecords"])
    return found


def _record(row: str, out: Path) -> Path:
    python = HOME / meta(row)["venv"] / "bin" / "python"
    assert python.exists(), f"{python} is missing: run bash .ci/instrumentations.sh"
    done = subprocess.run([str(python), str(RECORDER), row, str(out / row)],  # noqa: S603 - our own recorder
                          capture_output=True, text=True, timeout=300, check=False,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stdout + done.stderr
    return out / row


@pytest.mark.parametrize("row", rows())
def test_fresh_recording_is_the_fixture(row: str, tmp_path: Path) -> None:
    """The row recorded now has the committed fixture's spans and log records, library
    versions, and gives the same agent runs and scores through eval-traces."""
    fresh = _record(row, tmp_path)
    fresh_meta = json.loads((fresh / "meta.json").read_text(encoding="utf-8"))
    assert fresh_meta["versions"] == meta(row)["versions"]
    assert sorted(p.name for p in fresh.iterdir()) == sorted(
        p.name for p in (FIXTURES / row).iterdir())
    for variant in VARIANTS:
        for signal in ("traces", "logs"):
            committed = FIXTURES / row / f"{variant}.{signal}.jsonl"
            if committed.exists():
                assert shape(fresh / committed.name) == shape(committed), committed.name
        for encoding in ENCODINGS:
            now, then = run_eval_traces(fresh, variant, encoding), reading(row, variant, encoding)
            assert (now.runs, now.scores) == (then.runs, then.scores), (variant, encoding)

