"""Hostile and broken OTLP input: every reader returns values, never raises, never hangs."""

from __future__ import annotations

import copy
import io
import json
import random
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from scorecore.traces import (
    Span,
    Trace,
    agent_traces,
    extract_trajectory_from_trace,
    join_otlp_logs,
    otlp_to_traces,
    read_otlp_json_lines,
    read_otlp_logs,
    trace_to_agent_run,
)
from scorecore_adapters.cli import main
from tests.traces.otlp_mutations import (
    bounded,
    exercise_json,
    exercise_protobuf,
    flip_bytes,
    mutate,
    protobuf_bytes,
    seeds,
)

OTLP = Path(__file__).parent / "fixtures" / "otlp"
SEEDS = seeds()


def _genai() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((OTLP / "genai_agent.json").read_text()))


def _spans(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return payload["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def _with_twin(name: str) -> dict[str, Any]:
    """The GenAI agent trace plus a copy of its agent span whose parent is the agent's child."""
    payload = _genai()
    spans = _spans(payload)
    agent = spans[0]
    child = next(s for s in spans if s.get("parentSpanId") == agent["spanId"])
    spans.append({**agent, "parentSpanId": child["spanId"], "name": name})
    return payload


def test_a_span_id_used_twice_under_its_own_child_is_an_error_not_a_hang() -> None:
    """Two different spans under one id, the copy's parent below the original: the trace is
    a duplicate_span error naming the id, and reading ends."""
    with bounded(20):
        (outcome,) = read_otlp_json_lines([json.dumps(_with_twin("copy"))])
        whole = otlp_to_traces(_with_twin("copy"))
    error = outcome.failure()
    assert error.kind == "duplicate_span"
    assert "00f067aa0ba902b7" in error.message
    assert whole.failure().kind == "duplicate_span"


def test_agent_traces_of_a_trace_with_a_reused_span_id_ends() -> None:
    """agent_traces visits each span id once: a hand-built trace whose agent id is reused by
    a span below it gives one agent run, each id once."""
    t0 = Span(span_id="x", span_type="generic", started_at=_at()).started_at
    spans = [Span(span_id="a", span_type="agent_run", started_at=t0),
             Span(span_id="m", span_type="model_generation", parent_span_id="a", started_at=t0),
             Span(span_id="a", span_type="agent_run", parent_span_id="m", started_at=t0)]
    with bounded(20):
        (agent,) = agent_traces(Trace(spans=spans))
    assert [s.span_id for s in agent.spans] == ["a", "m"]


def _at() -> Any:
    from datetime import UTC, datetime  # noqa: PLC0415

    return datetime(2025, 1, 1, tzinfo=UTC)


def test_an_identical_span_sent_twice_is_read_once() -> None:
    """A request holding every span twice (a retried batch) reads as the one trace."""
    payload = _genai()
    _spans(payload).extend(copy.deepcopy(_spans(payload)))
    (trace,) = otlp_to_traces(payload).unwrap()
    assert len(trace.spans) == len(_spans(_genai()))


def _set_attribute(payload: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    _spans(payload)[0]["attributes"].append({"key": key, "value": value})
    return payload


def _deep_kvlist(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(depth):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def _hostile() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for label, value in (("huge", "9" * 30), ("negative", "-5"), ("int64 max", str(2**63)),
                         ("list", [1]), ("float", 1.5e300)):
        payload = _genai()
        _spans(payload)[1]["startTimeUnixNano"] = value
        cases[f"start time {label}"] = payload
    payload = _genai()
    _spans(payload)[2]["status"] = {"code": [2]}
    cases["status code a list"] = payload
    payload = _genai()
    _spans(payload)[2]["status"] = {"code": {"x": 1}, "message": ["no"]}
    cases["status code an object"] = payload
    deep_messages = ('[{"role": "user", "parts": ' + "[" * 100_000 + "]" * 100_000 + "}]")
    cases["messages 100,000 deep"] = _set_attribute(
        _genai(), "gen_ai.input.messages", {"stringValue": deep_messages})
    cases["tool arguments 100,000 deep"] = _set_attribute(
        _genai(), "gen_ai.tool.call.arguments", {"stringValue": "[" * 100_000 + "]" * 100_000})
    cases["attribute 3,000 deep"] = _set_attribute(_genai(), "deep", _deep_kvlist(3000))
    cases["5,000-digit OpenInference index"] = _set_attribute(
        _genai(), f"llm.input_messages.{'1' * 5000}.message.role", {"stringValue": "user"})
    cases["5,000-digit intValue"] = _set_attribute(_genai(), "n", {"intValue": "7" * 5000})
    cases["agent name a list"] = _set_attribute(_genai(), "gen_ai.agent.name",
                                                {"arrayValue": {"values": []}})
    return cases


HOSTILE = _hostile()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_values_are_values_not_exceptions(name: str) -> None:
    """Extreme timestamps, status codes of the wrong type, values nested 100,000 or 3,000
    deep and 5,000-digit numbers give a trace or a TraceError from every reader path."""
    with bounded(60):
        exercise_json(HOSTILE[name])
        data = protobuf_bytes(HOSTILE[name])
        if data is not None:
            exercise_protobuf(data)


@pytest.mark.parametrize("text", [
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "01", "spanId": "02", '
    '"startTimeUnixNano": "1", "attributes": [{"key": "d", "value": {"doubleValue": 1e400}}]}'
    ']}]}]}',
    '{"resourceSpans": [], "n": ' + "7" * 5000 + "}",
    "[" * 100_000 + "]" * 100_000,
])
def test_a_line_too_big_or_deep_for_json_is_a_failure_naming_it(text: str) -> None:
    """A line holding 1e400, a 5,000-digit number or 100,000 nested lists is read or named;
    the next line is still read."""
    root = ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0a", "spanId": "0b", '
            '"startTimeUnixNano": "1"}]}]}]}')
    outcomes = list(read_otlp_json_lines([text, root]))
    assert isinstance(outcomes[-1], Success)
    assert outcomes[-1].unwrap().trace_id == "0a"
    for outcome in outcomes[:-1]:
        if isinstance(outcome, Failure):
            assert outcome.failure().message.startswith("line 1:")


def test_a_trace_nested_thousands_deep_has_a_trajectory() -> None:
    """A chain of 5,000 nested tool spans: the trajectory is built (nested 64 deep, the rest
    flat inside) and the agent run read, without exhausting the stack."""
    t0 = _at()
    spans = [Span(span_id="a", span_type="agent_run", started_at=t0, output={"text": "x"})]
    spans += [Span(span_id=f"t{i}", span_type="tool_call", started_at=t0,
                   parent_span_id="a" if i == 0 else f"t{i - 1}") for i in range(5000)]
    trajectory = extract_trajectory_from_trace(Trace(spans=spans)).unwrap()
    names: list[str] = []
    stack = list(trajectory.steps)
    while stack:
        step = stack.pop()
        names.append(step.name)
        stack.extend(step.children)
    assert len(names) == 5000
    assert trace_to_agent_run(Trace(spans=spans)).failure().kind == "no_model_span"


def test_the_same_trace_twice_in_a_stream_is_read_once_and_said() -> None:
    """A trace delivered twice with the same spans: one trace, then a duplicate_trace note;
    with different spans under the same ids: a conflicting_trace error."""
    line = json.dumps(_genai())
    first, again = read_otlp_json_lines([line, line])
    assert isinstance(first, Success)
    assert again.failure().kind == "duplicate_trace"
    changed = _genai()
    _spans(changed)[0]["name"] = "changed"
    _, conflict = read_otlp_json_lines([line, json.dumps(changed)])
    assert conflict.failure().kind == "conflicting_trace"


SCORERS = '''
from scorecore import create_scorer

said = create_scorer(id="said", description="d", type="agent").generate_score(lambda ctx: 1.0)
'''


def _eval_traces(tmp_path: Path, lines: list[str]) -> tuple[int, str]:
    data = tmp_path / "traces.jsonl"
    data.write_text("\n".join(lines) + "\n")
    scorers = tmp_path / "s.py"
    scorers.write_text(SCORERS)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval-traces", str(data), f"{scorers}:said", "--store",
                 f"sqlite:{tmp_path / 't.db'}"], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def test_eval_traces_scores_a_trace_delivered_twice_once(tmp_path: Path) -> None:
    """eval-traces on a file holding one trace twice scores it once, passes, and says so."""
    line = json.dumps(_genai())
    code, text = _eval_traces(tmp_path, [line, line])
    assert code == 0, text
    assert "delivered more than once" in text
    assert "duplicate id" not in text


def test_eval_traces_refuses_two_different_traces_under_one_id(tmp_path: Path) -> None:
    """Different spans under the same trace and span ids: a usage error (exit 2) naming the
    trace, before anything is scored."""
    changed = _genai()
    _spans(changed)[0]["name"] = "changed"
    code, text = _eval_traces(tmp_path, [json.dumps(_genai()), json.dumps(changed)])
    assert code == 2, text
    assert "4bf92f3577b34da6a3ce929d0e0e4736" in text
    assert "Traceback" not in text


def test_eval_traces_reports_a_hostile_line_and_scores_the_rest(tmp_path: Path) -> None:
    """A line with an attribute nested 100 deep fails its trace as an unreadable item (exit 2);
    no traceback."""
    bad = _set_attribute(_genai(), "deep", _deep_kvlist(100))
    bad_line = json.dumps(bad)
    other = json.loads((OTLP / "collector_file_exporter.jsonl").read_text().splitlines()[0])
    code, text = _eval_traces(tmp_path, [bad_line, json.dumps(other)])
    assert code == 2, text
    assert "nested deeper than" in text
    assert "Traceback" not in text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.sampled_from(range(len(SEEDS))),
       st.integers(1, 3))
def test_mutated_real_payloads_never_escape_or_hang(
    rng: random.Random, seed: int, count: int
) -> None:
    """Real OTLP payloads with random hostile mutations, as JSON and as protobuf (also with
    bytes flipped): every reader path returns values and ends within a bound."""
    payload = mutate(SEEDS[seed], rng, count)
    with bounded(30):
        exercise_json(payload)
        data = protobuf_bytes(payload)
        if data is not None:
            exercise_protobuf(data)
            exercise_protobuf(flip_bytes(data, rng))



INSTRUMENTATIONS = Path(__file__).parent / "fixtures" / "instrumentations"
LOG_ROWS = ("openai-v2-legacy-events", "openai-v2-event-only", "pydantic-ai-1-v1-logs")


def _logs_and_trace(row: str) -> tuple[dict[str, Any], Any]:
    logs = json.loads((INSTRUMENTATIONS / row / "ok.logs.jsonl").read_text().splitlines()[0])
    line = (INSTRUMENTATIONS / row / "ok.traces.jsonl").read_text().splitlines()[0]
    (trace,) = otlp_to_traces(json.loads(line)).unwrap()
    return logs, trace


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.sampled_from(LOG_ROWS), st.integers(1, 3))
def test_mutated_real_log_records_never_escape(rng: random.Random, row: str, count: int) -> None:
    """Recorded OTLP log requests with random hostile mutations: reading the records and
    joining them to their trace gives a trace or TraceError values, never an exception."""
    logs, trace = _logs_and_trace(row)
    with bounded(30):
        joined = join_otlp_logs(trace, read_otlp_logs([("line 1", mutate(logs, rng, count))]))
        if isinstance(joined, Success):
            for agent in agent_traces(joined.unwrap()):
                trace_to_agent_run(agent)
