"""Token log-probabilities in the shapes the adapters meet: OpenAI's reply, the cache's row.

OpenAI Chat Completions, llama.cpp's server and llama-cpp-python in process all answer
``choices[0].logprobs.content``: a list of ``{"token", "logprob", "top_logprobs": [{"token",
"logprob"}, ...]}``. A judge cache row keeps them as ``[[token, logprob, [[token, logprob],
...]], ...]``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from scorecore.judge import JudgeRequest, TokenLogprob

__all__ = ["from_choice", "from_row", "logprob_body", "to_row"]


def logprob_body(request: JudgeRequest) -> dict[str, Any]:
    """The body fields asking an OpenAI-shaped API for log-probabilities (none when the
    request asks for none)."""
    if request.top_logprobs is None:
        return {}
    return {"logprobs": True, "top_logprobs": request.top_logprobs}


def _number(value: object) -> float | None:
    # llama-cpp-python in process may give numpy floats: any real number, never a bool.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return None if math.isnan(number) or number > 0 else number


def _entry(item: object) -> TokenLogprob | None:
    if not isinstance(item, Mapping):
        return None
    token, logprob = item.get("token"), _number(item.get("logprob"))
    if not isinstance(token, str) or logprob is None:
        return None
    top: list[tuple[str, float]] = []
    alternatives = item.get("top_logprobs")
    for alt in alternatives if isinstance(alternatives, list) else ():
        alt_token = alt.get("token") if isinstance(alt, Mapping) else None
        alt_logprob = _number(alt.get("logprob")) if isinstance(alt, Mapping) else None
        if isinstance(alt_token, str) and alt_logprob is not None:
            top.append((alt_token, alt_logprob))
    return TokenLogprob(token=token, logprob=logprob, top=top)


def from_choice(choice: object) -> tuple[TokenLogprob, ...] | None:
    """``choices[0].logprobs.content`` as values; ``None`` when absent or not in that shape
    (a reply without usable log-probabilities is still a reply)."""
    logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list):
        return None
    entries = [_entry(item) for item in content]
    if any(entry is None for entry in entries):
        return None
    return tuple(entry for entry in entries if entry is not None)


def to_row(logprobs: Sequence[TokenLogprob]) -> list[object]:
    """The log-probabilities as a cache row stores them (JSON; ``-inf`` as ``-Infinity``)."""
    return [[t.token, t.logprob, [[a, lp] for a, lp in t.top]] for t in logprobs]


def from_row(data: object) -> tuple[TokenLogprob, ...]:
    """The log-probabilities back from :func:`to_row`'s JSON.

    Raises:
        ValueError, TypeError: ``data`` is not such a row (the entry cannot be read back).
    """
    if not isinstance(data, list):
        raise TypeError("logprobs must be a list")
    out: list[TokenLogprob] = []
    for item in data:
        token, logprob, top = item
        if not isinstance(token, str) or _number(logprob) is None or not isinstance(top, list):
            raise ValueError("not a logprob entry")
        pairs: list[tuple[str, float]] = []
        for alt, alt_logprob in top:
            number = _number(alt_logprob)
            if not isinstance(alt, str) or number is None:
                raise ValueError("not a logprob alternative")
            pairs.append((alt, number))
        out.append(TokenLogprob(token=token, logprob=float(logprob), top=pairs))
    return tuple(out)
