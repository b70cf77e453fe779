"""Token log-probabilities a judge reply may carry (``JudgeResponse.logprobs``).

A value of its own, below the judge port: the port's response holds a tuple of them, the
cache keeps them, and the probability-weighted score reads them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final, final

import attrs

from scorecore.validators import check_count, is_number, misuse

__all__ = ["TokenLogprob"]  # MAX_TOP_LOGPROBS and check_top_logprobs: internal

MAX_TOP_LOGPROBS: Final = 20
"""The most alternatives per token a request may ask for (OpenAI's limit, llama.cpp's too)."""


def _check_logprob(field: str, value: object) -> None:
    # -inf is a real answer (a token the sampler could never pick); NaN and > 0 are not.
    if not is_number(value) or math.isnan(value) or value > 0:
        raise misuse(field, value, "must be a number <= 0 (a natural log of a probability)")


def _logprob(_inst: object, _attr: object, value: float) -> None:
    _check_logprob("TokenLogprob.logprob", value)


def _to_top(pairs: Iterable[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    return tuple((token, logprob) for token, logprob in pairs)


def _top(_inst: object, _attr: object, value: tuple[tuple[object, object], ...]) -> None:
    for token, logprob in value:
        if not isinstance(token, str):
            raise misuse("TokenLogprob.top", token, "must hold (str, float) pairs")
        _check_logprob("TokenLogprob.top", logprob)


@final
@attrs.frozen(kw_only=True)
class TokenLogprob:
    """One generated token with its log-probability and the most likely alternatives.

    ``logprob`` is the natural log of the token's probability (``0.0`` is certain); ``top``
    holds ``(token, logprob)`` pairs of the likeliest tokens at that position, as the
    provider ranked them (the generated token usually among them); empty when none were
    asked for.

    >>> t = TokenLogprob(token="yes", logprob=-0.1, top=[("yes", -0.1), ("no", -2.4)])
    >>> t.top[1], round(math.exp(t.logprob), 3)
    (('no', -2.4), 0.905)
    """

    token: str = attrs.field(validator=attrs.validators.instance_of(str))
    logprob: float = attrs.field(validator=_logprob)
    top: tuple[tuple[str, float], ...] = attrs.field(
        default=(), converter=_to_top, validator=_top
    )


def check_top_logprobs(field: str, value: object) -> int | None:
    """``value`` when it is ``None`` or a whole number of alternatives from 0 to 20
    (internal: the request's and the step's setting share the check)."""
    if value is None:
        return None
    count = check_count(field, value, minimum=0)
    if count > MAX_TOP_LOGPROBS:
        raise misuse(field, value, f"must be at most {MAX_TOP_LOGPROBS}")
    return count
