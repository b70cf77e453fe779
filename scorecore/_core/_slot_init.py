"""Fast constructors for the run path's attrs values, derived from the classes' fields.

``ScorerRun``, ``StepResults``, the step contexts and ``ScoreResult`` are built several times
per run. Their classes check and convert nothing, so setting each slot directly builds exactly
what ``__init__`` builds, in a fraction of the time (a plain store per slot, see
:func:`_twin_builder`). :func:`fast_init` writes that constructor from
the class's own fields (as attrs writes ``__init__``): a field added to the class is a parameter
of its constructor, so it can never be left unset.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import attrs
from returns.primitives.container import BaseContainer
from returns.result import Success

__all__: list[str] = []  # internal: the run path builds its values with fast_init

_T = TypeVar("_T")


def _why_not_fast(cls: type, *, checked_by_caller: bool = False) -> str | None:
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
        if not checked_by_caller and (field.validator is not None or field.converter is not None):
            return f"field {field.name!r} is checked or converted by __init__"
        if not field.init:
            return f"field {field.name!r} is set by __init__ itself (init=False)"
    if hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__"):
        return "__init__ runs a hook"
    return None


def fast_init(cls: type[_T], *, checked_by_caller: bool = False) -> Callable[..., _T]:
    """A constructor of ``cls`` taking every field's value, positionally, in field order.

    It sets the slots directly instead of running ``__init__``: the value equals (and reprs
    as) the one ``cls(**fields)`` builds, and is as frozen.

    ``checked_by_caller=True`` accepts a class with validators or converters, for a caller
    that only ever passes values its validators accept and its converters return unchanged
    (a ``str`` read from a value that checked it, a tuple for a ``tuple(...)`` converter): the
    checks are then skipped, which is what they would have answered.

    Raises:
        TypeError: ``cls`` is not a slotted attrs class whose ``__init__`` only sets its
            fields (a validator or a converter, unless ``checked_by_caller``; ``init=False``,
            a hook or a cached hash).

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
    why = _why_not_fast(cls, checked_by_caller=checked_by_caller)
    if why is not None:
        raise TypeError(f"fast_init({cls.__qualname__}): {why}")
    names = _names(cls)
    build = _twin_builder(cls, names) or _setter_builder(cls, names)
    build.__name__ = build.__qualname__ = f"new_{cls.__name__}"
    build.__doc__ = f"``{cls.__name__}(...)`` from every field's value, in field order."
    return build


def _twin_builder(cls: type[_T], names: list[str]) -> Callable[..., _T] | None:
    """The constructor, writing the slots with plain attribute stores, or ``None``.

    The value is born an instance of a private subclass that adds nothing (no slot, no
    field) and is not frozen, so each field is one plain store (as a mutable class's
    ``__init__`` does), not a call of the slot's setter; the value then becomes a ``cls``
    (a ``__class__`` assignment, which Python allows between two such layouts). This
    builds the same value in about half the instructions of the setters. ``None`` when the
    class cannot be subclassed so, or refuses the assignment: the setters are used then.
    """
    try:
        # object's own __setattr__ and __delattr__ undo the frozen ones for the twin only.
        twin = type(f"_Building{cls.__name__}", (cls,), {
            "__slots__": (), "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__, "__module__": cls.__module__,
        })
        probe: object = object.__new__(twin)
        probe.__class__ = cls
    except TypeError:
        return None
    # The generated code names only the class's own field names (identifiers, as attrs
    # checks): nothing in it comes from data.
    namespace: dict[str, Any] = {"_fast_new": object.__new__, "_fast_cls": cls,
                                 "_fast_twin": twin}
    lines = [f"def build({', '.join(names)}):", "    _fast_self = _fast_new(_fast_twin)"]
    lines.extend(f"    _fast_self.{name} = {name}" for name in names)
    lines += ["    _fast_self.__class__ = _fast_cls", "    return _fast_self"]
    exec("\n".join(lines), namespace)  # noqa: S102 - see above
    build: Callable[..., _T] = namespace["build"]
    return build


def _setter_builder(cls: type[_T], names: list[str]) -> Callable[..., _T]:
    """The constructor calling each slot's setter (for a class the twin cannot stand for)."""
    # As above: the code names only the class's own field names and the setters below.
    namespace: dict[str, Any] = {"_fast_new": object.__new__, "_fast_cls": cls}
    lines = [f"def build({', '.join(names)}):", "    _fast_self = _fast_new(_fast_cls)"]
    for index, name in enumerate(names):
        slot = next(klass.__dict__[name] for klass in cls.__mro__ if name in vars(klass))
        namespace[f"_fast_set_{index}"] = slot.__set__
        lines.append(f"    _fast_set_{index}(_fast_self, {name})")
    lines.append("    return _fast_self")
    exec("\n".join(lines), namespace)  # noqa: S102 - see above
    build: Callable[..., _T] = namespace["build"]
    return build


def _names(cls: type) -> list[str]:
    return [field.name for field in attrs.fields(cast("type[attrs.AttrsInstance]", cls))]


def fast_replace(cls: type[_T], field: str) -> Callable[[_T, Any], _T]:
    """``attrs.evolve(value, **{field: new})`` for ``cls``, as a two-argument function.

    The copy is built from the value's other fields by a :func:`fast_init` constructor
    (``evolve`` reads every field through ``attrs.fields`` and calls ``__init__`` with
    keywords, several times slower). The other fields' validators are not run again: they
    passed when the value was built. A converter anywhere (``evolve`` runs it again on the
    copied value) or a validator on ``field`` refuses the class, as do fast_init's reasons.

    >>> @attrs.frozen
    ... class Point:
    ...     x: int = attrs.field(validator=attrs.validators.instance_of(int))
    ...     y: int = 0
    >>> fast_replace(Point, "y")(Point(x=1, y=2), 5)
    Point(x=1, y=5)
    """
    where = f"fast_replace({cls.__qualname__}, {field!r})"
    why = _why_not_fast(cls, checked_by_caller=True)
    if why is not None:
        raise TypeError(f"{where}: {why}")
    fields = attrs.fields(cast("type[attrs.AttrsInstance]", cls))
    for each in fields:
        if each.converter is not None:
            why = f"field {each.name!r} is converted by __init__"
        elif each.name == field and each.validator is not None:
            why = f"field {field!r} is checked by __init__"
        if why is not None:
            raise TypeError(f"{where}: {why}")
    names = [each.name for each in fields]
    if field not in names:
        raise TypeError(f"{where}: no such field")
    build = fast_init(cls, checked_by_caller=True)
    # As in fast_init: the code names only the class's own field names.
    arguments = ", ".join("_fast_new" if name == field else f"_fast_src.{name}"
                          for name in names)
    namespace: dict[str, Any] = {"_fast_build": build}
    exec(  # noqa: S102 - see above
        f"def replace(_fast_src, _fast_new):\n    return _fast_build({arguments})", namespace)
    replace: Callable[[_T, Any], _T] = namespace["replace"]
    replace.__name__ = replace.__qualname__ = f"replace_{cls.__name__}_{field}"
    return replace


def _success_builder() -> Callable[[Any], Success[Any]]:
    """``Success(value)`` without its two ``__init__`` frames: the run path returns one per
    run. It sets the container's one slot, as ``returns``' ``__init__`` does; should a
    ``returns`` release store its value otherwise, ``Success`` itself is used."""
    slot = vars(BaseContainer).get("_inner_value")
    if BaseContainer.__slots__ != ("_inner_value",) or slot is None:
        return Success
    set_inner = slot.__set__
    new = object.__new__

    def new_success(value: Any) -> Success[Any]:  # noqa: ANN401 - any value, as Success takes
        built = new(Success)
        set_inner(built, value)
        return built

    probe = new_success(0)
    return new_success if probe == Success(0) and probe.unwrap() == 0 else Success


new_success: Callable[[Any], Success[Any]] = _success_builder()
"""``Success(value)``, built in half the time (the run path's last value of every run)."""
