"""The one private cattrs converter: camelCase keys for scorecore's values, extra keys forbidden."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast, get_args, get_origin

import attrs
import cattrs
from cattrs.dispatch import StructureHook, UnstructureHook
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union

from scorecore._core._agent import (
    GenericPart,
    MessagePart,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
)
from scorecore._core._causes import (
    JudgeExecutionError,
    RunFailureCause,
    StepFailed,
    cause_classes,
)
from scorecore._core._hooks import _register_strict_hooks
from scorecore._core._keys import camel, millisecond_keys, read_milliseconds
from scorecore._core._reprs import short_repr
from scorecore._core._values import CompositeDetails, details_kinds

__all__: list[str] = []  # internal: used across the kernel and by the rows

_NOT_SERIALISED = frozenset({"exception"})


def _is_own(cls: type) -> bool:
    # The built-in scorers' judge-reply classes are structured like a user's (snake_case keys,
    # as the schema generated from them says), not as Mastra-shaped camelCase values.
    module = cls.__module__
    return (attrs.has(cls) and module.startswith("scorecore.")
            and not module.startswith("scorecore.scorers."))


def _register_causes(conv: cattrs.Converter) -> None:
    def unstructure_step_failed(cause: StepFailed) -> dict[str, object]:
        # A step's Failure value is stored as JSON; an exception (no JSON of it reads back) as
        # its "Type: message" text.
        error = cause.error
        return {"step": cause.step,
                "error": f"{cause.error_type}: {cause.message}"
                if isinstance(error, BaseException) else conv.unstructure(error)}

    conv.register_unstructure_hook(StepFailed, unstructure_step_failed)
    _tag_by_kind(conv, JudgeExecutionError)
    _tag_by_kind(conv, RunFailureCause)


def _tag_by_kind(conv: cattrs.Converter, union: object) -> None:
    """Causes are tagged ``{"cause": kind, ...}`` by their stable ``kind``; a cause stored
    before (tagged with its class name) still reads."""
    kinds = {cls: kind for kind, cls in cause_classes().items()}
    configure_tagged_union(union, conv, tag_name="cause", tag_generator=kinds.__getitem__)
    by_kind = conv.get_structure_hook(union)
    kind_of_name = {cls.__name__: kinds[cls] for cls in get_args(union)}

    def structure(value: object, type_: object) -> object:
        if isinstance(value, Mapping) and value.get("cause") in kind_of_name:
            value = {**value, "cause": kind_of_name[value["cause"]]}
        return by_kind(value, type_)

    conv.register_structure_hook(union, structure)


def _route_optional(conv: cattrs.Converter, union: object) -> None:
    # Any: ``union`` is a Union type form, which mypy cannot hold as a type[...].
    tagged: Any = union
    optional = tagged | None
    conv.register_structure_hook(
        optional, lambda v, _: None if v is None else conv.structure(v, tagged))
    conv.register_unstructure_hook(
        optional, lambda v: None if v is None else conv.unstructure(v, tagged))


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)

    def passthrough(cls: type, fn: StructureHook) -> StructureHook:
        # A value that already has the right type (e.g. an AgentMessage inside a tuple) is
        # kept as it is rather than re-structured from a mapping.
        origin = get_origin(cls) or cls

        def hook(value: object, type_: object) -> object:
            if isinstance(value, origin):
                return value
            if not isinstance(value, Mapping):
                raise TypeError(
                    f"expected a mapping or an instance of {origin.__name__}, "
                    f"got {short_repr(value)} of type {type(value).__name__}"
                )
            return fn(value, type_)

        return hook

    def structure_factory(cls: type) -> StructureHook:
        overrides = {
            f.name: override(omit=True) if f.name in _NOT_SERIALISED
            else override(rename=camel(f.name))
            for f in attrs.fields(cls)
        }
        fn: StructureHook = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **cast(Any, overrides)
        )
        ms_keys = millisecond_keys(cls)
        if not ms_keys:
            return passthrough(cls, fn)

        def reading_milliseconds(value: Mapping[str, object], type_: object) -> object:
            # Mastra's JSON gives durations in milliseconds (``durationMs``).
            return fn(read_milliseconds(value, ms_keys), type_)

        return passthrough(cls, reading_milliseconds)

    def user_structure_factory(cls: type) -> StructureHook:
        return passthrough(cls, make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True))

    def is_user_class(cls: object) -> bool:
        return isinstance(cls, type) and not _is_own(cls) and (
            attrs.has(cls) or dataclasses.is_dataclass(cls)
        )

    conv.register_structure_hook_factory(is_user_class, user_structure_factory)

    def unstructure_factory(cls: type) -> UnstructureHook:
        overrides = {
            f.name: override(omit=True) if f.name in _NOT_SERIALISED
            else override(rename=camel(f.name))
            for f in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, conv, **cast(Any, overrides))

    conv.register_structure_hook_factory(_is_own, structure_factory)
    conv.register_unstructure_hook_factory(_is_own, unstructure_factory)
    def structure_datetime(value: object, _: object) -> datetime:
        if isinstance(value, datetime):
            return value
        if isinstance(value, str):
            # datetime's own message would hold the whole value: ours follows.
            with contextlib.suppress(ValueError):
                return datetime.fromisoformat(value.replace("Z", "+00:00"))
        raise TypeError(f"expected an ISO 8601 date-time, got {short_repr(value)}")

    conv.register_structure_hook(datetime, structure_datetime)
    conv.register_unstructure_hook(datetime, lambda d: d.isoformat())
    conv.register_structure_hook(Any, lambda v, _: v)

    _register_strict_hooks(conv)

    part_types: dict[str, type] = {
        "text": TextPart, "tool-invocation": ToolInvocationPart, "reasoning": ReasoningPart,
    }

    def structure_part(value: object, _: object) -> MessagePart:
        if isinstance(value, TextPart | ToolInvocationPart | ReasoningPart | GenericPart):
            return value
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            raise TypeError(
                f"a message part must be an object with a string 'type', got {short_repr(value)}"
            )
        known = part_types.get(value["type"])
        if known is not None:
            return cast(MessagePart, conv.structure(dict(value), known))
        rest = {k: v for k, v in value.items() if k != "type"}
        return GenericPart(type=value["type"], data=rest)

    def unstructure_part(part: MessagePart) -> object:
        if isinstance(part, GenericPart):
            return {"type": part.type, **part.data}
        return conv.unstructure(part, type(part))

    conv.register_structure_hook(MessagePart, structure_part)
    conv.register_unstructure_hook(MessagePart, unstructure_part)
    conv.register_unstructure_hook(GenericPart, unstructure_part)

    _register_causes(conv)
    # JudgeExecution.error and PanelMember.cause are optional: route each optional union
    # through its tagged one.
    _route_optional(conv, JudgeExecutionError)
    _route_optional(conv, RunFailureCause)
    _register_details(conv)
    return conv


def _register_details(conv: cattrs.Converter) -> None:
    # A composite's details: the kernel knows only the base, so each family's own JSON, under
    # its kind (as Mastra's JSON keeps it).
    def structure_details(value: object, _: object) -> CompositeDetails | None:
        if value is None:
            return None
        if not isinstance(value, Mapping) or len(value) != 1:
            raise TypeError(f"composite details must be one {{kind: details}} object, "
                            f"got {short_repr(value)}")
        ((kind, data),) = value.items()
        family = details_kinds().get(kind)
        if family is None:
            raise ValueError(f"unknown composite details kind {kind!r} (its module is not "
                             f"imported)")
        return family.from_json(data)

    optional_details: Any = CompositeDetails | None
    conv.register_structure_hook(optional_details, structure_details)
    conv.register_unstructure_hook(
        optional_details, lambda v: None if v is None else {v.kind: v.to_json()})


converter: cattrs.Converter = _make_converter()
"""scorecore's private converter: camelCase keys for its own values, extra keys forbidden."""
