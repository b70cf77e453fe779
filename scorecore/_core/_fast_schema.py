"""A fast validity check of parsed JSON replies, for the schemas judge steps usually have.

``jsonschema`` walks a schema keyword by keyword on every reply (tens of microseconds for a
three-field object); a judge cache re-run validates every reply it reads back. For a schema
made only of the keywords below, :func:`fast_check` builds, once, a predicate that gives the
same answer as ``Draft202012Validator(schema).is_valid`` on what ``json.loads`` returns, in
a few microseconds. A schema with any other keyword (``pattern``, ``multipleOf``,
``uniqueItems``, ``patternProperties``, a ``$ref`` outside ``$defs`` …) gets no predicate and
is validated by ``jsonschema`` alone; so is a reply nested deeper than :data:`MAX_DEPTH`.

The predicate only says *whether* a reply is valid: the errors of an invalid one are still
``jsonschema``'s own (see ``_output_schema.parse_and_validate``).

Supported: boolean schemas, ``type``, ``enum`` and ``const`` of scalars, ``properties``,
``required``, ``additionalProperties``, ``items``, ``prefixItems``, ``minItems``,
``maxItems``, ``minLength``, ``maxLength``, ``minimum``, ``maximum``, ``exclusiveMinimum``,
``exclusiveMaximum``, ``anyOf``, ``allOf``, ``oneOf``, ``not``, ``$ref`` to ``#`` or
``#/$defs/NAME``, ``$defs``, and the annotations (``title``, ``description``, ``format`` …).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sized
from typing import Any, Final, TypeAlias

__all__: list[str] = []  # internal: the structured-output check of the warm path

Check: TypeAlias = Callable[[Any, int], bool]
"""A compiled check: ``check(value, depth)`` is whether ``value`` is valid (raises
:class:`TooDeep` past :data:`MAX_DEPTH`)."""

MAX_DEPTH: Final = 32
"""Replies nested deeper than this are left to ``jsonschema`` (which may answer with a
``RecursionError`` that this check would not raise)."""


class TooDeep(Exception):  # noqa: N818 - a signal, not an error of the user's
    """The reply is nested deeper than :data:`MAX_DEPTH`: ask ``jsonschema``."""


class _Unsupported(Exception):  # noqa: N818 - internal signal
    """The schema uses something this check does not model."""


# Keywords that never change whether a value is valid (jsonschema treats them as annotations;
# ``format`` too, as compile_schema builds the validator without a format checker).
_ANNOTATIONS: Final = frozenset({
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
    "writeOnly", "format", "$schema", "$defs", "contentMediaType", "contentEncoding",
    "contentSchema",
})
_DEF_REF = re.compile(r"#/\$defs/([A-Za-z0-9_.-]+)")


def _is_number(value: object) -> bool:
    return type(value) is int or type(value) is float


def _scalar_member(member: object) -> Callable[[Any], bool]:
    """Whether a value equals ``member`` as jsonschema's ``enum``/``const`` compare (``1`` and
    ``1.0`` are equal, ``True`` and ``1`` are not)."""
    if member is None:
        return lambda v: v is None
    if type(member) is str:
        return lambda v: type(v) is str and v == member
    if type(member) is bool:
        return lambda v: v is member
    if _is_number(member):
        return lambda v: _is_number(v) and v == member
    raise _Unsupported


def _members(values: list[Any]) -> Callable[[Any], bool]:
    if all(type(v) is str for v in values):
        allowed = frozenset(values)
        return lambda v: type(v) is str and v in allowed
    tests = [_scalar_member(v) for v in values]
    return lambda v: any(test(v) for test in tests)


def _count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise _Unsupported
    return value


def _bound(value: object) -> float:
    if not _is_number(value):
        raise _Unsupported
    return value  # type: ignore[return-value]


def _always(_value: object, _depth: int) -> bool:
    return True


def _never(_value: object, _depth: int) -> bool:
    return False


# Each type's check, called as a check is (the depth unread): a reply's every value is checked
# by one, and a call fewer per value is a measurable share of reading a cached reply. json.loads
# gives exactly these types, never a subclass.
_ONE_TYPE: Final[Mapping[str, Check]] = {
    "object": lambda v, _d: type(v) is dict,
    "array": lambda v, _d: type(v) is list,
    "string": lambda v, _d: type(v) is str,
    "number": lambda v, _d: type(v) is int or type(v) is float,
    "integer": lambda v, _d: type(v) is int or (type(v) is float and v.is_integer()),
    "boolean": lambda v, _d: type(v) is bool,
    "null": lambda v, _d: v is None,
}


def _type(arg: object) -> Check:
    names: list[object] = arg if type(arg) is list else [arg]
    if not all(isinstance(name, str) and name in _ONE_TYPE for name in names):
        raise _Unsupported
    kinds = [_ONE_TYPE[name] for name in names]  # type: ignore[index]  # each a str, above
    if len(kinds) == 1:
        return kinds[0]
    return lambda v, d: any(k(v, d) for k in kinds)


def _enum(arg: object) -> Check:
    if type(arg) is not list:
        raise _Unsupported
    member = _members(arg)
    return lambda v, _d: member(v)


def _const(arg: object) -> Check:
    equal = _scalar_member(arg)
    return lambda v, _d: equal(v)


def _length(of: type[Sized], fails: Callable[[int, int], bool]) -> Callable[[object], Check]:
    """The check of ``minItems`` and ``maxItems`` (``of`` list) or ``minLength`` and
    ``maxLength`` (``of`` str): a value of that type whose ``len`` ``fails`` the bound
    (``operator.lt`` for a minimum, ``gt`` for a maximum) is invalid; any other value passes.
    An ``operator`` function is a C call of a few nanoseconds, not a Python frame."""

    def check_of(arg: object) -> Check:
        n = _count(arg)
        return lambda v, _d: type(v) is not of or not fails(len(v), n)

    return check_of


# The comparisons are jsonschema's own (``instance < minimum`` fails ``minimum``), so a NaN
# reply answers alike.
def _limit(fails: Callable[[Any, float], bool]) -> Callable[[object], Check]:
    """The check of ``minimum`` (``fails`` is ``operator.lt``), ``maximum`` (``gt``),
    ``exclusiveMinimum`` (``le``) or ``exclusiveMaximum`` (``ge``): a number that ``fails``
    the bound is invalid; any other value passes."""

    def check_of(arg: object) -> Check:
        b = _bound(arg)
        return lambda v, _d: not _is_number(v) or not fails(v, b)

    return check_of


_SIMPLE: Final[Mapping[str, Callable[[object], Check]]] = {
    "type": _type, "enum": _enum, "const": _const,
    "minItems": _length(list, operator.lt), "maxItems": _length(list, operator.gt),
    "minLength": _length(str, operator.lt), "maxLength": _length(str, operator.gt),
    "minimum": _limit(operator.lt), "maximum": _limit(operator.gt),
    "exclusiveMinimum": _limit(operator.le), "exclusiveMaximum": _limit(operator.ge),
}
# Compiled as one check per schema (see _Compiler.object_ and _Compiler.array).
_COMPILED_TOGETHER: Final = frozenset(
    {"properties", "required", "additionalProperties", "items", "prefixItems"})


def _combined(keyword: str, subs: list[Check]) -> Check:
    if keyword == "anyOf":
        return lambda v, d: any(s(v, d) for s in subs)
    if keyword == "allOf":
        return lambda v, d: all(s(v, d) for s in subs)
    return lambda v, d: sum(1 for s in subs if s(v, d)) == 1  # oneOf


def _negated(sub: Check) -> Check:
    return lambda v, d: not sub(v, d)


class _Compiler:
    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, ref: object) -> Check:
        if not isinstance(ref, str):
            raise _Unsupported
        if ref == "#":
            target: Any = self.root
        else:
            match = _DEF_REF.fullmatch(ref)
            defs = self.root.get("$defs") if isinstance(self.root, Mapping) else None
            if match is None or not isinstance(defs, Mapping) or match[1] not in defs:
                raise _Unsupported
            target = defs[match[1]]
        if ref not in self.refs:
            # Bound late, so a schema that refers to itself compiles (and recursion ends with
            # the value, at MAX_DEPTH at the latest).
            compiled: list[Check] = []

            def late(value: object, depth: int) -> bool:
                return compiled[0](value, depth)

            self.refs[ref] = late
            compiled.append(self.compile(target))
        return self.refs[ref]

    def compile(self, schema: object) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if type(schema) is not dict:
            raise _Unsupported
        tests: list[Check] = []
        # "type": "object" beside properties (or "array" beside items) is checked by the
        # object's (the array's) own check: one call fewer per value.
        is_object = any(k in schema for k in ("properties", "required", "additionalProperties"))
        is_array = "items" in schema or "prefixItems" in schema
        own_type = schema.get("type")
        typed = (own_type == "object" and is_object) or (own_type == "array" and is_array)
        for keyword, arg in schema.items():
            if keyword in _ANNOTATIONS or keyword in _COMPILED_TOGETHER or (
                typed and keyword == "type"
            ):
                continue
            if keyword in _SIMPLE:
                tests.append(_SIMPLE[keyword](arg))
            elif keyword in ("anyOf", "allOf", "oneOf"):
                if type(arg) is not list or not arg:
                    raise _Unsupported
                tests.append(_combined(keyword, [self.compile(sub) for sub in arg]))
            elif keyword == "not":
                tests.append(_negated(self.compile(arg)))
            elif keyword == "$ref":
                tests.append(self.ref(arg))
            else:
                raise _Unsupported
        if is_object:
            tests.append(self.object_(schema, typed=typed and own_type == "object"))
        if is_array:
            tests.append(self.array(schema, typed=typed and own_type == "array"))
        return _all(tests)

    def object_(self, schema: Mapping[str, Any], *, typed: bool = False) -> Check:
        """The check of ``properties``, ``required`` and ``additionalProperties`` (and, when
        ``typed``, of ``"type": "object"``: only a dict passes)."""
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if type(properties) is not dict or type(required) is not list or not all(
            type(name) is str for name in required
        ):
            raise _Unsupported
        known = {name: self.compile(sub) for name, sub in properties.items()}
        needed = tuple(dict.fromkeys(required))
        extra = self.compile(schema["additionalProperties"]) if (
            "additionalProperties" in schema) else None

        def check(value: object, depth: int) -> bool:
            if type(value) is not dict:
                return not typed
            for name in needed:
                if name not in value:
                    return False
            if depth >= MAX_DEPTH:
                raise TooDeep
            inner = depth + 1
            for name, item in value.items():
                sub = known.get(name)
                if sub is not None:
                    if not sub(item, inner):
                        return False
                elif extra is not None and not extra(item, inner):
                    return False
            return True

        return check

    def array(self, schema: Mapping[str, Any], *, typed: bool = False) -> Check:
        """The check of ``items`` and ``prefixItems`` (and, when ``typed``, of
        ``"type": "array"``: only a list passes)."""
        prefix_schemas = schema.get("prefixItems", [])
        if type(prefix_schemas) is not list:
            raise _Unsupported
        prefix = [self.compile(sub) for sub in prefix_schemas]
        rest = self.compile(schema["items"]) if "items" in schema else None

        def check(value: object, depth: int) -> bool:
            if type(value) is not list:
                return not typed
            if depth >= MAX_DEPTH:
                raise TooDeep
            inner = depth + 1
            for sub, item in zip(prefix, value, strict=False):
                if not sub(item, inner):
                    return False
            if rest is not None:
                for item in value[len(prefix):]:
                    if not rest(item, inner):
                        return False
            return True

        return check


def _all(tests: list[Check]) -> Check:
    if not tests:
        return _always
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda v, d: first(v, d) and second(v, d)
    return lambda v, d: all(test(v, d) for test in tests)


# Keywords that change what a $ref resolves to: a schema holding any (anywhere, even as a
# property name) is left to jsonschema.
_BASE_KEYWORDS: Final = frozenset({"$id", "$anchor", "$dynamicAnchor", "$dynamicRef",
                                   "$vocabulary", "$recursiveRef", "$recursiveAnchor"})


def _names_a_base(schema: object) -> bool:
    pending = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if not _BASE_KEYWORDS.isdisjoint(item):
                return True
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def fast_check(schema: Mapping[str, Any] | bool) -> Callable[[Any], bool] | None:
    """A predicate answering as ``Draft202012Validator(schema).is_valid`` on parsed JSON, or
    ``None`` when the schema uses a keyword it does not model.

    The predicate raises :class:`TooDeep` for a value nested deeper than :data:`MAX_DEPTH`.

    >>> valid = fast_check({"type": "object", "required": ["score"],
    ...                     "properties": {"score": {"type": "number", "minimum": 0}}})
    >>> valid({"score": 0.5}), valid({"score": -1}), valid({}), valid({"score": True})
    (True, False, False, False)
    >>> fast_check({"type": "string", "pattern": "^a"}) is None
    True
    """
    try:
        if _names_a_base(schema):
            return None
        check = _Compiler(schema).compile(schema)
    except (_Unsupported, RecursionError):
        return None
    return lambda value: check(value, 0)
