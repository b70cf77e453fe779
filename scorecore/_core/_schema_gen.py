"""The JSON schema a judge is asked to answer with, generated from a prompt step's ``output_type``.

Why not a library: pydantic's ``TypeAdapter`` does not know attrs classes; ``msgspec.json.schema``
does, but reads neither field docstrings nor attrs/dataclass ``metadata`` descriptions, puts the
root class behind a ``$ref``, never says ``additionalProperties: false`` and has its own idea of
names and defaults. The schema must describe exactly what the project's cattrs converter
(``forbid_extra_keys=True``, attribute names as keys, strict scalars) structures, so it is
generated here from the same introspection cattrs uses (``attrs.fields``, ``dataclasses.fields``,
``get_type_hints``, TypedDict's required keys).

The rules, for a type ``T``:

- ``str``, ``int``, ``float``, ``bool``, ``None`` → ``string``, ``integer``, ``number``,
  ``boolean``, ``null``
- ``Literal[...]`` → ``enum`` of its values; an ``Enum`` → ``enum`` of its members' values
- ``list[X]``, ``Sequence[X]``, ``set[X]``, ``tuple[X, ...]`` → ``array`` of ``X``;
  ``tuple[X, Y]`` → ``prefixItems`` of exactly that length; ``dict[str, X]`` → an object whose
  ``additionalProperties`` is ``X``
- ``X | Y`` and ``Optional[X]`` → ``anyOf``; ``Annotated[X, ...]`` → ``X``; ``Any`` → ``{}``
- attrs classes, dataclasses and TypedDicts → ``object`` with every field in ``properties``,
  the fields without a default in ``required`` and ``additionalProperties: false``; a class
  docstring and each field's docstring (the string literal under it) or ``metadata``
  ``"description"`` become ``description``\\s, and a field's ``metadata`` ``"json_schema"``
  (a mapping of keywords, e.g. ``{"minimum": 0, "maximum": 1}``) is added to its schema.
  Classes are written inline; a class that contains itself is written once under ``$defs``
  (the root class is the schema itself, ``#``).

Anything else (``datetime``, ``bytes``, an arbitrary class, a bare ``TypeVar``) is refused with a
:class:`~scorecore.ScorerDefinitionError` naming the type and where it sits.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import itertools
import textwrap
import types
import typing
from collections.abc import Mapping, MutableSequence, Sequence, Set
from typing import (
    Any,
    Final,
    Literal,
    NotRequired,
    Required,
    TypeAlias,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import attrs
from typing_extensions import is_typeddict

from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._reprs import short_repr

__all__: list[str] = []  # internal: PromptStep/ScorePromptStep call schema_for_type

Schema: TypeAlias = dict[str, Any]
"""A JSON Schema document (Any: its values are JSON of every type, as jsonschema reads them)."""

_SCALARS: Final[Mapping[object, str]] = {
    str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null",
}
_ARRAYS: Final = (list, Sequence, MutableSequence, set, frozenset, Set)
_MAPPINGS: Final = (dict, Mapping)


def _type_name(type_: object) -> str:
    if isinstance(type_, type) and get_origin(type_) is None:
        return type_.__qualname__
    return short_repr(type_, 120)


def _field_docstrings(cls: type) -> dict[str, str]:
    """``{field: docstring}`` from the string literals written under fields in ``cls``'s body."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    # No source (a class built in a REPL or by exec), or source inspect cannot read.
    except (OSError, TypeError, SyntaxError, IndentationError):
        return {}
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
    found: dict[str, str] = {}
    for here, after in itertools.pairwise(body):
        if (
            isinstance(here, ast.AnnAssign)
            and isinstance(here.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[here.target.id] = inspect.cleandoc(after.value.value)
    return found


def _class_doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return None  # dataclasses write their signature here when there is no docstring
    return inspect.cleandoc(doc)


def _described(schema: Schema, description: object) -> Schema:
    if isinstance(description, str) and description.strip():
        if "$ref" in schema:  # keep siblings of $ref apart for older JSON Schema readers
            return {"allOf": [schema], "description": description}
        return {**schema, "description": description}
    return schema


class _Generator:
    def __init__(self, root: object) -> None:
        self.root = root
        self.defs: dict[str, Schema] = {}
        self.names: dict[object, str] = {}
        self.stack: list[type] = []

    def fail(self, type_: object, where: str, why: str) -> ScorerDefinitionError:
        return ScorerDefinitionError(
            f"output_type {_type_name(self.root)} cannot be sent to a judge as a JSON schema: "
            f"{why} {_type_name(type_)} at {where}",
            field="output_type", value=self.root,
        )

    def schema(self, type_: object, where: str) -> Schema:
        if type_ is Any or type_ is object:
            return {}
        if type_ is None or type_ in _SCALARS:
            return {"type": _SCALARS[type(None) if type_ is None else type_]}
        if isinstance(type_, typing.TypeVar):
            raise self.fail(type_, where, "a type variable has no schema:")
        if isinstance(type_, typing.NewType):
            return self.schema(type_.__supertype__, where)
        origin = get_origin(type_)
        args = get_args(type_)
        if origin is typing.Annotated:
            return self.schema(args[0], where)
        if origin in (Required, NotRequired):
            return self.schema(args[0], where)
        if origin is Literal:
            return self.literal(type_, args, where)
        if origin is Union or origin is types.UnionType:
            return {"anyOf": [self.schema(arg, where) for arg in args]}
        if isinstance(type_, type) and issubclass(type_, enum.Enum):
            return _described(self.literal(type_, [m.value for m in type_], where),
                              _class_doc(type_))
        if origin is tuple or type_ is tuple:
            return self.tuple_(type_, args, where)
        if origin in _ARRAYS or type_ in _ARRAYS:
            item = self.schema(args[0], f"{where}[]") if args else {}
            return {"type": "array", "items": item}
        if origin in _MAPPINGS or type_ in _MAPPINGS:
            if args and args[0] is not str:
                raise self.fail(type_, where, "JSON object keys are strings, so it needs str keys:")
            value = self.schema(args[1], f"{where}{{}}") if args else {}
            return {"type": "object", "additionalProperties": value}
        if isinstance(type_, type) and (
            attrs.has(type_) or dataclasses.is_dataclass(type_) or is_typeddict(type_)
        ):
            return self.class_(type_, where)
        raise self.fail(type_, where, "no JSON schema is generated for")

    def literal(self, type_: object, values: Sequence[object], where: str) -> Schema:
        for value in values:
            if not (value is None or isinstance(value, str | int | float | bool)):
                raise self.fail(type_, where, f"its value {short_repr(value)} is not JSON in")
        return {"enum": list(values)}

    def tuple_(self, type_: object, args: tuple[object, ...], where: str) -> Schema:
        # tuple[()]: its args are ((),) before Python 3.11 and () since (a bare tuple has none).
        if args == ((),) or (not args and getattr(type_, "__args__", None) == ()):
            return {"type": "array", "maxItems": 0}
        if not args or (len(args) == 2 and args[1] is Ellipsis):  # tuple, tuple[X, ...]
            item = self.schema(args[0], f"{where}[]") if args else {}
            return {"type": "array", "items": item}
        return {
            "type": "array",
            "prefixItems": [self.schema(a, f"{where}[{i}]") for i, a in enumerate(args)],
            "minItems": len(args),
            "maxItems": len(args),
            "items": False,
        }

    def class_(self, cls: type, where: str) -> Schema:
        # Classes are written inline; only a class that contains itself goes to $defs (so a
        # schema without recursion has no $ref, which some providers' tool schemas mishandle).
        if cls is self.root:
            return {"$ref": "#"}
        if cls in self.stack:
            return {"$ref": f"#/$defs/{self.name_for(cls)}"}
        self.stack.append(cls)
        try:
            schema = self.object_(cls, where)
        finally:
            self.stack.pop()
        name = self.names.get(cls)
        if name is None:
            return schema
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def name_for(self, cls: type) -> str:
        name = self.names.get(cls)
        if name is None:
            name = cls.__name__
            taken = set(self.names.values())
            counter = 2
            while name in taken:
                name = f"{cls.__name__}{counter}"
                counter += 1
            self.names[cls] = name
        return name

    def object_(self, cls: type, where: str) -> Schema:
        try:
            hints = get_type_hints(cls, include_extras=True)
        except Exception as exc:  # a forward reference that does not resolve, in user code
            raise self.fail(cls, where, f"its annotations do not resolve ({exc}):") from exc
        docs = _field_docstrings(cls)
        properties: Schema = {}
        required: list[str] = []
        for name, has_default, metadata in _fields(cls):
            sub = self.schema(hints.get(name, Any), f"{where}.{name}")
            extra = metadata.get("json_schema")
            if extra is not None:
                if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
                    raise self.fail(cls, f"{where}.{name}",
                                    "its metadata 'json_schema' is not a mapping of keywords:")
                sub = {**sub, **extra}
            description = metadata.get("description") or docs.get(name)
            properties[name] = _described(sub, description)
            if not has_default:
                required.append(name)
        out: Schema = {"type": "object", "properties": properties, "required": required,
                               "additionalProperties": False}
        return _described(out, _class_doc(cls))

    def generate(self) -> Schema:
        root = self.root
        if isinstance(root, type) and (
            attrs.has(root) or dataclasses.is_dataclass(root) or is_typeddict(root)
        ):
            schema = self.object_(root, "(root)")
        else:
            schema = self.schema(root, "(root)")
        if self.defs:
            schema = {**schema, "$defs": self.defs}
        return schema


def _fields(cls: type) -> list[tuple[str, bool, Mapping[str, Any]]]:
    """``(name, has_default, metadata)`` for each field cattrs structures, in order."""
    if attrs.has(cls):
        return [
            (f.name, f.default is not attrs.NOTHING, f.metadata)
            for f in attrs.fields(cls) if f.init
        ]
    if dataclasses.is_dataclass(cls):
        return [
            (
                f.name,
                f.default is not dataclasses.MISSING
                or f.default_factory is not dataclasses.MISSING,
                f.metadata,
            )
            for f in dataclasses.fields(cls) if f.init
        ]
    required: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    return [(name, name not in required, {}) for name in get_type_hints(cls)]


@functools.lru_cache(maxsize=256)
def _cached(type_: object) -> Schema:
    return _Generator(type_).generate()


def schema_for_type(type_: object) -> Schema:
    """The JSON schema of ``type_`` (a fresh copy), or a ScorerDefinitionError saying why not.

    >>> import attrs
    >>> @attrs.frozen
    ... class Verdict:
    ...     ok: bool = attrs.field(metadata={"description": "Whether the answer is supported."})
    >>> schema_for_type(Verdict)["properties"]
    {'ok': {'type': 'boolean', 'description': 'Whether the answer is supported.'}}
    """
    try:
        generated = _cached(type_)
    except TypeError:  # an unhashable type form (Annotated with a list inside): no cache
        generated = _Generator(type_).generate()
    copied: Schema = _copy(generated)
    return copied


def _copy(schema: Schema) -> Schema:
    """A fresh copy of ``schema``'s dicts and lists (its other values are immutable JSON)."""
    return {key: _copy_json(value) for key, value in schema.items()}


def _copy_json(value: object) -> object:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value
