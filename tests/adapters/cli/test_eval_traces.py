"""Tests of ``scorecore eval-traces``: OTLP trace files scored like ``eval`` scores datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runs import run, stored_columns
from tests.otlp_payloads import to_protobuf

OTLP = Path(__file__).parents[2] / "traces" / "fixtures" / "otlp"

SCORERS = '''
from scorecore import create_scorer
from scorecore.traces import extract_trajectory

said = create_scorer(id="said-weather", description="d", type="agent").generate_score(
    lambda ctx: float("weather" in ctx.run.output[0].content.content))
used_tool = create_scorer(id="used-tool", description="d", type="trajectory").generate_score(
    lambda ctx: float("get_weather" in ctx.run.output.tool_names))
where = create_scorer(id="where", description="d").generate_score(
    lambda ctx: float(ctx.run.extra["target_span_id"] == "b9c7c989f97918e1"
                      and ctx.run.extra["target_trace_id"] == "0af7651916cd43dd8448eb211c80319c"))
'''


def stored(db: Path) -> list[tuple[Any, ...]]:
    return stored_columns(db, "runId", "scorerId", "status", "score",
                          order_by=("runId", "scorerId"))


@pytest.fixture
def scorers(tmp_path: Path) -> Path:
    path = tmp_path / "trace_scorers.py"
    path.write_text(SCORERS)
    return path


def test_every_agent_run_is_scored_and_stored(tmp_path: Path, scorers: Path) -> None:
    """Both agent runs of the Collector file (one under an HTTP span) are scored by every
    scorer, stored under TRACE-SPAN run ids, and the verdict passes."""
    db = tmp_path / "t.db"
    code, out, err = run("eval-traces", str(OTLP / "collector_file_exporter.jsonl"),
                         f"{scorers}:said,used_tool", "--store", f"sqlite:{db}",
                         "--batch-id", "otel", "--threshold", "said-weather=1")
    assert code == 0, out + err
    assert out.splitlines()[-1] == "verdict: passed"
    assert "2/2 agent runs" in out
    assert stored(db) == [
        ("otel:1f0e2d3c4b5a69788796a5b4c3d2e1f0-2222222222222222", "said-weather", "scored", 1.0),
        ("otel:1f0e2d3c4b5a69788796a5b4c3d2e1f0-2222222222222222", "used-tool", "scored", 0.0),
        ("otel:4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "said-weather", "scored", 1.0),
        ("otel:4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "used-tool", "scored", 1.0),
    ]


def test_threshold_gate_fails_like_eval(tmp_path: Path, scorers: Path) -> None:
    """A threshold the traces miss fails the batch with exit 1, as eval does."""
    code, out, _ = run("eval-traces", str(OTLP / "collector_file_exporter.jsonl"),
                       f"{scorers}:used_tool", "--store", f"sqlite:{tmp_path / 't.db'}",
                       "--threshold", "used-tool=0.9")
    assert code == 1
    assert "FAIL" in out
    assert out.splitlines()[-1].startswith("verdict: failed")


def test_the_span_reaches_the_scorer(tmp_path: Path, scorers: Path) -> None:
    """The run's extra keys name the judged trace and span (what otel_sink parents to)."""
    code, out, err = run("eval-traces", str(OTLP / "openinference_agent.json"),
                         f"{scorers}:where", "--store", f"sqlite:{tmp_path / 't.db'}",
                         "--gate", "where")
    assert code == 0, out + err


def test_malformed_lines_are_failed_items_and_exit_2(tmp_path: Path, scorers: Path) -> None:
    """A line that is not JSON and a malformed span are failed items named on stderr; the
    good trace is still scored; the exit code is 2."""
    good = (OTLP / "collector_file_exporter.jsonl").read_text(encoding="utf-8").splitlines()
    bad_span = json.loads(good[0])
    bad_span["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = "soon"
    data = tmp_path / "traces.jsonl"
    data.write_text("\n".join([json.dumps(bad_span), good[1], "{not json", good[2]]) + "\n")
    db = tmp_path / "t.db"
    code, _, err = run("eval-traces", str(data), f"{scorers}:said", "--store", f"sqlite:{db}",
                         "--batch-id", "b")
    assert code == 2
    assert "line 3: not JSON" in err
    assert "span 53995c3f42cd8ad8 ('chat gpt-4o'): startTimeUnixNano" in err
    scored = [r for r in stored(db) if r[2] == "scored"]
    assert [r[0] for r in scored] == ["b:1f0e2d3c4b5a69788796a5b4c3d2e1f0-2222222222222222"]


def test_traces_without_agents_are_counted(tmp_path: Path, scorers: Path) -> None:
    """A trace with no agent span is not an item; stderr says how many were left out."""
    span = {"traceId": "aa", "spanId": "bb", "name": "GET /", "startTimeUnixNano": "1"}
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"
                    + (OTLP / "collector_file_exporter.jsonl").read_text(encoding="utf-8"))
    code, _, err = run("eval-traces", str(data), f"{scorers}:said",
                       "--store", f"sqlite:{tmp_path / 't.db'}")
    assert code == 0
    assert "1 trace(s)" in err
    assert "had no agent span" in err


def test_resume_skips_stored_agent_runs(tmp_path: Path, scorers: Path) -> None:
    """The TRACE-SPAN item ids are stable: --resume of a finished batch runs nothing again."""
    db = tmp_path / "t.db"
    args = ("eval-traces", str(OTLP / "collector_file_exporter.jsonl"), f"{scorers}:said",
            "--store", f"sqlite:{db}")
    assert run(*args, "--batch-id", "r")[0] == 0
    code, out, err = run(*args, "--resume", "r")
    assert code == 0, out + err
    assert len(stored(db)) == 2


def test_otel_endpoint_must_be_an_http_url(tmp_path: Path, scorers: Path) -> None:
    """--otel-endpoint that is not an http(s) URL is a usage error naming the value."""
    code, _, err = run("eval-traces", str(OTLP / "genai_agent.json"), f"{scorers}:said",
                       "--store", f"sqlite:{tmp_path / 't.db'}",
                       "--otel-endpoint", "localhost:4318")
    assert code == 2
    assert "--otel-endpoint must be an http(s) URL" in err
    assert "'localhost:4318'" in err


def test_a_protobuf_request_file_is_scored(tmp_path: Path, scorers: Path) -> None:
    """A .pb file (one binary OTLP request, as an OTLP/HTTP exporter posts it) is read too."""
    data = tmp_path / "request.pb"
    data.write_bytes(to_protobuf(json.loads((OTLP / "genai_agent.json").read_text("utf-8"))))
    db = tmp_path / "t.db"
    code, out, err = run("eval-traces", str(data), f"{scorers}:said", "--store", f"sqlite:{db}",
                         "--batch-id", "pb")
    assert code == 0, out + err
    assert stored(db) == [("pb:4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                           "said-weather", "scored", 1.0)]


def test_a_protobuf_file_that_is_not_a_request_exits_2(tmp_path: Path, scorers: Path) -> None:
    """Bytes that are not an OTLP request are a failed item named on stderr; exit 2."""
    data = tmp_path / "broken.pb"
    data.write_bytes(b"\xff\xff\xff")
    code, _, err = run("eval-traces", str(data), f"{scorers}:said",
                       "--store", f"sqlite:{tmp_path / 't.db'}")
    assert code == 2
    assert "not an OTLP protobuf trace request" in err


@pytest.mark.parametrize("command", ["eval-traces", "eval"])
def test_evaluation_spans_need_an_otel_endpoint(
    tmp_path: Path, scorers: Path, command: str,
) -> None:
    """--otel-evaluation-spans without --otel-endpoint is a usage error saying what is missing,
    for eval-traces and eval alike; nothing is scored."""
    db = tmp_path / "t.db"
    source = OTLP / "genai_agent.json"
    if command == "eval":
        data = tmp_path / "d.jsonl"
        data.write_text('{"input": "q", "output": "a"}\n')
        argv = ["eval", f"{scorers}:where", "--data", str(data)]
    else:
        argv = ["eval-traces", str(source), f"{scorers}:said"]
    code, _, err = run(*argv, "--store", f"sqlite:{db}", "--otel-evaluation-spans")
    assert code == 2
    assert "--otel-evaluation-spans needs --otel-endpoint URL" in err
    assert not db.exists()
