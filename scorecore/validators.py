"""Small validators for options and values: numbers that are not bools, counts, fractions, and
the misuse error that names a field and its value.

The one home of these checks for the kernel, its layers and the adapters (and for anyone
writing a judge model, a store or a processor who wants the same errors): a wrong option raises
a :class:`~scorecore.ScorerDefinitionError` naming the field and the value.
:func:`unit_interval` is the exception: a field validator for a judge's reply, whose failure is
a reply in the wrong format (a ``ValueError``), not a misuse.

>>> from scorecore.validators import check_count, is_int, is_number, misuse
>>> is_int(3), is_int(True), is_number(0.5), is_number(None)
(True, False, True, False)
>>> check_count("MyJudge.max_retries", 2, minimum=0)
2
>>> raise misuse("MyJudge.timeout", -1, "must be a number > 0")
Traceback (most recent call last):
...
scorecore.ScorerDefinitionError: MyJudge.timeout must be a number > 0, got -1
"""

from __future__ import annotations

import math
from typing import TypeGuard

import attrs

from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._reprs import short_repr

__all__ = ["check_count", "check_fraction", "is_int", "is_number", "misuse", "unit_interval"]


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool`` (``True`` is an ``int`` to Python, never a count).

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """An ``int`` or ``float`` that is not a ``bool`` (finite or not).

    >>> is_number(2.5), is_number(float("nan")), is_number(False), is_number("2.5")
    (True, True, False, False)
    """
    return isinstance(value, int | float) and not isinstance(value, bool)


def misuse(
    field: str, value: object, problem: str, *, scorer_id: str | None = None
) -> ScorerDefinitionError:
    """The error for a wrong option: ``"<field> <problem>, got <value, cut short>"``.

    The value is shown with a bounded repr that never raises (a 2 MB string, an object whose
    ``__repr__`` raises); the error carries ``field`` and ``value`` as attributes. With
    ``scorer_id`` the message starts with ``"scorer '<id>': "`` and the error names the scorer.

    Args:
        field: the option, as the user spells it (``"ModelSettings.timeout"``).
        value: the value given.
        problem: what is wrong, worded to follow the field (``"must be an int >= 0"``).
        scorer_id: the scorer being built, when the option is a scorer factory's.

    Returns:
        The error, for the caller to raise.

    >>> misuse("LiveScorer.max_queue", -1, "must be an int >= 0")
    ScorerDefinitionError('LiveScorer.max_queue must be an int >= 0, got -1')
    >>> error = misuse("threshold", "x" * 500, "must be a number", scorer_id="tone")
    >>> str(error)[:48], error.scorer_id, error.field
    ("scorer 'tone': threshold must be a number, got '", 'tone', 'threshold')
    """
    prefix = "" if scorer_id is None else f"scorer {scorer_id!r}: "
    return ScorerDefinitionError(
        f"{prefix}{field} {problem}, got {short_repr(value)}",
        scorer_id=scorer_id, field=field, value=value,
    )


def check_count(
    field: str, value: object, *, minimum: int, scorer_id: str | None = None
) -> int:
    """``value`` when it is an int (not a bool) ``>= minimum``; else the misuse error (naming
    ``scorer_id`` when given, as :func:`misuse` does).

    >>> check_count("LiveScorer.max_queue", 0, minimum=0)
    0
    >>> check_count("LiveScorer.max_queue", True, minimum=0)
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: LiveScorer.max_queue must be an int >= 0, got True
    """
    if not is_int(value) or value < minimum:
        raise misuse(field, value, f"must be an int >= {minimum}", scorer_id=scorer_id)
    return value


def check_fraction(field: str, value: object, *, scorer_id: str | None = None) -> float:
    """``value`` as a float when it is a finite number (not a bool) from 0 to 1; else the
    misuse error (naming ``scorer_id`` when given).

    >>> check_fraction("threshold", 1)
    1.0
    >>> check_fraction("rate", 1.5, scorer_id="tone")
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: scorer 'tone': rate must be a finite number in [0, 1], got 1.5
    """
    if not is_number(value):
        raise misuse(field, value, "must be a number in [0, 1]", scorer_id=scorer_id)
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float is no fraction
        number = math.nan
    if not (math.isfinite(number) and 0 <= number <= 1):
        raise misuse(field, value, "must be a finite number in [0, 1]", scorer_id=scorer_id)
    return number


def unit_interval(_instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    """An attrs validator for a score the judge gives: a finite number from 0 to 1. A reply
    breaking it fails structuring, so it is a format failure and the judge is asked again.

    >>> @attrs.frozen
    ... class Reply:
    ...     score: float = attrs.field(validator=unit_interval)
    >>> Reply(score=7)
    Traceback (most recent call last):
    ...
    ValueError: score must be a finite number from 0 to 1, got 7
    """
    if not is_number(value) or not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(
            f"{attribute.name} must be a finite number from 0 to 1, got {value!r:.60}")
