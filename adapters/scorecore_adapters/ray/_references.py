"""What the actors build: scorers and a target, from a ``"module:attr"`` reference or a callable."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias, cast

from scorecore import Scorer
from scorecore.evals import EvalItem

__all__ = ["ScorersSpec", "TargetSpec", "load_scorers"]

ScorersSpec: TypeAlias = "str | Callable[[], Iterable[Scorer[Any, Any]] | Scorer[Any, Any]]"
"""Where actors get their scorers: ``"module:attr"`` or a picklable zero-argument factory."""

TargetSpec: TypeAlias = "str | Callable[[EvalItem], Any]"
"""The target producing each item's output: ``"module:function"`` or a picklable callable."""


def _resolve(spec: str, what: str, shape: str) -> Any:
    """The object ``"module:attr.attr"`` names; a ``ValueError`` naming ``spec`` otherwise."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{what} reference must look like '{shape}', got {spec!r}")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"{what} reference {spec!r}: cannot import {module_name!r} "
                         f"({exc})") from None
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ValueError(f"{what} reference {spec!r}: {module_name!r} has no attribute "
                             f"{attr!r}")
        value = getattr(value, part)
    return value


def load_scorers(spec: ScorersSpec) -> tuple[Scorer[Any, Any], ...]:
    """The scorers ``spec`` names: a ``"module:attr"`` reference or a zero-argument factory.

    The attribute (or the factory's return value) may be one scorer, an iterable of
    scorers, or a zero-argument callable returning either. Actors call this once each.

    Raises:
        ValueError: the reference is malformed, or its module or attribute is missing.
        TypeError: it gives something that is not scorers (the message names the spec).

    >>> load_scorers("scorecore.scorers:completeness")[0].id
    'completeness-scorer'
    """
    value: Any
    if isinstance(spec, str):
        value = _resolve(spec, "scorers", "module:attr")
    elif callable(spec):
        value = spec
    else:
        raise TypeError(f"scorers must be a 'module:attr' str or a zero-argument factory, "
                         f"got {type(spec).__name__}")
    if callable(value) and not isinstance(value, Scorer):
        value = value()
    found = (value,) if isinstance(value, Scorer) else value
    if isinstance(found, str | bytes | Mapping) or not isinstance(found, Iterable):
        raise TypeError(f"scorers {_name(spec)} gave {type(value).__name__}, "
                         f"not a scorer or scorers")
    scorers = tuple(found)
    for scorer in scorers:
        if not isinstance(scorer, Scorer):
            raise TypeError(f"scorers {_name(spec)} gave {type(scorer).__name__} among the "
                             f"scorers")
    return scorers


def _name(spec: object) -> str:
    return repr(spec) if isinstance(spec, str) else getattr(spec, "__qualname__", "factory")


def load_target(spec: TargetSpec | None) -> Callable[[EvalItem], Any] | None:
    """The target ``spec`` names: a ``"module:function"`` reference, or the callable itself."""
    if spec is None or callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ValueError(  # noqa: TRY004 - reported as a bad argument, with the others
            f"target must be a 'module:function' str or a callable, got {type(spec).__name__}")
    return cast("Callable[[EvalItem], Any]", _resolve(spec, "target", "module:function"))
