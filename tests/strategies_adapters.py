"""Hypothesis strategies for the retry, delay and test-kit adapters."""

from __future__ import annotations

from email.utils import formatdate

from hypothesis import strategies as st

from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest
from scorecore_adapters.testing import judge_error

REQUEST = JudgeRequest(messages=[JudgeMessage(role="user", content="Rate this answer")])

seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
"""A finite, non-negative number of seconds."""

any_delay = st.one_of(
    seconds,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-1000, max_value=1000),
)
"""Any number a user might pass as a delay, including negative and non-finite ones."""

whole_seconds = st.integers(min_value=0, max_value=10**6)

retryable_statuses = st.sampled_from([408, 409, 429, 500, 502, 503, 504, 529])
auth_statuses = st.sampled_from([401, 403])


@st.composite
def retry_after_headers(draw: st.DrawFn) -> tuple[dict[str, str], float | None]:
    """Headers carrying a usable Retry-After, and the seconds they mean (at ``now=0``)."""
    kind = draw(st.sampled_from(["ms", "s", "both", "none"]))
    ms = draw(whole_seconds)
    s = draw(whole_seconds)
    if kind == "ms":
        return {"retry-after-ms": str(ms)}, ms / 1000
    if kind == "s":
        return {"Retry-After": str(s)}, float(s)
    if kind == "both":
        return {"retry-after-ms": str(ms), "retry-after": str(s)}, ms / 1000
    return {}, None


@st.composite
def http_dates(draw: st.DrawFn) -> tuple[str, int]:
    """An IMF-fixdate and its epoch seconds."""
    at = draw(st.integers(min_value=0, max_value=4_000_000_000))
    return formatdate(at, usegmt=True), at


def retryable_errors() -> st.SearchStrategy[JudgeError]:
    """Errors the default policy retries."""
    return st.builds(
        lambda status, headers: judge_error(status, headers=headers[0]),
        retryable_statuses,
        retry_after_headers(),
    )
