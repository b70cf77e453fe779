"""The converter's strict structuring hooks: no coercion, and collections that stop early.

cattrs' defaults coerce (``int("3") == 3``) and check every item of a collection; a scorer's
declared input type is a contract, and 200,000 wrong values must not block the event loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from enum import Enum
from typing import Any, Final, Literal, get_args, get_origin

import cattrs
from cattrs.cols import is_any_set, is_mapping, is_sequence
from cattrs.dispatch import StructureHook
from cattrs.errors import IterableValidationError, IterableValidationNote

from scorecore._core._reprs import short_repr

__all__: list[str] = []  # internal: the converter registers them


MAX_ERRORS = 50
"""At most this many errors are listed in one :class:`InputMismatch`; a last one counts the rest
(or, when a collection had this many wrong items, says that checking stopped there)."""



def _is_collection_type(type_: object) -> bool:
    # Lists, sequences, deques, homogeneous and fixed-length tuples, named tuples, (frozen) sets.
    origin = get_origin(type_) or type_
    return (
        is_sequence(type_)
        or is_any_set(type_)
        or (isinstance(origin, type) and issubclass(origin, tuple))
    )


def _is_plain_literal(type_: object) -> bool:
    # Literals of enum members keep cattrs' own hook (it maps values to members).
    return get_origin(type_) is Literal and not any(isinstance(a, Enum) for a in get_args(type_))


_JSON_NUMBER_INTS: ContextVar[bool] = ContextVar("json_number_ints", default=False)
"""While set (a judge's reply is being structured), an ``int`` field takes a JSON number with
no fractional part: JSON has one number type, and a schema's ``integer`` admits ``1.0``."""


def _register_strict_hooks(conv: cattrs.Converter) -> None:
    # cattrs' defaults coerce (str(1) == "1", int("3") == 3, bool("no") is True); a scorer's
    # declared input type is a contract, so a value of the wrong kind is a reported mismatch.
    def strict(kind: type, accepts: tuple[type, ...]) -> None:
        def hook(value: object, _: object) -> object:
            ok = isinstance(value, accepts) and not (kind is not bool and isinstance(value, bool))
            if (not ok and kind is int and isinstance(value, float) and value.is_integer()
                    and _JSON_NUMBER_INTS.get()):
                return int(value)
            if not ok:
                raise TypeError(f"expected {kind.__name__}, got {short_repr(value)}")
            return float(value) if kind is float and isinstance(value, int | float) else value

        conv.register_structure_hook(kind, hook)

    strict(str, (str,))
    strict(int, (int,))
    strict(float, (int, float))
    strict(bool, (bool,))

    # A str is a sequence of its characters and a mapping an iterable of its keys, so cattrs
    # would make {"tags": "urgent"} six one-letter tags. A declared collection takes a list
    # (or another iterable that is neither text nor a mapping). The guard wraps whatever hook
    # cattrs itself would use; while that hook is being built the predicate steps aside.
    building: ContextVar[tuple[object, ...]] = ContextVar("building", default=())

    def is_guarded_collection(type_: object) -> bool:
        return _is_collection_type(type_) and type_ not in building.get()

    def inner_hook(type_: object) -> StructureHook:
        """cattrs' own hook for ``type_``, built while ``type_`` is marked as being built (so
        the guarded factories below step aside for it)."""
        token = building.set((*building.get(), type_))
        try:
            return conv.get_structure_hook(type_, cache_result=False)
        finally:
            building.reset(token)

    def collection_factory(type_: object) -> StructureHook:
        inner = inner_hook(type_)
        wanted = "a list or set" if is_any_set(type_) else "a list"
        structure = _stopping_collection(conv, type_, inner) or inner

        def hook(value: object, target: object) -> object:
            if isinstance(value, str | bytes | bytearray | Mapping):
                raise TypeError(
                    f"expected {wanted}, got {short_repr(value)} of type {type(value).__name__}"
                )
            return structure(value, target)

        return hook

    conv.register_structure_hook_factory(is_guarded_collection, collection_factory)

    def is_guarded_mapping(type_: object) -> bool:
        return is_mapping(type_) and len(get_args(type_)) == 2 and type_ not in building.get()

    def mapping_factory(type_: object) -> StructureHook:
        inner = inner_hook(type_)
        return _stopping_mapping(conv, type_, inner) or inner

    conv.register_structure_hook_factory(is_guarded_mapping, mapping_factory)

    def literal_factory(type_: object) -> StructureHook:
        allowed = get_args(type_)
        # cattrs' own message embeds str(value) whole (and str() of a huge int raises).
        names = ", ".join(short_repr(a) for a in allowed)

        def hook(value: object, _: object) -> object:
            if value not in allowed:
                raise TypeError(f"expected one of {names}, got {short_repr(value)}")
            return value

        return hook

    conv.register_structure_hook_factory(_is_plain_literal, literal_factory)



class _StoppedEarly(Exception):  # noqa: N818 - a marker in an error group, never raised alone
    """Checking a collection stopped after :data:`MAX_ERRORS` errors; the rest was not read."""


# cattrs checks every item of a collection and raises one group of all their errors: 200,000
# wrong values cost seconds of blocked event loop to reject (and the message lists 50 of
# them). These hooks build the same containers but stop at the first MAX_ERRORS errors.
_BUILT: Final[Mapping[type, Callable[[list[object]], object]]] = {
    list: lambda items: items, tuple: tuple, deque: deque, set: set, frozenset: frozenset,
}


def _element_type(type_: object) -> object:
    """The item type of a homogeneous collection type, else ``None`` (bare, fixed tuple)."""
    args = get_args(type_)
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    if len(args) == 1 and (get_origin(type_) or type_) is not tuple:
        return args[0]
    return None


def _note(
    exc: Exception, text: str,
    index: Any,  # noqa: ANN401 - cattrs types it int | str, but a mapping key is any hashable
    type_: object,
) -> Exception:
    exc.__notes__ = [*getattr(exc, "__notes__", []), IterableValidationNote(text, index, type_)]
    return exc


def _stopping_collection(
    conv: cattrs.Converter, type_: object, inner: StructureHook
) -> StructureHook | None:
    """A hook structuring ``type_`` as ``inner`` does, stopping at MAX_ERRORS item errors;
    ``None`` when ``type_`` is not a homogeneous collection of a known container."""
    element = _element_type(type_)
    if element is None or element is Any:
        return None  # nothing per item can fail
    try:
        build = _BUILT.get(type(inner([], type_)))
    except Exception:  # noqa: BLE001 - a type cattrs cannot build empty: leave it to cattrs
        return None
    if build is None:
        return None
    unique = build is set or build is frozenset
    handlers: list[StructureHook] = []  # the item hook, looked up on first use (types may recurse)

    def structure(value: Iterable[object], target: type) -> object:
        if not handlers:
            handlers.append(conv.get_structure_hook(element))
        handler = handlers[0]
        items: list[object] = []
        seen: set[object] = set()
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                if unique:
                    seen.add(handler(item, element))
                else:
                    items.append(handler(item, element))
            except Exception as exc:  # noqa: BLE001 - as cattrs: each item's error is reported
                errors.append(_note(exc, f"Structuring {target} @ index {index}", index, element))
                if len(errors) >= MAX_ERRORS:
                    errors.append(_StoppedEarly())
                    break
        if errors:
            raise IterableValidationError(f"While structuring {target!r}", errors, target)
        return build(list(seen)) if unique else build(items)

    return structure


def _stopping_mapping(
    conv: cattrs.Converter, type_: object, inner: StructureHook
) -> StructureHook | None:
    """A hook structuring the mapping ``type_`` into a dict, stopping at MAX_ERRORS errors;
    ``None`` when cattrs would not build a dict or the types need no conversion."""
    key_type, value_type = get_args(type_)
    if key_type is Any and value_type is Any:
        return None
    try:
        if type(inner({}, type_)) is not dict:
            return None
    except Exception:  # noqa: BLE001 - a type cattrs cannot build empty: leave it to cattrs
        return None
    handlers: list[StructureHook] = []

    def structure(value: object, target: type) -> object:
        if not isinstance(value, Mapping):
            return inner(value, target)  # cattrs' own error for a value that is not a mapping
        if not handlers:
            handlers.extend((conv.get_structure_hook(key_type),
                             conv.get_structure_hook(value_type)))
        key_hook, value_hook = handlers
        out: dict[object, object] = {}
        errors: list[Exception] = []
        for key, item in value.items():
            try:
                converted = value_hook(item, value_type)
                try:
                    out[key_hook(key, key_type)] = converted
                except Exception as exc:  # noqa: BLE001 - as cattrs, a key's error
                    errors.append(_note(exc, "Structuring mapping key", key, key_type))
            except Exception as exc:  # noqa: BLE001 - as cattrs, a value's error
                errors.append(_note(exc, "Structuring mapping value", key, value_type))
            if len(errors) >= MAX_ERRORS:
                errors.append(_StoppedEarly())
                break
        if errors:
            raise IterableValidationError(f"While structuring {target!r}", errors, target)
        return out

    return structure
