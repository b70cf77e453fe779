"""The cache key of the judge call the running task is making, for a judge model to read."""

from __future__ import annotations

import contextvars

__all__ = ["current_cache_key"]  # CALL_KEY is internal: the meter sets it

# The cache key of the judge call the running task is making (set around the model call only).
CALL_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "scorecore_judge_call_key", default=None
)


def current_cache_key() -> str | None:
    """The judge cache key of the call the running task is making, for a judge model to read
    inside ``generate``; ``None`` outside a metered call or when the run has no cache.

    A batch judge journals each request under this key (it holds the trial index and the
    model's identity), so a process started again knows which requests it already submitted.

    >>> current_cache_key() is None
    True
    """
    return CALL_KEY.get()
