"""The public test kit: fake judges and virtual time for testing scorers offline.

- :class:`ScriptedJudge` answers from a list of replies, in order, and records every request.
- :class:`FunctionJudge` answers with your function of the request (sync or async).
- :func:`verdict_reply` builds a reply whose verdict token carries log-probabilities, for
  scores read from probabilities (``ScorePromptStep(score_from="probabilities")``).
- :func:`judge_error` builds a provider-like :class:`~scorecore.judge.JudgeError` (429, 503 …).
- :class:`VirtualClock` is a clock and a ``sleep`` that never waits: pass
  ``Runtime(clock=vc, sleep=vc.sleep)`` to ``Scorer.run`` and retries take no real time.
- :func:`virtual_runtime` returns such a runtime with ids ``"run-1"``, ``"run-2"`` … as well.
- :class:`ChaosJudge` wraps any judge and injects provider-like faults from a seeded
  :class:`FaultPlan` (429s with every ``Retry-After`` form, 5xx, resets, timeouts, bad JSON).
- :class:`InMemoryScoreStore` is a real :class:`~scorecore.evals.store.ScoreStore` kept in memory.
- :func:`assert_scored` and :func:`assert_passes` check a scorer result or an eval report and
  fail with a readable table (scorer, score, reason, cause).

The pytest plugin (:mod:`scorecore_adapters.pytest_plugin`, loaded automatically) offers these
as fixtures: ``scripted_judge``, ``virtual_runtime`` and ``memory_store``.

A reply is a ``str`` (the raw reply text), any other JSON value (``dict``, ``list``, number,
``bool``, ``None``: sent as its JSON text), a :class:`~scorecore.judge.JudgeError` (returned as
``Failure``), or a whole :class:`~scorecore.judge.JudgeResponse` (returned as is).

Fake usage: unless a reply is a ``JudgeResponse``, its usage is estimated at one token per four
characters (rounded up): ``input_tokens`` from all message contents, ``output_tokens`` from
the reply text, ``total_tokens`` their sum. The finish reason is ``"stop"``.

>>> import anyio
>>> from scorecore.judge import JudgeMessage, JudgeRequest
>>> judge = ScriptedJudge([{"score": 1}, judge_error(429)])
>>> req = JudgeRequest(messages=[JudgeMessage(role="user", content="Rate this")])
>>> anyio.run(judge.generate, req).unwrap().text
'{"score": 1}'
>>> anyio.run(judge.generate, req).failure().kind
'rate_limit'
>>> anyio.run(judge.generate, req).failure().message
'ScriptedJudge ran out of replies at call 3 (script has 2)'
>>> len(judge.requests)
3
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeAlias, final

import anyio.lowlevel
from returns.result import Failure, Result, Success

from scorecore import Runtime
from scorecore.judge import JudgeError, JudgeErrorKind, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import function_identity
from scorecore.judge.retry import kind_for
from scorecore_adapters._assertions import assert_passes, assert_scored
from scorecore_adapters._chaos import (
    ALL_FAULTS,
    ChaosJudge,
    FaultKind,
    FaultPlan,
    InjectedFault,
)
from scorecore_adapters._fake_logprobs import verdict_reply
from scorecore_adapters._memory_store import InMemoryScoreStore
from scorecore_adapters.cache import MemoryJudgeCache

__all__ = [
    "ALL_FAULTS",
    "ChaosJudge",
    "FaultKind",
    "FaultPlan",
    "FunctionJudge",
    "InMemoryScoreStore",
    "InjectedFault",
    "JsonValue",
    "MemoryJudgeCache",
    "Reply",
    "ScriptedJudge",
    "SequentialIds",
    "VirtualClock",
    "assert_passes",
    "assert_scored",
    "judge_error",
    "verdict_reply",
    "virtual_runtime",
]

JsonValue: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool | None
"""A JSON value as Python builds it."""
Reply: TypeAlias = JsonValue | JudgeError | JudgeResponse
"""What a fake judge answers: text, another JSON value, an error, or a whole response."""


def _tokens(text: str) -> int:
    return -(-len(text) // 4)


def _usage(request: JudgeRequest, text: str) -> JudgeUsage:
    prompt = _tokens("".join(m.content for m in request.messages))
    out = _tokens(text)
    return JudgeUsage(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)


def _check_reply(reply: object, where: str) -> None:
    if isinstance(reply, JudgeError | JudgeResponse | str):
        return
    try:
        json.dumps(reply, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{where} must be a str, a JSON value, a JudgeError or a JudgeResponse, "
            f"got {reply!r} ({exc})"
        ) from None


def _answer(
    reply: Reply, request: JudgeRequest, model_id: str
) -> Result[JudgeResponse, JudgeError]:
    if isinstance(reply, JudgeError):
        return Failure(reply)
    if isinstance(reply, JudgeResponse):
        return Success(reply)
    text = reply if isinstance(reply, str) else json.dumps(reply, allow_nan=False)
    return Success(
        JudgeResponse(
            text=text, usage=_usage(request, text), finish_reason="stop", model_id=model_id
        )
    )


def _check_name(owner: str, field: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{owner}.{field} must be a non-empty str, got {value!r}")
    return value


class _FakeJudge:
    """What the fake judges share: their identity and the requests they received."""

    __slots__ = ("_model_id", "_provider", "_requests", "_structured")

    def __init__(self, *, model_id: str, provider: str, supports_structured_output: bool) -> None:
        owner = type(self).__name__
        self._requests: list[JudgeRequest] = []
        self._model_id = _check_name(owner, "model_id", model_id)
        self._provider = _check_name(owner, "provider", provider)
        self._structured = bool(supports_structured_output)

    @property
    def model_id(self) -> str:
        """The judge's model id, reported in telemetry."""
        return self._model_id

    @property
    def provider(self) -> str:
        """The judge's provider, reported in telemetry."""
        return self._provider

    @property
    def supports_structured_output(self) -> bool:
        """Whether the judge claims native structured output."""
        return self._structured

    @property
    def requests(self) -> tuple[JudgeRequest, ...]:
        """Every request received, in order."""
        return tuple(self._requests)

    @property
    def calls(self) -> int:
        """How many times :meth:`generate` was called."""
        return len(self._requests)


@final
class ScriptedJudge(_FakeJudge):
    """A judge model that answers from a script of replies, in order.

    Each call records its request and takes the next reply. Running out of replies is not an
    exception: the call returns ``Failure(JudgeError(kind="unknown", code="script_exhausted"))``
    whose message names the call number, and which is never retryable.

    Args:
        replies: the replies, in call order (see the module docstring for the kinds).
        model_id: reported as the judge's model id.
        provider: reported as the judge's provider.
        supports_structured_output: whether the core may ask for native structured output.

    Raises:
        TypeError: a reply is not one of the accepted kinds (e.g. a ``set``, or ``nan``).

    >>> import anyio
    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> judge = ScriptedJudge(["plain text", [1, 2]])
    >>> req = JudgeRequest(messages=[JudgeMessage(role="user", content="12345678")])
    >>> reply = anyio.run(judge.generate, req).unwrap()
    >>> reply.text, reply.usage.input_tokens, reply.usage.output_tokens
    ('plain text', 2, 3)
    >>> judge.calls, judge.remaining
    (1, 1)
    """

    __slots__ = ("_replies",)

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        model_id: str = "scripted-judge",
        provider: str = "scripted",
        supports_structured_output: bool = False,
    ) -> None:
        if isinstance(replies, str | bytes | Mapping):
            raise TypeError(
                f"ScriptedJudge.replies must be a sequence of replies, got {replies!r}"
            )
        script = tuple(replies)
        for i, reply in enumerate(script):
            _check_reply(reply, f"ScriptedJudge.replies[{i}]")
        super().__init__(
            model_id=model_id, provider=provider,
            supports_structured_output=supports_structured_output,
        )
        self._replies: tuple[Reply, ...] = script

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return max(len(self._replies) - len(self._requests), 0)

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Record the request and answer with the next scripted reply."""
        await anyio.lowlevel.checkpoint()
        index = len(self._requests)
        self._requests.append(request)
        if index >= len(self._replies):
            return Failure(
                JudgeError(
                    kind="unknown",
                    code="script_exhausted",
                    message=(
                        f"ScriptedJudge ran out of replies at call {index + 1} "
                        f"(script has {len(self._replies)})"
                    ),
                    is_retryable=False,
                )
            )
        return _answer(self._replies[index], request, self._model_id)

    def __repr__(self) -> str:
        return (
            f"ScriptedJudge(model_id={self._model_id!r}, provider={self._provider!r}, "
            f"calls={self.calls}, remaining={self.remaining})"
        )


JudgeFunction: TypeAlias = Callable[[JudgeRequest], Reply | Awaitable[Reply]]


@final
class FunctionJudge(_FakeJudge):
    """A judge model that answers with a function of the request.

    ``fn(request)`` may be sync or async and returns a reply of the same kinds as
    :class:`ScriptedJudge` takes. An exception raised by ``fn`` propagates out of
    :meth:`generate`; a scorer run, like for any judge model that raises, turns it into a
    judge failure (a ``JudgeError`` of kind ``unknown`` naming it, retried by
    ``ModelSettings.max_retries``). Return :func:`judge_error` to simulate a provider failure.

    Its ``cache_identity`` is a digest of ``fn`` 's code, so a judge cache keeps the answers
    of each version of the function apart (the same code in a new judge reads them back).

    Args:
        fn: the function answering each request.
        model_id: reported as the judge's model id.
        provider: reported as the judge's provider.
        supports_structured_output: whether the core may ask for native structured output.

    >>> import anyio
    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> judge = FunctionJudge(lambda req: {"echo": req.messages[-1].content})
    >>> req = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")])
    >>> anyio.run(judge.generate, req).unwrap().text
    '{"echo": "hi"}'
    """

    __slots__ = ("_fn", "_identity")

    def __init__(
        self,
        fn: JudgeFunction,
        *,
        model_id: str = "function-judge",
        provider: str = "function",
        supports_structured_output: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionJudge.fn must be callable, got {fn!r}")
        super().__init__(
            model_id=model_id, provider=provider,
            supports_structured_output=supports_structured_output,
        )
        self._fn = fn
        self._identity = f"function:{function_identity(fn)}"

    @property
    def cache_identity(self) -> str:
        """The function's code (as a scorer fingerprint hashes it): a judge whose function
        changed never reads the answers the old one left in a judge cache."""
        return self._identity

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Record the request and answer with ``fn(request)``.

        An async ``fn`` is awaited as it is, so its own awaits (e.g. a simulated latency) are the
        only scheduling points; a sync ``fn`` is followed by one checkpoint.

        Raises:
            TypeError: ``fn`` returned something that is not a reply.
        """
        self._requests.append(request)
        reply = self._fn(request)
        if inspect.isawaitable(reply):
            reply = await reply
        else:
            # Extra checkpoints are not free: with many concurrent calls each one sends the task
            # to the back of the run queue and delays its own awaits (e.g. a latency sleep).
            await anyio.lowlevel.checkpoint()
        _check_reply(reply, f"FunctionJudge reply to call {len(self._requests)}")
        return _answer(reply, request, self._model_id)

    def __repr__(self) -> str:
        return (
            f"FunctionJudge({self._fn!r}, model_id={self._model_id!r}, "
            f"provider={self._provider!r}, calls={self.calls})"
        )


def judge_error(
    status: int | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    type: str | None = None,
    message: str = "",
    kind: JudgeErrorKind | None = None,
    cause: JudgeError | None = None,
) -> JudgeError:
    """Build a provider-like :class:`~scorecore.judge.JudgeError` for tests.

    The kind is derived from the status and code/type when not given, and retryability from
    the kind and status (408, 409, 429, 5xx, timeouts and network errors are retryable).

    Args:
        status: the HTTP status, if the simulated provider answered.
        headers: response headers (names are lower-cased), e.g. ``{"Retry-After": "2"}``.
        code: the provider's error code, e.g. ``"rate_limit_exceeded"`` or ``"ECONNRESET"``.
        type: the provider's error type, e.g. ``"overloaded_error"``.
        message: a readable message.
        kind: overrides the derived kind.
        cause: the lower-level error this one wraps.

    Returns:
        The error value.

    >>> err = judge_error(429, headers={"Retry-After": "2"})
    >>> err.kind, err.is_retryable, dict(err.headers)
    ('rate_limit', True, {'retry-after': '2'})
    >>> judge_error(401).is_retryable
    False
    >>> judge_error(code="ECONNRESET").kind
    'network'
    """
    return JudgeError(
        kind=kind if kind is not None else kind_for(status, code, type),
        message=message,
        status=status,
        headers=dict(headers or {}),
        code=code,
        type=type,
        cause=cause,
    )


def _check_seconds(owner: str, seconds: object) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"{owner} takes a number of seconds, got {seconds!r}")
    value = float(seconds)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{owner} takes a finite number of seconds >= 0, got {seconds!r}")
    return value


def _check_start(start: object) -> float:
    if isinstance(start, bool) or not isinstance(start, int | float) or not math.isfinite(start):
        raise ValueError(f"VirtualClock.start must be a finite number, got {start!r}")
    return float(start)


@final
class VirtualClock:
    """A clock whose time moves only when someone sleeps on it (or calls :meth:`advance`).

    Calling the clock returns the virtual time in seconds. ``await clock.sleep(s)`` records
    ``s`` in :attr:`sleeps`, advances the time by ``s`` and returns at once (it is still a
    checkpoint, so cancellation is honoured). It is both a :class:`~scorecore.Clock` and, via
    ``clock.sleep``, a :class:`~scorecore.Sleep`:
    ``Runtime(clock=vc, sleep=vc.sleep)`` runs a scorer in virtual time.

    Args:
        start: the initial virtual time in seconds.

    >>> import anyio
    >>> vc = VirtualClock()
    >>> anyio.run(vc.sleep, 2.5)
    >>> vc(), vc.sleeps
    (2.5, (2.5,))
    >>> vc.advance(1)
    >>> vc()
    3.5
    """

    __slots__ = ("_now", "_sleeps")

    def __init__(self, start: float = 0.0) -> None:
        self._now = _check_start(start)
        self._sleeps: list[float] = []

    def __call__(self) -> float:
        """The current virtual time in seconds."""
        return self._now

    @property
    def sleeps(self) -> tuple[float, ...]:
        """Every wait requested through :meth:`sleep`, in order."""
        return tuple(self._sleeps)

    @property
    def slept(self) -> float:
        """The total of all waits requested through :meth:`sleep`."""
        return math.fsum(self._sleeps)

    def advance(self, seconds: float) -> None:
        """Move the virtual time forward without recording a sleep.

        Raises:
            ValueError: ``seconds`` is negative or not finite.
        """
        self._now += _check_seconds("VirtualClock.advance", seconds)

    async def sleep(self, seconds: float, /) -> None:
        """Record the wait, advance the virtual time by it, and return at once.

        Raises:
            ValueError: ``seconds`` is negative or not finite (the ``Sleep`` contract).
        """
        value = _check_seconds("VirtualClock.sleep", seconds)
        self._sleeps.append(value)
        self._now += value
        await anyio.lowlevel.checkpoint()

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now!r}, sleeps={len(self._sleeps)})"


@final
class SequentialIds:
    """Deterministic run ids: ``"run-1"``, ``"run-2"`` … (a :class:`~scorecore.NewId`).

    >>> ids = SequentialIds()
    >>> ids(), ids()
    ('run-1', 'run-2')
    """

    __slots__ = ("_count", "_prefix")

    def __init__(self, prefix: str = "run") -> None:
        self._prefix = _check_name("SequentialIds", "prefix", prefix)
        self._count = 0

    def __call__(self) -> str:
        """The next id."""
        self._count += 1
        return f"{self._prefix}-{self._count}"


def virtual_runtime(*, start: float = 0.0, id_prefix: str = "run") -> tuple[Runtime, VirtualClock]:
    """A :class:`~scorecore.Runtime` in virtual time with deterministic ids, and its clock.

    Args:
        start: the initial virtual time in seconds (also the wall clock, read as seconds since
            the Unix epoch when a ``Retry-After`` date is read).
        id_prefix: run ids are ``f"{id_prefix}-1"``, ``f"{id_prefix}-2"`` …

    Returns:
        ``(runtime, clock)``; inspect ``clock.sleeps`` to see every wait the run asked for.

    >>> runtime, clock = virtual_runtime()
    >>> runtime.new_id(), runtime.clock()
    ('run-1', 0.0)
    """
    clock = VirtualClock(start)
    runtime = Runtime(
        clock=clock, sleep=clock.sleep, new_id=SequentialIds(id_prefix), wall_clock=clock
    )
    return runtime, clock
