"""A span that cannot be read is described in a short message, whatever the value."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scorecore.traces import Span


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
        message = Span.from_mastra_json(data).failure()
        assert len(message) < 400
