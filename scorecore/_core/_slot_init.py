"""Fast constructors for the run path's attrs values, derived from the classes' fields.

``ScorerRun``, ``StepResults``, the step contexts and ``ScoreResult`` are built several times
per run. Their classes check and convert nothing, so setting each slot directly builds exactly
what ``__init__`` builds, in about half the time. :func:`fast_init` writes that constructor from
the class's own fields (as attrs writes ``__init__``): a field added to the class is a parameter
of its constructor, so it can never be left unset.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import attrs

__all__: list[str] = []  # internal: the run path builds its values with fast_init

_T = TypeVar("_T")


def _why_not_fast(cls: type) -> str | None:
    """Why setting ``cls``'s slots would not build what its ``__init__`` builds, or ``None``."""
    if not attrs.has(cls):
        return "it is not an attrs class"
    fields = attrs.fields(cls)
    names = {field.name for field in fields}
    slots = {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}
    if "__dict__" in slots or not slots or not hasattr(cls, "__slots__"):
        return "it has no slots"
    extra = sorted(slots - names - {"__weakref__"})
    if extra:  # a cached hash, or a slot of a base class attrs does not know of
        return f"it has slots that are not fields ({', '.join(extra)})"
    for field in fields:
        if field.name.startswith("_fast_"):
            return f"field {field.name!r} clashes with the constructor's own names"
        if field.validator is not None or field.converter is not None:
            return f"field {field.name!r} is checked or converted by __init__"
        if not field.init:
            return f"field {field.name!r} is set by __init__ itself (init=False)"
    if hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__"):
        return "__init__ runs a hook"
    return None


def fast_init(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of ``cls`` taking every field's value, positionally, in field order.

    It sets the slots directly instead of running ``__init__``: the value equals (and reprs
    as) the one ``cls(**fields)`` builds, and is as frozen.

    Raises:
        TypeError: ``cls`` is not a slotted attrs class whose ``__init__`` only sets its
            fields (a validator, a converter, ``init=False``, a hook or a cached hash).

    >>> @attrs.frozen
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> make_point = fast_init(Point)
    >>> make_point(1, 2)
    Point(x=1, y=2)
    >>> make_point(1, 2) == Point(x=1, y=2)
    True
    """
    why = _why_not_fast(cls)
    if why is not None:
        raise TypeError(f"fast_init({cls.__qualname__}): {why}")
    names = [field.name for field in attrs.fields(cast("type[attrs.AttrsInstance]", cls))]
    # The generated code names only the class's own field names (identifiers, as attrs
    # checks) and the setters below: nothing in it comes from data.
    namespace: dict[str, Any] = {"_fast_new": object.__new__, "_fast_cls": cls}
    lines = [f"def build({', '.join(names)}):", "    _fast_self = _fast_new(_fast_cls)"]
    for index, name in enumerate(names):
        slot = next(klass.__dict__[name] for klass in cls.__mro__ if name in vars(klass))
        namespace[f"_fast_set_{index}"] = slot.__set__
        lines.append(f"    _fast_set_{index}(_fast_self, {name})")
    lines.append("    return _fast_self")
    exec("\n".join(lines), namespace)  # noqa: S102 - see above
    build: Callable[..., _T] = namespace["build"]
    build.__name__ = build.__qualname__ = f"new_{cls.__name__}"
    build.__doc__ = f"``{cls.__name__}(...)`` from every field's value, in field order."
    return build
