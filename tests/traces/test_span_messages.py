"""A span that cannot be read is described in a short message, whatever the value."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scorecore.traces import Span, TraceError


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


ODD = st.one_of(
    st.text(min_size=1, max_size=5).map(lambda t: t * 5_000),
    st.just(10**5000),
    st.just(_Unprintable()),
    st.integers(1, 5_000).map(lambda n: list(range(n))),
)


@given(ODD)
def test_an_unreadable_span_is_named_briefly(value: Any) -> None:
    """A span (or a field of one) that is huge or unprintable gives a bounded message."""
    for data in (value, {"spanId": value, "spanType": "agent_run"},
                 {"spanId": "s", "spanType": "agent_run", "startedAt": value}):
        error = Span.from_mastra_json(data).failure()
        assert isinstance(error, TraceError)
        assert len(error.message) < 400


def test_an_invalid_span_is_a_trace_error_naming_the_field_and_the_span() -> None:
    """``Span.from_mastra_json`` answers a ``TraceError`` value, like the rest of the trace API."""
    error = Span.from_mastra_json({"spanId": "s7", "startedAt": "2025-01-01T00:00:00Z"}).failure()
    assert error == TraceError(kind="invalid_span", span_id="s7",
                               message="spanType: required, a non-empty string")
    bad_time = {"spanId": "s8", "spanType": "tool_call", "startedAt": "yesterday", "traceId": "t"}
    error = Span.from_mastra_json(bad_time).failure()
    assert (error.kind, error.span_id, error.trace_id) == ("invalid_span", "s8", "t")
    assert error.message == "startedAt: must be an ISO 8601 timestamp, got 'yesterday'"
    assert Span.from_mastra_json([1]).failure() == TraceError(
        kind="invalid_span", message="a span must be an object, got [1]")


def test_a_run_of_digits_thousands_long_is_not_a_start_time() -> None:
    """Python's ISO reader takes any long run of digits for a time; a span's does not."""
    error = Span.from_mastra_json(
        {"spanId": "s", "spanType": "agent_run", "startedAt": "1" * 5_000}).failure()
    assert isinstance(error, TraceError)
    assert error.message.startswith("startedAt")
    assert len(error.message) < 400
