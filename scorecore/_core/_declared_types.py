"""Structuring a run's input, output or judge reply into its declared type, every error listed."""

from __future__ import annotations

import re
from typing import Any, cast, get_origin

from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)
from returns.result import Failure, Result, Success

from scorecore._core._causes import InputMismatch
from scorecore._core._convert import _is_own, converter
from scorecore._core._hooks import _JSON_NUMBER_INTS, MAX_ERRORS, _StoppedEarly
from scorecore._core._keys import camel
from scorecore._core._reprs import REPR_LIMIT, short_repr

__all__: list[str] = []  # internal: the pipeline and the step kinds call structure_run_value

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


def _format_error(exc: BaseException, type_: object) -> str:
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
    located: list[tuple[Exception, str, object]]
    if isinstance(exc, IterableValidationError):
        with_notes, without = exc.group_exceptions()
        located = [(inner, f"{path}[{short_repr(note.index, _KEY_LIMIT)}]", note.type)
                   for inner, note in with_notes]
    elif isinstance(exc, ClassValidationError):
        with_fields, without = exc.group_exceptions()
        located = [(inner, f"{path}.{field.name}", field.type) for inner, field in with_fields]
    else:
        out.append(f"{_format_error(exc, None)} @ {path}")
        return
    for inner, here, type_ in located:
        if isinstance(inner, ClassValidationError | IterableValidationError):
            _transform_error(inner, here, out)
        else:
            out.append(f"{_format_error(inner, type_)} @ {here}")
    out.extend(f"{_format_error(inner, None)} @ {path}" for inner in without)


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


def structure_run_value(
    value: object,
    expected: Any,  # noqa: ANN401 - a type form (list[str], a union), which type[...] cannot hold
    *,
    which: str,
) -> Result[Any, InputMismatch]:
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
