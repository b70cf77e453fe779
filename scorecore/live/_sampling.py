"""Which live calls are scored: none skipped, or a deterministic ratio keyed on an id.

The decision is Mastra's: ``int.from_bytes(sha256(key).digest()[:6]) / 2**48 < rate``, where
the key is the call's trace id, else its run id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, final

import attrs

from scorecore.validators import is_number, misuse

__all__ = ["NoSampling", "RatioSampling", "Sampling", "sample_point"]


def sample_point(key: str) -> float:
    """Where ``key`` falls in ``[0, 1)``: the first 6 bytes of its SHA-256, over ``2**48``.

    A ratio sampling with rate ``r`` scores a call iff ``sample_point(key) < r``; the same
    key always gets the same point, so every scorer on one trace decides alike.

    >>> sample_point("trace-1") == sample_point("trace-1")
    True
    >>> 0.0 <= sample_point("anything") < 1.0
    True
    """
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:6], "big") / 2**48


@final
@attrs.frozen(kw_only=True)
class NoSampling:
    """Score every call (Mastra's ``{type: 'none'}``, and the default)."""

    type: Literal["none"] = attrs.field(default="none", init=False)

    def decide(self, key: str) -> bool:
        """Always ``True``."""
        return True


def _check_rate(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not is_number(value) or not 0.0 <= value <= 1.0:
        raise misuse("RatioSampling.rate", value, "must be a number in [0, 1]")


@final
@attrs.frozen(kw_only=True)
class RatioSampling:
    """Score a deterministic fraction ``rate`` of calls, keyed on the trace or run id.

    >>> RatioSampling(rate=1.0).decide("t"), RatioSampling(rate=0.0).decide("t")
    (True, False)
    >>> RatioSampling(rate=1.5)
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: RatioSampling.rate must be a number in [0, 1], got 1.5
    """

    rate: float = attrs.field(validator=_check_rate)
    type: Literal["ratio"] = attrs.field(default="ratio", init=False)

    def decide(self, key: str) -> bool:
        """Whether a call keyed ``key`` is scored: ``sample_point(key) < rate``."""
        return sample_point(key) < self.rate


Sampling: TypeAlias = NoSampling | RatioSampling
"""How many calls to score: all of them, or a deterministic ratio."""


def _to_sampling(value: object) -> Sampling:
    if isinstance(value, NoSampling | RatioSampling):
        return value
    if value is None or value == "none":
        return NoSampling()
    if isinstance(value, Mapping) and value.get("type") == "none":
        return NoSampling()
    if isinstance(value, Mapping) and value.get("type") == "ratio" and "rate" in value:
        return RatioSampling(rate=value["rate"])
    raise ValueError(
        "sampling must be NoSampling(), RatioSampling(rate=...), 'none', None, or Mastra's "
        f"{{'type': 'none'}} / {{'type': 'ratio', 'rate': r}}, got {value!r}"
    )
