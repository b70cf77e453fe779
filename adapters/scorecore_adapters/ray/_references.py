"""What the actors build: scorers and a target, from a reference (the command line's grammar:
:mod:`scorecore_adapters._loading`) or a picklable callable."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, cast

from scorecore import Scorer
from scorecore.evals import EvalItem
from scorecore_adapters import _loading

__all__ = ["ScorersSpec", "TargetSpec", "load_scorers"]

ScorersSpec: TypeAlias = "str | Callable[[], Iterable[Scorer[Any, Any]] | Scorer[Any, Any]]"
"""Where actors get their scorers: a reference (``"module:attr"``, ``"path/file.py:id1,id2"``,
as the command line's ``SCORERS``) or a picklable zero-argument factory."""

TargetSpec: TypeAlias = "str | Callable[[EvalItem], Any]"
"""The target producing each item's output: ``"module:function"`` or a picklable callable."""


def load_scorers(spec: ScorersSpec) -> tuple[Scorer[Any, Any], ...]:
    """The scorers ``spec`` names: a reference, as the command line reads its ``SCORERS``
    (``"module:attr"``, ``"module"``, ``"path/file.py:id1,id2"``), or a zero-argument factory.

    A named attribute (or the factory's return value) may be one scorer, an iterable of
    scorers, or a zero-argument callable returning either. Actors call this once each.

    Raises:
        ValueError: the reference is malformed, its file, module or name is missing, or it
            names no scorer to run (only skipped ones).
        TypeError: it gives something that is not scorers (the message names the spec).

    >>> load_scorers("scorecore.scorers:completeness")[0].id
    'completeness-scorer'
    """
    if isinstance(spec, str):
        loaded = _loading.load_scorers(spec)
        if not loaded.scorers:
            raise _loading.LoadError(f"scorers {spec!r} names no scorer to run (skipped: "
                                     f"{', '.join(sorted(loaded.skipped))})")
        return loaded.scorers
    if callable(spec):
        return _loading.scorers_of(spec, getattr(spec, "__qualname__", "factory"))
    raise TypeError(f"scorers must be a 'module:attr' str or a zero-argument factory, "
                    f"got {type(spec).__name__}")


def load_target(spec: TargetSpec | None) -> Callable[[EvalItem], Any] | None:
    """The target ``spec`` names: a ``"module:function"`` reference, or the callable itself."""
    if spec is None or callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ValueError(  # noqa: TRY004 - reported as a bad argument, with the others
            f"target must be a 'module:function' str or a callable, got {type(spec).__name__}")
    return cast("Callable[[EvalItem], Any]", _loading.load_target(spec))
