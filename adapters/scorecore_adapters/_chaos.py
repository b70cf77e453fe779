"""A judge that misbehaves on purpose, like a provider on a bad day, deterministically."""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from email.utils import formatdate
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast, final, get_args

import anyio.lowlevel
import attrs
from jsonschema import Draft202012Validator
from returns.result import Failure, Result, Success

from scorecore import JudgeModel
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse
from scorecore.judge.retry import kind_for
from scorecore.validators import is_int, is_number, misuse

__all__ = ["ALL_FAULTS", "ChaosJudge", "FaultKind", "FaultPlan", "InjectedFault"]

FaultKind: TypeAlias = Literal[
    "rate_limit",
    "rate_limit_retry_after",
    "rate_limit_retry_after_ms",
    "rate_limit_retry_after_date",
    "server_error",
    "unavailable",
    "overloaded",
    "connection_reset",
    "timeout",
    "malformed_json",
    "schema_invalid",
    "truncated",
]
"""A fault :class:`ChaosJudge` can inject (see :class:`FaultPlan` for what each one is)."""

ALL_FAULTS: Final[tuple[FaultKind, ...]] = get_args(FaultKind)
"""Every :data:`FaultKind`, the default of :attr:`FaultPlan.kinds`."""

# Faults about the reply's shape: they need a JSON schema in the request to be faults at all.
_SHAPE_FAULTS: Final = frozenset({"malformed_json", "schema_invalid"})

# Replies no JSON reader can take, as providers and the proxies in front of them send them.
_MALFORMED: Final = (
    "I would rate this answer as quite good.",
    "{'score': 0.8, 'reason': 'single quotes'}",
    '{"score": 0.8,, "reason": "double comma"}',
    "<html><body><h1>502 Bad Gateway</h1></body></html>",
    "```json\n{score: high}\n```",
)
# Tried in order; the first one the request's schema rejects is sent.
_SCHEMA_BREAKERS: Final[tuple[Any, ...]] = (
    [], {}, "", None, 0, True, {"score": "high"}, {"unexpected": [1, 2, 3]},
)


def _check_rate(_instance: object, _attribute: object, value: Any) -> None:
    if not is_number(value) or not math.isfinite(value) or not 0 <= value <= 1:
        raise misuse("FaultPlan.rate", value, "must be a number in [0, 1]")


def _to_kinds(value: Iterable[FaultKind]) -> tuple[FaultKind, ...]:
    if isinstance(value, str):
        # A lone kind is a common slip for a one-element tuple; take it as meant.
        return (cast(FaultKind, value),)
    return tuple(value)


def _check_kinds(_instance: object, _attribute: object, value: tuple[object, ...]) -> None:
    if not value:
        raise misuse("FaultPlan.kinds", value, "must name at least one fault kind")
    for kind in value:
        if kind not in ALL_FAULTS:
            raise misuse("FaultPlan.kinds", kind,
                          f"may only name known fault kinds ({', '.join(ALL_FAULTS)})")


def _check_seed(_instance: object, _attribute: object, value: object) -> None:
    if not is_int(value):
        raise misuse("FaultPlan.seed", value, "must be an int")


def _check_retry_after(_instance: object, _attribute: object, value: object) -> None:
    if not is_number(value) or not math.isfinite(value) or value < 0:
        raise misuse("FaultPlan.retry_after", value, "must be a finite number of seconds >= 0")


@final
@attrs.frozen(kw_only=True)
class FaultPlan:
    """Which faults a :class:`ChaosJudge` injects, how often, and from which seed.

    Each call is a fault with probability ``rate``; the fault's kind is drawn uniformly from
    ``kinds`` (repeat a kind to make it likelier: ``("rate_limit", "rate_limit", "timeout")``).
    Both draws come from a random source seeded with ``seed``, so the same plan makes the same
    calls fail the same way, every run.

    The kinds:

    - ``rate_limit``: HTTP 429 without ``Retry-After``;
    - ``rate_limit_retry_after``: 429 with ``Retry-After: <retry_after>`` in whole seconds
      (rounded up, as HTTP allows no fraction);
    - ``rate_limit_retry_after_ms``: 429 with ``retry-after-ms: <retry_after * 1000>``;
    - ``rate_limit_retry_after_date``: 429 with ``Retry-After`` as an HTTP date
      ``retry_after`` seconds after the judge's ``now()`` (rounded up to whole seconds);
    - ``server_error`` (500), ``unavailable`` (503), ``overloaded`` (529, Anthropic's
      ``overloaded_error``);
    - ``connection_reset`` (``ECONNRESET``, no status) and ``timeout`` (``ETIMEDOUT``);
    - ``malformed_json``: a reply no JSON reader takes (prose, single quotes, an HTML error
      page …);
    - ``schema_invalid``: valid JSON the request's schema rejects;
    - ``truncated``: the inner judge's reply cut in half, finish reason ``"length"``.

    ``malformed_json`` and ``schema_invalid`` only apply to requests with an output schema:
    for a plain-text request (a reason) they are left out of the draw.

    Args:
        rate: the share of calls that fail, in [0, 1].
        kinds: the faults to draw from (default: all of them).
        seed: the random seed.
        retry_after: the wait, in seconds, the ``Retry-After`` kinds ask for.

    >>> FaultPlan(rate=0.2, kinds=("rate_limit", "timeout"), seed=7).kinds
    ('rate_limit', 'timeout')
    >>> FaultPlan(rate=1.5)
    Traceback (most recent call last):
    ...
    scorecore.ScorerDefinitionError: FaultPlan.rate must be a number in [0, 1], got 1.5
    """

    rate: float = attrs.field(validator=_check_rate)
    kinds: tuple[FaultKind, ...] = attrs.field(
        default=ALL_FAULTS, converter=_to_kinds, validator=_check_kinds
    )
    seed: int = attrs.field(default=0, validator=_check_seed)
    retry_after: float = attrs.field(default=1.0, validator=_check_retry_after)


@final
@attrs.frozen(kw_only=True)
class InjectedFault:
    """One fault a :class:`ChaosJudge` injected.

    Attributes:
        call: the call's number, from 1.
        kind: the fault.
        error: the error returned, for the error kinds; ``None`` for replies.
        text: the reply sent, for ``malformed_json``, ``schema_invalid`` and ``truncated``.
    """

    call: int
    kind: FaultKind
    error: JudgeError | None = None
    text: str | None = None


def _error(
    status: int | None,
    *,
    message: str,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    type: str | None = None,
) -> JudgeError:
    return JudgeError(
        kind=kind_for(status, code, type), message=message, status=status,
        headers=dict(headers or {}), code=code, type=type,
    )


@final
class ChaosJudge:
    """Wraps any judge model and injects provider-like faults, deterministically from a seed.

    A call the plan picks as a fault is answered by the chaos judge itself (the inner judge is
    not called) except ``truncated``, which cuts the inner judge's reply (an inner failure is
    then returned as it is, and no fault is recorded). Every other call goes to the inner
    judge untouched. :attr:`injected` records each fault, so a test can check what its
    scorer survived.

    With a :class:`~scorecore_adapters.testing.VirtualClock` runtime, retries of thousands of
    faults take no real time: see ``docs/testing.md``, "A chaos storm".

    Args:
        inner: the judge that answers when no fault is injected.
        plan: which faults, how often, from which seed.
        now: the wall clock (seconds since the epoch) the ``Retry-After`` HTTP dates are
            written against; pass the same one to the retry processor (its ``now=``).

    >>> import anyio
    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> chaos = ChaosJudge(ScriptedJudge([{"score": 1}] * 10),
    ...                    plan=FaultPlan(rate=0.5, kinds=("unavailable",), seed=3))
    >>> req = JudgeRequest(messages=[JudgeMessage(role="user", content="Rate this")])
    >>> [anyio.run(chaos.generate, req).map(lambda r: r.text).value_or("503")
    ...  for _ in range(6)]
    ['503', '503', '{"score": 1}', '503', '503', '{"score": 1}']
    >>> [fault.call for fault in chaos.injected], chaos.counts()
    ([1, 2, 4, 5], {'unavailable': 4})
    """

    __slots__ = ("_calls", "_injected", "_inner", "_now", "_plan", "_random")

    def __init__(
        self,
        inner: JudgeModel,
        *,
        plan: FaultPlan,
        now: Callable[[], float] = time.time,
    ) -> None:
        if not callable(getattr(inner, "generate", None)):
            raise misuse("ChaosJudge.inner", inner, "must be a judge model (with generate)")
        if not isinstance(plan, FaultPlan):
            raise misuse("ChaosJudge.plan", plan, "must be a FaultPlan")
        if not callable(now):
            raise misuse("ChaosJudge.now", now, "must be callable")
        self._inner = inner
        self._plan = plan
        self._now = now
        # One stream, two draws per call whatever the outcome: call k's fate depends only on
        # the seed and k.
        self._random = random.Random(plan.seed)  # noqa: S311 - test data, not cryptography
        self._calls = 0
        self._injected: list[InjectedFault] = []

    @property
    def inner(self) -> JudgeModel:
        """The wrapped judge."""
        return self._inner

    @property
    def plan(self) -> FaultPlan:
        """The fault plan."""
        return self._plan

    @property
    def model_id(self) -> str:
        """The inner judge's model id."""
        return self._inner.model_id

    @property
    def provider(self) -> str:
        """The inner judge's provider."""
        return self._inner.provider

    @property
    def supports_structured_output(self) -> bool:
        """Whether the inner judge claims native structured output."""
        return self._inner.supports_structured_output

    @property
    def calls(self) -> int:
        """How many times :meth:`generate` was called."""
        return self._calls

    @property
    def injected(self) -> tuple[InjectedFault, ...]:
        """Every fault injected, in call order."""
        return tuple(self._injected)

    def counts(self) -> dict[FaultKind, int]:
        """How many faults of each kind were injected (kinds never injected are left out)."""
        return dict(Counter(fault.kind for fault in self._injected))

    def _draw(self, request: JudgeRequest) -> FaultKind | None:
        chance = self._random.random()
        pick = self._random.random()
        kinds = self._plan.kinds
        if request.output_schema is None:
            kinds = tuple(k for k in kinds if k not in _SHAPE_FAULTS)
        if chance >= self._plan.rate or not kinds:
            return None
        return kinds[min(int(pick * len(kinds)), len(kinds) - 1)]

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Answer with a fault when the plan says so, else with the inner judge's reply."""
        self._calls += 1
        call = self._calls
        kind = self._draw(request)
        if kind is None:
            return await self._inner.generate(request)
        if kind == "truncated":
            return await self._truncated(call, request)
        await anyio.lowlevel.checkpoint()
        if kind in _SHAPE_FAULTS:
            text = self._bad_reply(kind, call, request)
            self._injected.append(InjectedFault(call=call, kind=kind, text=text))
            return Success(JudgeResponse(text=text, finish_reason="stop",
                                         model_id=self.model_id))
        error = self._fault_error(kind, call)
        self._injected.append(InjectedFault(call=call, kind=kind, error=error))
        return Failure(error)

    async def _truncated(
        self, call: int, request: JudgeRequest
    ) -> Result[JudgeResponse, JudgeError]:
        answer = await self._inner.generate(request)
        if not isinstance(answer, Success):
            return answer
        response = answer.unwrap()
        text = response.text[: len(response.text) // 2]
        self._injected.append(InjectedFault(call=call, kind="truncated", text=text))
        return Success(attrs.evolve(response, text=text, finish_reason="length"))

    def _bad_reply(self, kind: FaultKind, call: int, request: JudgeRequest) -> str:
        if kind == "schema_invalid" and request.output_schema is not None:
            validator = Draft202012Validator(request.output_schema)
            for candidate in _SCHEMA_BREAKERS:
                if not validator.is_valid(candidate):
                    return json.dumps(candidate)
        # A schema that accepts every JSON value can only be broken by text that is not JSON.
        return _MALFORMED[call % len(_MALFORMED)]

    def _fault_error(self, kind: FaultKind, call: int) -> JudgeError:
        message = f"injected by ChaosJudge at call {call}: {kind}"
        wait = self._plan.retry_after
        if kind == "rate_limit":
            return _error(429, message=message, code="rate_limit_exceeded")
        if kind == "rate_limit_retry_after":
            return _error(429, message=message, code="rate_limit_exceeded",
                          headers={"retry-after": str(math.ceil(wait))})
        if kind == "rate_limit_retry_after_ms":
            return _error(429, message=message, code="rate_limit_exceeded",
                          headers={"retry-after-ms": str(math.ceil(wait * 1000))})
        if kind == "rate_limit_retry_after_date":
            at = formatdate(math.ceil(self._now() + wait), usegmt=True)
            return _error(429, message=message, code="rate_limit_exceeded",
                          headers={"retry-after": at})
        if kind == "server_error":
            return _error(500, message=message, type="server_error")
        if kind == "unavailable":
            return _error(503, message=message, type="service_unavailable")
        if kind == "overloaded":
            return _error(529, message=message, type="overloaded_error")
        if kind == "connection_reset":
            return _error(None, message=message, code="ECONNRESET")
        return _error(None, message=message, code="ETIMEDOUT")

    def __repr__(self) -> str:
        return (
            f"ChaosJudge({self._inner!r}, plan={self._plan!r}, calls={self._calls}, "
            f"injected={len(self._injected)})"
        )


if TYPE_CHECKING:

    def _is_a_judge_model(judge: ChaosJudge) -> JudgeModel:
        # mypy --strict checks here that the class keeps the JudgeModel port.
        return judge
