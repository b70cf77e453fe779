"""The one private cattrs converter, Mastra's camelCase JSON, and structuring run values."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import deque
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from datetime import datetime
from enum import Enum
from typing import Any, Final, Literal, TypeVar, cast, final, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import is_any_set, is_mapping, is_sequence
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union
from returns.result import Failure, Result, Success

from scorecore._core._agent import (
    GenericPart,
    MessagePart,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
)
from scorecore._core._causes import (
    InputMismatch,
    JudgeExecutionError,
    JudgeFailed,
    JudgeOutputInvalid,
    RunFailureCause,
    StepFailed,
    cause_classes,
)
from scorecore._core._judge import JudgeUsage
from scorecore._core._reprs import REPR_LIMIT, short_repr
from scorecore._core._values import (
    STEP_NAMES,
    JudgeExecution,
    NotScorable,
    PairwiseResult,
    PanelMember,
    PanelResult,
    ScoreResult,
    ScorerRun,
    StepName,
)

__all__ = ["from_mastra_json", "to_mastra_json"]

T = TypeVar("T")


def camel(name: str) -> str:
    """``preprocess_step_result`` → ``preprocessStepResult``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


MILLISECONDS = "scorecore.milliseconds"
"""attrs field metadata on a field in seconds: the key Mastra's JSON gives it under, in
milliseconds (``TrajectoryStep.duration``: ``"durationMs"``). Structuring reads that key too."""


def millisecond_keys(cls: type) -> dict[str, str]:
    """Mastra's millisecond keys of ``cls`` → our camelCase keys in seconds.

    >>> from scorecore.agent import Trajectory
    >>> millisecond_keys(Trajectory)
    {'totalDurationMs': 'totalDuration'}
    """
    return {f.metadata[MILLISECONDS]: camel(f.name) for f in attrs.fields(cls)
            if MILLISECONDS in f.metadata}


def read_milliseconds(value: Mapping[str, Any], keys: Mapping[str, str]) -> Mapping[str, Any]:
    """``value`` with each millisecond key of ``keys`` given as seconds under its own key.

    Raises:
        TypeError: a millisecond value is not a finite number ≥ 0, or both keys are given.

    >>> read_milliseconds({"name": "a", "durationMs": 1250}, {"durationMs": "duration"})
    {'name': 'a', 'duration': 1.25}
    """
    if not any(key in value for key in keys):
        return value
    out = dict(value)
    for ms_key, key in keys.items():
        if ms_key not in out:
            continue
        if key in out:
            raise TypeError(f"expected {ms_key} (milliseconds) or {key} (seconds), not both")
        ms = out.pop(ms_key)
        if ms is not None:
            number = not isinstance(ms, bool) and isinstance(ms, int | float)
            if not number or not math.isfinite(ms) or ms < 0:
                raise TypeError(f"expected {ms_key} to be a finite number of milliseconds "
                                f"≥ 0, got {short_repr(ms)}")
            ms = ms / 1000
        out[key] = ms
    return out


_NOT_SERIALISED = frozenset({"exception"})


def _is_own(cls: type) -> bool:
    # The built-in scorers' judge-reply classes are structured like a user's (snake_case keys,
    # as the schema generated from them says), not as Mastra-shaped camelCase values.
    module = cls.__module__
    return (attrs.has(cls) and module.startswith("scorecore.")
            and not module.startswith("scorecore.scorers."))


def _is_collection_type(type_: Any) -> bool:
    # Lists, sequences, deques, homogeneous and fixed-length tuples, named tuples, (frozen) sets.
    origin = get_origin(type_) or type_
    return (
        is_sequence(type_)
        or is_any_set(type_)
        or (isinstance(origin, type) and issubclass(origin, tuple))
    )


def _is_plain_literal(type_: Any) -> bool:
    # Literals of enum members keep cattrs' own hook (it maps values to members).
    return get_origin(type_) is Literal and not any(isinstance(a, Enum) for a in get_args(type_))


_JSON_NUMBER_INTS: ContextVar[bool] = ContextVar("json_number_ints", default=False)
"""While set (a judge's reply is being structured), an ``int`` field takes a JSON number with
no fractional part: JSON has one number type, and a schema's ``integer`` admits ``1.0``."""


def _register_strict_hooks(conv: cattrs.Converter) -> None:
    # cattrs' defaults coerce (str(1) == "1", int("3") == 3, bool("no") is True); a scorer's
    # declared input type is a contract, so a value of the wrong kind is a reported mismatch.
    def strict(kind: type, accepts: tuple[type, ...]) -> None:
        def hook(value: Any, _: Any) -> Any:
            ok = isinstance(value, accepts) and not (kind is not bool and isinstance(value, bool))
            if (not ok and kind is int and isinstance(value, float) and value.is_integer()
                    and _JSON_NUMBER_INTS.get()):
                return int(value)
            if not ok:
                raise TypeError(f"expected {kind.__name__}, got {short_repr(value)}")
            return float(value) if kind is float else value

        conv.register_structure_hook(kind, hook)

    strict(str, (str,))
    strict(int, (int,))
    strict(float, (int, float))
    strict(bool, (bool,))

    # A str is a sequence of its characters and a mapping an iterable of its keys, so cattrs
    # would make {"tags": "urgent"} six one-letter tags. A declared collection takes a list
    # (or another iterable that is neither text nor a mapping). The guard wraps whatever hook
    # cattrs itself would use; while that hook is being built the predicate steps aside.
    building: ContextVar[tuple[Any, ...]] = ContextVar("building", default=())

    def is_guarded_collection(type_: Any) -> bool:
        return _is_collection_type(type_) and type_ not in building.get()

    def collection_factory(type_: Any) -> Any:
        token = building.set((*building.get(), type_))
        try:
            inner = conv.get_structure_hook(type_, cache_result=False)
        finally:
            building.reset(token)
        wanted = "a list or set" if is_any_set(type_) else "a list"
        structure = _stopping_collection(conv, type_, inner) or inner

        def hook(value: Any, target: Any) -> Any:
            if isinstance(value, str | bytes | bytearray | Mapping):
                raise TypeError(
                    f"expected {wanted}, got {short_repr(value)} of type {type(value).__name__}"
                )
            return structure(value, target)

        return hook

    conv.register_structure_hook_factory(is_guarded_collection, collection_factory)

    def is_guarded_mapping(type_: Any) -> bool:
        return is_mapping(type_) and len(get_args(type_)) == 2 and type_ not in building.get()

    def mapping_factory(type_: Any) -> Any:
        token = building.set((*building.get(), type_))
        try:
            inner = conv.get_structure_hook(type_, cache_result=False)
        finally:
            building.reset(token)
        return _stopping_mapping(conv, type_, inner) or inner

    conv.register_structure_hook_factory(is_guarded_mapping, mapping_factory)

    def literal_factory(type_: Any) -> Any:
        allowed = get_args(type_)
        # cattrs' own message embeds str(value) whole (and str() of a huge int raises).
        names = ", ".join(short_repr(a) for a in allowed)

        def hook(value: Any, _: Any) -> Any:
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
_BUILT: Final[Mapping[type, Callable[[list[Any]], Any]]] = {
    list: lambda items: items, tuple: tuple, deque: deque, set: set, frozenset: frozenset,
}


def _element_type(type_: Any) -> Any:
    """The item type of a homogeneous collection type, else ``None`` (bare, fixed tuple)."""
    args = get_args(type_)
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    if len(args) == 1 and (get_origin(type_) or type_) is not tuple:
        return args[0]
    return None


def _note(exc: Exception, text: str, index: Any, type_: Any) -> Exception:
    exc.__notes__ = [*getattr(exc, "__notes__", []), IterableValidationNote(text, index, type_)]
    return exc


def _stopping_collection(conv: cattrs.Converter, type_: Any, inner: Any) -> Any:
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
    handlers: list[Any] = []  # the item hook, looked up on first use (types may recurse)

    def structure(value: Any, target: Any) -> Any:
        if not handlers:
            handlers.append(conv.get_structure_hook(element))
        handler = handlers[0]
        items: list[Any] = []
        seen: set[Any] = set()
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


def _stopping_mapping(conv: cattrs.Converter, type_: Any, inner: Any) -> Any:
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
    handlers: list[Any] = []

    def structure(value: Any, target: Any) -> Any:
        if not isinstance(value, Mapping):
            return inner(value, target)  # cattrs' own error for a value that is not a mapping
        if not handlers:
            handlers.extend((conv.get_structure_hook(key_type),
                             conv.get_structure_hook(value_type)))
        key_hook, value_hook = handlers
        out: dict[Any, Any] = {}
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


def _register_causes(conv: cattrs.Converter) -> None:
    def unstructure_step_failed(cause: StepFailed) -> dict[str, Any]:
        # A step's Failure value is stored as JSON; an exception (no JSON of it reads back) as
        # its "Type: message" text.
        error = cause.error
        return {"step": cause.step,
                "error": f"{cause.error_type}: {cause.message}"
                if isinstance(error, BaseException) else conv.unstructure(error)}

    conv.register_unstructure_hook(StepFailed, unstructure_step_failed)
    _tag_by_kind(conv, JudgeExecutionError)
    _tag_by_kind(conv, RunFailureCause)


def _tag_by_kind(conv: cattrs.Converter, union: Any) -> None:
    """Causes are tagged ``{"cause": kind, ...}`` by their stable ``kind``; a cause stored
    before (tagged with its class name) still reads."""
    kinds = {cls: kind for kind, cls in cause_classes().items()}
    configure_tagged_union(union, conv, tag_name="cause", tag_generator=kinds.__getitem__)
    by_kind = conv.get_structure_hook(union)
    kind_of_name = {cls.__name__: kinds[cls] for cls in get_args(union)}

    def structure(value: Any, type_: Any) -> Any:
        if isinstance(value, Mapping) and value.get("cause") in kind_of_name:
            value = {**value, "cause": kind_of_name[value["cause"]]}
        return by_kind(value, type_)

    conv.register_structure_hook(union, structure)


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)

    def passthrough(cls: type, fn: Any) -> Any:
        # A value that already has the right type (e.g. an AgentMessage inside a tuple) is
        # kept as it is rather than re-structured from a mapping.
        origin = get_origin(cls) or cls

        def hook(value: Any, type_: Any) -> Any:
            if isinstance(value, origin):
                return value
            if not isinstance(value, Mapping):
                raise TypeError(
                    f"expected a mapping or an instance of {origin.__name__}, "
                    f"got {short_repr(value)} of type {type(value).__name__}"
                )
            return fn(value, type_)

        return hook

    def structure_factory(cls: type) -> Any:
        overrides = {
            f.name: override(omit=True) if f.name in _NOT_SERIALISED
            else override(rename=camel(f.name))
            for f in attrs.fields(cls)
        }
        fn: Any = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **cast(Any, overrides)
        )
        ms_keys = millisecond_keys(cls)
        if not ms_keys:
            return passthrough(cls, fn)

        def reading_milliseconds(value: Any, type_: Any) -> Any:
            # Mastra's JSON gives durations in milliseconds (``durationMs``).
            return fn(read_milliseconds(value, ms_keys), type_)

        return passthrough(cls, reading_milliseconds)

    def user_structure_factory(cls: type) -> Any:
        return passthrough(cls, make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True))

    def is_user_class(cls: Any) -> bool:
        return isinstance(cls, type) and not _is_own(cls) and (
            attrs.has(cls) or dataclasses.is_dataclass(cls)
        )

    conv.register_structure_hook_factory(is_user_class, user_structure_factory)

    def unstructure_factory(cls: type) -> Any:
        overrides = {
            f.name: override(omit=True) if f.name in _NOT_SERIALISED
            else override(rename=camel(f.name))
            for f in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, conv, **cast(Any, overrides))

    conv.register_structure_hook_factory(_is_own, structure_factory)
    conv.register_unstructure_hook_factory(_is_own, unstructure_factory)
    def structure_datetime(value: Any, _: Any) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except (AttributeError, ValueError):
            # datetime's own message would hold the whole value.
            raise TypeError(
                f"expected an ISO 8601 date-time, got {short_repr(value)}"
            ) from None

    conv.register_structure_hook(datetime, structure_datetime)
    conv.register_unstructure_hook(datetime, lambda d: d.isoformat())
    conv.register_structure_hook(Any, lambda v, _: v)

    _register_strict_hooks(conv)

    part_types: dict[str, type] = {
        "text": TextPart, "tool-invocation": ToolInvocationPart, "reasoning": ReasoningPart,
    }

    def structure_part(value: Any, _: Any) -> MessagePart:
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

    def unstructure_part(part: MessagePart) -> Any:
        if isinstance(part, GenericPart):
            return {"type": part.type, **part.data}
        return conv.unstructure(part, type(part))

    conv.register_structure_hook(MessagePart, structure_part)
    conv.register_unstructure_hook(MessagePart, unstructure_part)
    conv.register_unstructure_hook(GenericPart, unstructure_part)

    _register_causes(conv)
    # JudgeExecution.error is optional; route the optional union through the tagged one.
    optional_error: Any = JudgeExecutionError | None
    conv.register_structure_hook(
        optional_error,
        lambda v, _: None if v is None else conv.structure(v, cast(Any, JudgeExecutionError)),
    )
    conv.register_unstructure_hook(
        optional_error,
        lambda v: None if v is None else conv.unstructure(v, JudgeExecutionError),
    )
    # PanelMember.cause, likewise.
    optional_cause: Any = RunFailureCause | None
    conv.register_structure_hook(
        optional_cause,
        lambda v, _: None if v is None else conv.structure(v, cast(Any, RunFailureCause)),
    )
    conv.register_unstructure_hook(
        optional_cause,
        lambda v: None if v is None else conv.unstructure(v, RunFailureCause),
    )
    return conv


converter: cattrs.Converter = _make_converter()
"""scorecore's private converter: camelCase keys for its own values, extra keys forbidden."""


MAX_ERRORS = 50
"""At most this many errors are listed in one :class:`InputMismatch`; a last one counts the rest
(or, when a collection had this many wrong items, says that checking stopped there)."""

_KEY_LIMIT = 60  # characters of a mapping key shown in an error's path
# Characters of an exception's own message kept: ours hold values already cut to REPR_LIMIT,
# others (datetime's "Invalid isoformat string: '…'") may hold the whole value.
_MESSAGE_LIMIT = 2 * REPR_LIMIT + 100


def _text(exc: BaseException) -> str:
    # str() of an exception runs user code (a validator's exception class) and may be huge.
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - formatting an error must never raise
        return f"<{type(exc).__name__} (str() failed)>"
    if len(text) <= _MESSAGE_LIMIT:
        return text
    return f"{text[:_MESSAGE_LIMIT]}… (message of {len(text):,} chars)"


def _format_error(exc: BaseException, type_: Any) -> str:
    # cattrs' wording names the field and the expected type; add the offending value, which
    # Python's own message carries (e.g. "invalid literal for int() with base 10: 'high'").
    detail = _text(exc)
    if isinstance(exc, TypeError) and detail.startswith("expected "):
        return detail  # our own hooks already name the type and the value
    if isinstance(exc, ForbiddenExtraKeysError):
        # Keys may be anything hashable (1, None, a 2 MB string): never sort or join them raw.
        extra = cast("set[object]", exc.extra_fields)
        keys = sorted(
            (k if isinstance(k, str) and len(k) <= _KEY_LIMIT else short_repr(k, _KEY_LIMIT))
            for k in extra
        )
        shown = ", ".join(keys[:10])
        more = f" and {len(keys) - 10:,} more" if len(keys) > 10 else ""
        return f"extra fields found ({shown}{more})"
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, ValueError | TypeError):
        base = "invalid value" if type_ is None else (
            f"invalid value for type, expected {getattr(type_, '__name__', None) or type_!s}"
        )
        return f"{base} ({detail})" if detail else base
    if isinstance(exc, AttributeError) and detail.endswith("object has no attribute 'items'"):
        return "expected a mapping"
    if isinstance(exc, RecursionError):
        return "value nested too deeply"
    if isinstance(exc, _StoppedEarly):
        return _STOPPED
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _transform_error(exc: BaseException, path: str, out: list[str]) -> None:
    # cattrs.transform_error, with bounded path segments: a key's repr goes into the path, and
    # a mapping key may be a 2 MB string.
    if isinstance(exc, IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            here = f"{path}[{short_repr(note.index, _KEY_LIMIT)}]"
            if isinstance(inner, ClassValidationError | IterableValidationError):
                _transform_error(inner, here, out)
            else:
                out.append(f"{_format_error(inner, note.type)} @ {here}")
        out.extend(f"{_format_error(inner, None)} @ {path}" for inner in without)
    elif isinstance(exc, ClassValidationError):
        with_fields, without = exc.group_exceptions()
        for inner, field in with_fields:
            here = f"{path}.{field.name}"
            if isinstance(inner, ClassValidationError | IterableValidationError):
                _transform_error(inner, here, out)
            else:
                out.append(f"{_format_error(inner, field.type)} @ {here}")
        out.extend(f"{_format_error(inner, None)} @ {path}" for inner in without)
    else:
        out.append(f"{_format_error(exc, None)} @ {path}")


_STOPPED = "checking stopped"


def _describe_errors(exc: BaseException, which: str) -> tuple[str, ...]:
    found: list[str] = []
    _transform_error(exc, which, found)
    errors = [e for e in found if not e.startswith(_STOPPED)]
    if len(errors) < len(found):  # a collection stopped early: how many more is not known
        errors[MAX_ERRORS - 1:] = [
            f"… and more errors @ {which}: checking stopped after {MAX_ERRORS} errors in one "
            f"collection (the rest was not checked)"
        ]
    elif len(errors) > MAX_ERRORS:
        rest = len(errors) - MAX_ERRORS + 1
        errors[MAX_ERRORS - 1:] = [f"… and {rest:,} more errors @ {which}"]
    return tuple(errors)


def structure_run_value(value: Any, expected: Any, *, which: str) -> Result[Any, InputMismatch]:
    """Structure a run's input or output into its declared type, listing every bad field.

    Values in the messages are cut to about 200 characters, and at most :data:`MAX_ERRORS`
    errors are listed.
    """
    name = getattr(expected, "__name__", None) or short_repr(expected)
    if isinstance(expected, type) and isinstance(value, expected):
        return Success(value)
    # A judge's reply is JSON: 1.0 is an integer there; a run's typed input stays strict.
    token = _JSON_NUMBER_INTS.set(which == "reply")
    try:
        return Success(converter.structure(value, expected))
    # The user's declared type is user code (validators, __post_init__), and structuring
    # arbitrary data may fail in any way (RecursionError for a value nested 100,000 deep):
    # this is the boundary where all of it becomes a reported mismatch.
    except Exception as exc:  # noqa: BLE001 - see above
        errors = _describe_errors(exc, which)
        if _is_own(get_origin(expected) or expected) or any(
            isinstance(arg, type) and _is_own(arg) for arg in getattr(expected, "__args__", ())
        ):
            # scorecore's own values are read from camelCase JSON: name fields as they were sent.
            errors = tuple(_camel_path(e) for e in errors)
        return Failure(InputMismatch(which=cast(Any, which), expected_type=name, errors=errors))
    finally:
        _JSON_NUMBER_INTS.reset(token)


_PATH_SEGMENT = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _camel_path(error: str) -> str:
    message, sep, path = error.rpartition(" @ ")
    if not sep:
        return error
    return f"{message} @ {_PATH_SEGMENT.sub(lambda m: camel(m.group(0)), path)}"


_STEP_CAMEL = {name: camel(name) for name in STEP_NAMES}
_CAMEL_STEP = {v: k for k, v in _STEP_CAMEL.items()}


def _not_scorable_json(marker: NotScorable) -> dict[str, Any]:
    out = {k: v for k, v in converter.unstructure(marker).items() if v is not None}
    if "step" in out:
        out["step"] = camel(out["step"])
    return out


def _not_scorable_from_json(marker: Any) -> NotScorable:
    return NotScorable(reason=marker.get("reason"), step=_CAMEL_STEP.get(marker.get("step", "")))


def _judge_json(judge: Mapping[StepName, tuple[JudgeExecution, ...]]) -> dict[str, Any]:
    return {
        _STEP_CAMEL[step]: {"executions": [_execution_json(e) for e in executions]}
        for step, executions in judge.items()
    }


def _judge_from_json(data: Any) -> dict[StepName, tuple[JudgeExecution, ...]]:
    return {
        _CAMEL_STEP[step]: tuple(_execution_from_json(e) for e in body.get("executions", ()))
        for step, body in (data or {}).items()
    }


def _cause_json(cause: RunFailureCause) -> dict[str, Any]:
    return {"name": type(cause).__name__, "message": cause.describe(),
            "cause": converter.unstructure(cause, RunFailureCause)}


def _member_json(member: PanelMember) -> dict[str, Any]:
    out: dict[str, Any] = {"scorerId": member.scorer_id, "status": member.status,
                           "score": member.score, "reason": member.reason, "vote": member.vote}
    if member.replaces is not None:
        out["replaces"] = member.replaces
    if member.replaced:
        out["replaced"] = True
    if member.failed_step is not None:
        out["failedStep"] = member.failed_step
    if member.cause is not None:
        out["error"] = _cause_json(member.cause)
    if member.judge:
        out["judge"] = _judge_json(member.judge)
    return out


def _member_from_json(data: Mapping[str, Any]) -> PanelMember:
    error = data.get("error")
    return PanelMember(
        scorer_id=data["scorerId"], status=data["status"], score=data.get("score"),
        reason=data.get("reason"), vote=data.get("vote"), replaces=data.get("replaces"),
        replaced=bool(data.get("replaced", False)), failed_step=data.get("failedStep"),
        cause=None if error is None else converter.structure(
            error["cause"], RunFailureCause),  # type: ignore[arg-type]
        judge=_judge_from_json(data.get("judge")),
    )


_PANEL_NUMBERS = (("threshold", "threshold"), ("score", "score"), ("std_dev", "stdDev"),
                  ("min", "min"), ("max", "max"), ("agreed", "agreed"), ("passes", "passes"),
                  ("fails", "fails"))


def _panel_json(panel: PanelResult) -> dict[str, Any]:
    out: dict[str, Any] = {"aggregate": panel.aggregate, "minSuccessful": panel.min_successful}
    out |= {key: getattr(panel, name) for name, key in _PANEL_NUMBERS}
    out["tie"] = panel.tie
    out["members"] = [_member_json(m) for m in panel.members]
    return out


def _panel_from_json(data: Mapping[str, Any]) -> PanelResult:
    return PanelResult(
        aggregate=data["aggregate"], min_successful=data["minSuccessful"],
        members=tuple(_member_from_json(m) for m in data.get("members", ())),
        tie=bool(data.get("tie", False)),
        **{name: data.get(key) for name, key in _PANEL_NUMBERS},
    )


def _pairwise_json(pair: PairwiseResult) -> dict[str, Any]:
    return {"outcome": pair.outcome, "forward": pair.forward, "swapped": pair.swapped}


def _pairwise_from_json(data: Mapping[str, Any]) -> PairwiseResult:
    return PairwiseResult(outcome=data["outcome"], forward=data["forward"],
                          swapped=data.get("swapped"))


def _same(value: Any) -> Any:
    return value


@final
@attrs.frozen(kw_only=True)
class ResultField:
    """One field of a :class:`ScoreResult` (or of its run): its Mastra JSON key, where rows keep it.

    The one table of result fields (:data:`RESULT_FIELDS`) drives :func:`to_mastra_json`,
    :func:`from_mastra_json`, the score rows built from results and the stores' column names.
    """

    name: str
    """The attribute: on the result, or on ``result.run`` when ``on_run``."""
    key: str
    """Mastra's camelCase key; also the stored column of a row that keeps it as a column."""
    on_run: bool = False
    stored: Literal["column", "context", "metadata"] = "column"
    """Where a score row keeps it: its own column (named ``key``), in ``additionalContext``, or in
    ``metadata`` (both under ``key``)."""
    optional: bool = False
    """Left out of Mastra's JSON when ``None`` or empty."""
    encode: Callable[[Any], Any] = converter.unstructure
    """The field's value (not ``None``) as JSON; may raise on user values."""
    decode: Callable[[Any], Any] = _same
    """The inverse of ``encode`` (not given ``None``)."""

    def value(self, result: ScoreResult[Any, Any]) -> Any:
        """The field's value in ``result``."""
        return getattr(result.run if self.on_run else result, self.name)

    def to_json(self, result: ScoreResult[Any, Any]) -> Any:
        """The field's value in ``result`` as JSON (``None`` stays ``None``)."""
        value = self.value(result)
        return None if value is None else self.encode(value)


RESULT_FIELDS: tuple[ResultField, ...] = (
    # The run's fields: Mastra's JSON has them first, then the run's extra keys.
    ResultField(name="input", key="input", on_run=True),
    ResultField(name="output", key="output", on_run=True),
    ResultField(name="run_id", key="runId", on_run=True),
    ResultField(name="ground_truth", key="groundTruth", on_run=True, stored="context",
                optional=True),
    ResultField(name="request_context", key="requestContext", on_run=True, optional=True),
    ResultField(name="expected_trajectory", key="expectedTrajectory", on_run=True,
                stored="context", optional=True),
    # The result's own fields; ``score`` is left out when the run is not scorable.
    ResultField(name="score", key="score"),
    ResultField(name="not_scorable", key="notScorable", stored="metadata", optional=True,
                encode=_not_scorable_json, decode=_not_scorable_from_json),
    ResultField(name="generate_score_prompt", key="generateScorePrompt"),
    ResultField(name="reason", key="reason"),
    ResultField(name="generate_reason_prompt", key="generateReasonPrompt"),
    ResultField(name="preprocess_step_result", key="preprocessStepResult"),
    ResultField(name="preprocess_prompt", key="preprocessPrompt"),
    ResultField(name="analyze_step_result", key="analyzeStepResult"),
    ResultField(name="analyze_prompt", key="analyzePrompt"),
    ResultField(name="judge", key="judge", stored="metadata", optional=True,
                encode=_judge_json, decode=_judge_from_json),
    ResultField(name="panel", key="panel", stored="metadata", optional=True,
                encode=_panel_json, decode=_panel_from_json),
    ResultField(name="pairwise", key="pairwise", stored="metadata", optional=True,
                encode=_pairwise_json, decode=_pairwise_from_json),
)
"""Every field of a :class:`ScoreResult` and of its :class:`ScorerRun` (except ``extra``), in the
order of Mastra's JSON."""

RESULT_FIELD: Mapping[str, ResultField] = {f.name: f for f in RESULT_FIELDS}
""":data:`RESULT_FIELDS` by attribute name."""

_RUN_PART = tuple(f for f in RESULT_FIELDS if f.on_run)
_RESULT_PART = tuple(f for f in RESULT_FIELDS if not f.on_run)
_KEYS = frozenset(f.key for f in RESULT_FIELDS)


def _execution_json(execution: JudgeExecution) -> dict[str, Any]:
    out: dict[str, Any] = {
        "status": execution.status,
        "prompt": execution.prompt,
        "output": execution.output,
        "judgeModelId": execution.model_id,
        "judgeProvider": execution.provider,
        "attemptCount": execution.attempt_count,
        "modelCallCount": execution.model_call_count,
        "durationMs": round(execution.duration * 1000),
        "durationSeconds": execution.duration,
    }
    if execution.usage is not None:
        out["usage"] = {k: v for k, v in converter.unstructure(execution.usage).items()
                        if v is not None}
    if execution.finish_reason is not None:
        out["finishReason"] = execution.finish_reason
    if execution.structured_output is not None:
        out["structuredOutput"] = execution.structured_output
    if execution.raw_output is not None:
        out["rawOutput"] = execution.raw_output
    if execution.waits:
        out["waits"] = list(execution.waits)
    if execution.processor_errors:
        out["processorErrors"] = list(execution.processor_errors)
    if execution.cost_usd is not None:
        out["costUsd"] = execution.cost_usd
    if execution.saved_usd is not None:
        out["savedUsd"] = execution.saved_usd
    if execution.cache_hits:
        out["cacheHits"] = execution.cache_hits
    if execution.cache_misses:
        out["cacheMisses"] = execution.cache_misses
    if execution.error is not None:
        out["error"] = {
            "name": type(execution.error).__name__,
            "message": execution.error.describe(),
            "code": _error_code(execution.error),
            "cause": converter.unstructure(execution.error, RunFailureCause),
        }
    return out


def _error_code(error: JudgeExecutionError) -> str | None:
    if isinstance(error, JudgeOutputInvalid):
        return "STRUCTURED_OUTPUT_SCHEMA_VALIDATION_FAILED"
    if isinstance(error, JudgeFailed):
        return error.error.code or error.error.kind
    return None


def _execution_from_json(data: Mapping[str, Any]) -> JudgeExecution:
    error = data.get("error")
    usage = data.get("usage")
    return JudgeExecution(
        status=data["status"],
        prompt=data["prompt"],
        output=data.get("output"),
        model_id=data["judgeModelId"],
        provider=data.get("judgeProvider") or "",
        attempt_count=data["attemptCount"],
        model_call_count=data["modelCallCount"],
        duration=data.get("durationSeconds", data.get("durationMs", 0) / 1000),
        usage=None if usage is None else converter.structure(usage, JudgeUsage),
        finish_reason=data.get("finishReason"),
        structured_output=data.get("structuredOutput"),
        raw_output=data.get("rawOutput"),
        waits=tuple(data.get("waits", ())),
        processor_errors=tuple(data.get("processorErrors", ())),
        cost_usd=data.get("costUsd"),
        saved_usd=data.get("savedUsd"),
        cache_hits=data.get("cacheHits", 0),
        cache_misses=data.get("cacheMisses", 0),
        error=None if error is None or "cause" not in error
        else converter.structure(error["cause"], RunFailureCause),  # type: ignore[arg-type]
    )


def to_mastra_json(result: ScoreResult[Any, Any]) -> dict[str, Any]:
    """Mastra's camelCase result shape, so results interoperate with Mastra tooling.

    Run keys come first (``input``, ``output``, ``runId`` …, extra keys), then ``score`` or
    ``notScorable``, the prompts and step results, and ``judge`` when a prompt step ran.

    >>> result = ScoreResult(run=ScorerRun(input="q", output="a", run_id="r1"), score=1.0)
    >>> to_mastra_json(result)["runId"], to_mastra_json(result)["score"]
    ('r1', 1.0)
    """
    out: dict[str, Any] = {}
    for field in _RUN_PART:
        value = field.value(result)
        if value is not None or not field.optional:
            out[field.key] = field.to_json(result)
    for key, value in result.run.extra.items():
        out[key] = converter.unstructure(value)
    scorable = result.not_scorable is None
    for field in _RESULT_PART:
        value = field.value(result)
        if (field.optional and not value) or (field.name == "score" and not scorable):
            continue
        out[field.key] = field.to_json(result)
    return out


def from_mastra_json(
    data: Mapping[str, Any], *, input_type: Any = Any, output_type: Any = Any
) -> ScoreResult[Any, Any]:
    """Structure Mastra's camelCase result shape back into a :class:`ScoreResult`.

    Keys that are neither run fields nor result fields are kept as the run's ``extra``.
    """
    extra = {k: v for k, v in data.items() if k not in _KEYS}
    values: dict[str, Any] = {}
    for field in RESULT_FIELDS:
        raw = data.get(field.key)
        values[field.name] = None if raw is None else field.decode(raw)
    values["input"] = converter.structure(data.get("input"), input_type)
    values["output"] = converter.structure(data.get("output"), output_type)
    run = ScorerRun(**{f.name: values.pop(f.name) for f in _RUN_PART}, extra=extra)
    if values["judge"] is None:
        values["judge"] = {}
    return ScoreResult(run=run, **values)
