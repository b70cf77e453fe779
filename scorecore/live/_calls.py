"""What live scoring knows about a call: its arguments, result and ids, and the default input.

The default input is the call's bound arguments passed through
:func:`~scorecore.redact_secrets`, so an ``api_key=`` argument is never scored or recorded.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, final

import attrs

from scorecore._core._redact import redact_secrets
from scorecore.live._scope import LiveScoringScope

__all__ = ["LiveCall"]


@final
@attrs.frozen(kw_only=True)
class LiveCall:
    """What a live-scoring ``filter`` sees about a call."""

    # The call's own values, whatever it took and returned: ``Any`` so that a filter written
    # for its function reads them as that function's types (``call.input.startswith(...)``).
    entity: str
    input: Any
    output: Any
    run_id: str
    trace_id: str | None = None
    request_context: Mapping[str, Any] | None = None


def _default_input(signature: inspect.Signature | None, args: tuple[object, ...],
                   kwargs: Mapping[str, object]) -> object:
    """The call's arguments as the scorer input, secrets redacted by argument name first.

    A single argument is unwrapped only after its ``{name: value}`` mapping went through
    :func:`redact_secrets`, so ``call(api_key="…")`` is stored as ``"[REDACTED]"``.
    """
    if len(args) == 1 and not kwargs:
        name = _single_name(signature, args)
        if name is None:
            return redact_secrets(args[0])
        return redact_secrets({name: args[0]})[name]
    if not args and len(kwargs) == 1:
        name, value = next(iter(kwargs.items()))
        return redact_secrets({name: value})[name]
    if signature is None:
        return redact_secrets({"args": list(args), "kwargs": dict(kwargs)})
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return redact_secrets(dict(bound.arguments))


def _single_name(signature: inspect.Signature | None, args: tuple[object, ...]) -> str | None:
    """The parameter name a lone positional argument binds to, when the signature says."""
    if signature is None:
        return None
    try:
        bound = signature.bind_partial(*args)
    except TypeError:
        return None
    # A ``*args`` parameter binds a tuple, not the value: no name to judge it by then.
    named = [name for name, value in bound.arguments.items() if value is args[0]]
    return named[0] if len(named) == 1 else None


@final
@attrs.frozen(kw_only=True)
class _Call:
    entity: str
    input: object = None
    output: object = None
    args: tuple[object, ...] = ()
    kwargs: Mapping[str, object] = attrs.field(factory=dict)
    signature: inspect.Signature | None = None
    from_call: bool = False
    trace_id: str | None = None
    run_id: str | None = None
    request_context: Mapping[str, object] | None = None
    # Sampled when offered: trace_id and run_id are final, the sampling already said yes.
    sampled: bool = False


@final
@attrs.frozen(kw_only=True)
class _Job:
    input: object
    output: object
    run_id: str
    trace_id: str | None
    request_context: Mapping[str, object] | None
    call: _Call
    scope: LiveScoringScope | None
