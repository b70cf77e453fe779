"""Judge economics: prices, a budget, and the meter every judge call of a run goes through.

A :class:`JudgeMeter` (carried by :class:`~scorecore.Runtime`) brings a run its
:class:`~scorecore.judge.economics.JudgeCache`, its :class:`Pricing`, its :class:`Budget` and the
trial index. Copies made with :meth:`JudgeMeter.for_trial` share one :class:`JudgeLedger`: what a
batch spent, what it saved, and the calls in flight.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar, final

import anyio
import attrs

from scorecore._core._cache import JudgeCache, SchemaKey, request_key
from scorecore._core._causes import BudgetExhausted
from scorecore._core._checks import check_count, is_int, is_number, misuse
from scorecore._core._judge import (
    DEFAULT_OUTPUT_CAP,
    JudgeModel,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    model_default_cap,
)
from scorecore._core._reprs import short_repr

__all__ = [
    "Budget",
    "BudgetWarning",
    "JudgeLedger",
    "JudgeMeter",
    "ModelPrice",
    "Pricing",
    "current_cache_key",
]

_R = TypeVar("_R")
_NOTHING_SPENT = JudgeUsage(input_tokens=0, output_tokens=0, total_tokens=0)
_UNKNOWN_USAGE = JudgeUsage()
_USAGE_FIELDS = tuple(f.name for f in attrs.fields(JudgeUsage))
# No judge reply has a billion tokens: a count past this is a broken report, not a cost.
MAX_CREDIBLE_TOKENS = 1_000_000_000
_MILLION = 1_000_000.0
# Every message costs a few tokens of framing on top of its text (role, separators).
_MESSAGE_OVERHEAD_TOKENS = 8


def _price_field(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None and attribute.name == "cached_input":
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:  # type: ignore[arg-type, operator]
        raise ValueError(
            f"ModelPrice.{attribute.name} must be a finite number >= 0 (USD per million "
            f"tokens), got {short_repr(value)}"
        )


def _discount_field(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0 <= value <= 1:  # type: ignore[operator]
        raise ValueError(
            f"ModelPrice.{attribute.name} must be a number from 0 to 1 (the share taken off "
            f"batch API calls), got {short_repr(value)}"
        )


def usage_problem(usage: object) -> str | None:
    """Why a reply's token counts cannot be charged, or ``None`` when they can.

    Every count must be ``None`` (unknown) or a whole number (an ``int``, not a ``bool``) from 0
    to a billion. A reply that breaks this is a *usage error*: the meter charges it at its
    worst case and never credits anything for it.

    >>> usage_problem(JudgeUsage(input_tokens=10, output_tokens=2)) is None
    True
    >>> usage_problem(JudgeUsage(input_tokens=-5, output_tokens=2))
    'input_tokens=-5'
    """
    if not isinstance(usage, JudgeUsage):
        return None  # no counts at all: unknown, charged at the worst case like None counts
    for name in _USAGE_FIELDS:
        value = getattr(usage, name)
        if value is None:
            continue
        if not is_int(value) or not 0 <= value <= MAX_CREDIBLE_TOKENS:
            return f"{name}={short_repr(value)}"
    return None


@final
@attrs.frozen(kw_only=True)
class ModelPrice:
    """One model's prices in USD per million tokens.

    ``cached_input`` prices input tokens the provider served from its prompt cache (the
    usage's ``cached_input_tokens``); without it they cost ``input``. ``batch_discount`` is
    the share taken off every price for calls made through the provider's batch API (a judge
    model whose ``batch_api`` is true): 0.5 by default, OpenAI's and Anthropic's batch price.

    >>> ModelPrice(input=0.15, output=0.60).cost(JudgeUsage(input_tokens=1000, output_tokens=100))
    0.00021
    >>> ModelPrice(input=0.15, output=0.60).for_batch().cost(
    ...     JudgeUsage(input_tokens=1000, output_tokens=100))
    0.000105
    """

    input: float = attrs.field(validator=_price_field)
    output: float = attrs.field(validator=_price_field)
    cached_input: float | None = attrs.field(default=None, validator=_price_field)
    batch_discount: float = attrs.field(default=0.5, validator=_discount_field)

    def for_batch(self) -> ModelPrice:
        """The prices of a call made through the batch API (``batch_discount`` taken off)."""
        keep = 1.0 - self.batch_discount
        return ModelPrice(
            input=self.input * keep, output=self.output * keep,
            cached_input=None if self.cached_input is None else self.cached_input * keep,
            batch_discount=0.0,
        )

    def cost(self, usage: JudgeUsage) -> float | None:
        """The USD cost of ``usage``, or ``None`` when its input or output count is unknown."""
        if usage.input_tokens is None or usage.output_tokens is None:
            return None
        cached = min(usage.cached_input_tokens or 0, usage.input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        total = (
            (usage.input_tokens - cached) * self.input
            + cached * cached_price
            + usage.output_tokens * self.output
        )
        return round(total / _MILLION, 12)


def _prices(value: Mapping[Any, Any]) -> Mapping[str, ModelPrice]:
    out: dict[str, ModelPrice] = {}
    items: dict[object, object] = dict(value)
    for model_id, price in items.items():
        if not isinstance(model_id, str) or not isinstance(price, ModelPrice):
            raise TypeError(
                f"Pricing.models maps model ids (str) to ModelPrice, got "
                f"{short_repr(model_id)}: {short_repr(price)}"
            )
        out[model_id] = price
    return out


@final
@attrs.frozen(kw_only=True)
class Pricing:
    """What each judge model costs, by model id (the ``JudgeModel.model_id``).

    >>> pricing = Pricing.from_mapping({"gpt-4o-mini": {"input": 0.15, "output": 0.6}})
    >>> pricing.cost("gpt-4o-mini", JudgeUsage(input_tokens=2_000, output_tokens=500))
    0.0006
    >>> pricing.cost("unpriced-model", JudgeUsage(input_tokens=1, output_tokens=1)) is None
    True
    """

    models: Mapping[str, ModelPrice] = attrs.field(factory=dict, converter=_prices)

    def price(self, model_id: str, *, batch: bool = False) -> ModelPrice | None:
        """The model's price (its batch API price with ``batch=True``), or ``None`` when it
        has none."""
        price = self.models.get(model_id)
        return price.for_batch() if price is not None and batch else price

    def cost(self, model_id: str, usage: JudgeUsage, *, batch: bool = False) -> float | None:
        """The USD cost of ``usage`` on ``model_id`` (through the batch API with
        ``batch=True``); ``None`` when unpriced or unknown."""
        price = self.price(model_id, batch=batch)
        return None if price is None else price.cost(usage)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Pricing:
        """Read prices from parsed TOML or JSON.

        Either ``{"models": {id: price}}`` or ``{id: price}``, where a price is a mapping with
        ``input``, ``output`` and optionally ``cached_input`` (USD per million tokens) and
        ``batch_discount`` (the share taken off batch API calls, 0 to 1; default 0.5).

        Raises:
            ValueError: a price is missing a field, has an unknown one, or a bad number; the
                message names the model and the field.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"pricing must be a mapping of model ids, got {short_repr(data)}")
        models = data.get("models", data) if set(data) <= {"models"} else data
        if not isinstance(models, Mapping):
            raise TypeError(f"pricing.models must be a mapping, got {short_repr(models)}")
        out: dict[str, ModelPrice] = {}
        for model_id, raw in models.items():
            where = f"pricing.models[{short_repr(model_id)}]"
            if not isinstance(raw, Mapping):
                raise TypeError(f"{where} must be a mapping with input and output prices, "
                                 f"got {short_repr(raw)}")
            unknown = set(raw) - {"input", "output", "cached_input", "batch_discount"}
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(map(str, unknown))}; "
                                 f"expected input, output, cached_input, batch_discount")
            missing = {"input", "output"} - set(raw)
            if missing:
                raise ValueError(f"{where}: missing {sorted(missing)} (USD per million tokens)")
            try:
                out[str(model_id)] = ModelPrice(**{str(k): v for k, v in raw.items()})
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        return cls(models=out)


def _limit(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    field = f"Budget.{attribute.name}"
    if attribute.name == "max_tokens":
        if not is_int(value) or value < 0:
            raise misuse(field, value, "must be an int >= 0 or None")
        return
    try:
        ok = is_number(value) and math.isfinite(value) and value >= 0
    except OverflowError:  # an int too large for a float
        ok = False
    if not ok:
        raise misuse(field, value, "must be a finite number >= 0 or None")


def _positive_int(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    check_count(f"Budget.{attribute.name}", value, minimum=1)


def _mode(_inst: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in ("hard", "soft"):
        raise misuse("Budget.mode", value, "must be 'hard' or 'soft'")


@final
@attrs.frozen(kw_only=True)
class Budget:
    """A spending limit for a batch's judge calls.

    In ``"hard"`` mode a judge call starts only if what was spent, plus the worst case of the
    calls in flight, plus this call's worst case stays within every limit. A call that fits
    once the calls in flight settle waits for them (in the order the calls asked); one that
    cannot fit even with nothing in flight is refused at once and fails its run with cause
    :class:`BudgetExhausted` (never a score). So the spend and refusals are those of one call
    at a time, whatever the concurrency. ``"soft"`` mode warns once (:class:`BudgetWarning`)
    and goes on.

    A call's worst case: one token per byte of its messages (and of a native schema) plus a
    few per message, and its output cap (``ModelSettings.output_cap``, exactly what the
    adapter sends: the step's cap, else the run's ``max_output_tokens``, else the model's
    default, else 1,024) — ``worst_case_output_tokens`` only when ``extra`` sets a cap that is
    not a whole number.

    >>> Budget(max_cost_usd=2.5).mode
    'hard'
    """

    max_cost_usd: float | None = attrs.field(default=None, validator=_limit)
    max_tokens: int | None = attrs.field(default=None, validator=_limit)
    mode: Literal["hard", "soft"] = attrs.field(default="hard", validator=_mode)
    worst_case_output_tokens: int = attrs.field(default=4096, validator=_positive_int)


class BudgetWarning(UserWarning):
    """A soft :class:`Budget` was passed; the batch goes on (warned once per batch)."""


@attrs.define
class _Flight:
    done: anyio.Event
    response: JudgeResponse | None = None


@final
@attrs.define(eq=False)
class JudgeLedger:
    """What a batch's judge calls spent and saved so far (shared by a meter's trial copies).

    Attributes:
        spent_usd: USD charged for priced calls (a reply without token counts is charged at
            its worst case).
        spent_tokens: input plus output tokens of the replies (worst case when unknown).
        saved_usd: what the cache hits would have cost, plus what batch API calls saved
            against their direct price.
        batch_saved_usd: the part of ``saved_usd`` batch API calls saved.
        model_calls: judge calls started through the meter (an attempt with its retries).
        cache_hits: replies read from the cache or shared with an identical call in flight.
        cache_misses: lookups that had to ask the judge.
        refused: calls a hard budget refused.
        usage_errors: replies (or cache entries) whose token counts were negative, not whole
            numbers or absurd (see ``usage_problem``): charged at their worst case, never
            credited.
        soft_limit_passed: how a soft budget was first passed (the line its
            :class:`BudgetWarning` carries); ``None`` while the batch is within it.
        overrun: how a reply first reported more output tokens than its cap allowed (it is
            charged what it reports — a batch API reply, its reserve and a usage error — and
            a hard budget starts no call after it); ``None`` while every reply kept to its
            cap.
    """

    spent_usd: float = 0.0
    spent_tokens: int = 0
    saved_usd: float = 0.0
    batch_saved_usd: float = 0.0
    model_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    refused: int = 0
    usage_errors: int = 0
    soft_limit_passed: str | None = None
    overrun: str | None = None
    _reserved_usd: float = 0.0
    _reserved_tokens: int = 0
    _flights: dict[str, _Flight] = attrs.field(factory=dict)
    # How many calls hold a reservation; the calls waiting for a hard budget, in the order
    # they asked (see _decide); and the event they wait on, set (and replaced) whenever a call
    # settles or leaves the queue.
    _in_flight: int = attrs.field(default=0, init=False, repr=False)
    _turns: list[object] = attrs.field(factory=list, init=False, repr=False)
    _settled: anyio.Event | None = attrs.field(default=None, init=False, repr=False)

    def _wake(self) -> None:
        event, self._settled = self._settled, None
        if event is not None:
            event.set()

    async def _changed(self) -> None:
        if self._settled is None:
            self._settled = anyio.Event()
        await self._settled.wait()

    @property
    def in_flight_usd(self) -> float:
        """The worst-case cost of the calls in flight."""
        return max(0.0, self._reserved_usd)

    @property
    def in_flight_tokens(self) -> int:
        """The worst-case tokens of the calls in flight."""
        return max(0, self._reserved_tokens)


def _cap(_inst: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not is_int(value) or value < 1):
        raise misuse("JudgeMeter.max_output_tokens", value, "must be an int >= 1 or None")


def default_cap(meter: JudgeMeter | None, model: object) -> int:
    """The output cap of a step that sets none: the run's, else the model's, else 1,024."""
    if meter is not None and meter.max_output_tokens is not None:
        return meter.max_output_tokens
    own = model_default_cap(model)
    return DEFAULT_OUTPUT_CAP if own is None else own


@final
@attrs.frozen(kw_only=True)
class JudgeMeter:
    """What a run's judge calls go through: a cache, prices, a budget, the trial index.

    ``max_output_tokens`` is the output cap of the run's steps that set none (instead of the
    judge model's default, or 1,024).

    Give it to a run with ``Runtime(meter=...)`` (``run_evals`` builds one from its
    ``cache``, ``pricing``, ``budget`` and ``trials``). Copies from :meth:`for_trial` share the
    ledger, so a budget holds across every item and trial of a batch.

    >>> import anyio
    >>> from scorecore import JudgeConfig, Runtime, ScorePromptStep, create_scorer
    >>> from scorecore_adapters.cache import MemoryJudgeCache
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"score": 1.0}])
    >>> scorer = create_scorer(
    ...     id="polite", description="Is it polite?",
    ...     judge=JudgeConfig(model=judge, instructions="You grade politeness."),
    ... ).generate_score(ScorePromptStep(description="grade", create_prompt=lambda c: c.run.output))
    >>> meter = JudgeMeter(cache=MemoryJudgeCache())
    >>> async def twice():
    ...     for _ in range(2):
    ...         runtime = Runtime(meter=meter)
    ...         result = await scorer.run(input="hi", output="Thank you!", runtime=runtime)
    ...     return result.unwrap().score, len(judge.requests), meter.ledger.cache_hits
    >>> anyio.run(twice)
    (1.0, 1, 1)
    """

    cache: JudgeCache | None = None
    pricing: Pricing | None = None
    budget: Budget | None = None
    trial: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    max_output_tokens: int | None = attrs.field(default=None, validator=_cap)
    ledger: JudgeLedger = attrs.field(factory=JudgeLedger, eq=False)

    def for_trial(self, trial: int) -> JudgeMeter:
        """The same meter (same cache, prices, budget and ledger) for another trial index."""
        return attrs.evolve(self, trial=trial)


def _worst_tokens(request: JudgeRequest, budget: Budget) -> tuple[int, int]:
    text_bytes = sum(len(m.content.encode("utf-8", "surrogatepass")) for m in request.messages)
    if request.native_schema and request.output_schema is not None:
        text_bytes += len(json.dumps(request.output_schema, default=repr).encode())
    input_tokens = text_bytes + _MESSAGE_OVERHEAD_TOKENS * (len(request.messages) + 1)
    cap = request.settings.output_cap  # what the adapters send
    return input_tokens, budget.worst_case_output_tokens if cap is None else cap


@attrs.frozen
class _Reservation:
    """A call's worst case: USD (0 without a price), tokens, and its output cap."""

    usd: float
    tokens: int
    output_tokens: int
    priced: bool


_DEFAULT_BUDGET = Budget()


def _worst_case(
    budget: Budget, pricing: Pricing | None, model_id: str, request: JudgeRequest,
    *, batch: bool = False,
) -> _Reservation:
    worst_in, worst_out = _worst_tokens(request, budget)
    price = pricing.price(model_id, batch=batch) if pricing is not None else None
    usd = 0.0 if price is None else (worst_in * price.input + worst_out * price.output) / _MILLION
    return _Reservation(usd=usd, tokens=worst_in + worst_out, output_tokens=worst_out,
                        priced=price is not None)


def _soft_pass(ledger: JudgeLedger, line: str) -> None:
    if ledger.soft_limit_passed is None:
        ledger.soft_limit_passed = f"{line}; the budget is soft, so the batch goes on"
        # Warnings turned into errors must not make the run raise; the ledger keeps the line.
        with contextlib.suppress(BudgetWarning):
            warnings.warn(ledger.soft_limit_passed, BudgetWarning, stacklevel=3)


def _note_overrun(
    ledger: JudgeLedger, budget: Budget, model_id: str, usage: object, reservation: _Reservation,
) -> None:
    """A reply past its cap: a hard budget stops at once, a soft one warns (once)."""
    output = usage.output_tokens if isinstance(usage, JudgeUsage) else None
    if output is None or output <= reservation.output_tokens:
        return
    line = (f"judge model {model_id!r} answered {output:,} output tokens, past its cap of "
            f"{reservation.output_tokens:,}")
    if budget.mode == "soft":
        _soft_pass(ledger, line)
    elif ledger.overrun is None:
        ledger.overrun = line


def _past_cap(usage: object, reservation: _Reservation) -> bool:
    """Whether a reply reports more output tokens than its cap allowed."""
    output = usage.output_tokens if isinstance(usage, JudgeUsage) else None
    return output is not None and output > reservation.output_tokens


def _refusal(
    ledger: JudgeLedger, budget: Budget, worst: _Reservation, model_id: str, *,
    counting_in_flight: bool,
) -> BudgetExhausted | None:
    """Why ``worst`` does not fit the budget now (``counting_in_flight``) or even once every
    call in flight has settled; ``None`` when it fits."""
    if budget.max_tokens is not None and (
        ledger.spent_tokens + (ledger.in_flight_tokens if counting_in_flight else 0)
        + worst.tokens > budget.max_tokens
    ):
        return BudgetExhausted(
            limit="max_tokens", limit_value=budget.max_tokens, spent=ledger.spent_tokens,
            in_flight=ledger.in_flight_tokens, needed=worst.tokens, model_id=model_id,
            output_tokens=worst.output_tokens,
        )
    if budget.max_cost_usd is not None and (
        not worst.priced
        or ledger.spent_usd + (ledger.in_flight_usd if counting_in_flight else 0.0)
        + worst.usd > budget.max_cost_usd
    ):
        return BudgetExhausted(
            limit="max_cost_usd", limit_value=budget.max_cost_usd, spent=ledger.spent_usd,
            in_flight=ledger.in_flight_usd, needed=worst.usd if worst.priced else None,
            model_id=model_id, output_tokens=worst.output_tokens,
        )
    return None


def _reserve(ledger: JudgeLedger, worst: _Reservation) -> _Reservation:
    ledger._reserved_usd += worst.usd
    ledger._reserved_tokens += worst.tokens
    ledger._in_flight += 1
    return worst


def _release(ledger: JudgeLedger, reservation: _Reservation) -> None:
    """A call in flight settled (answered, failed or cancelled): its reserve is free again,
    and the calls waiting for the budget look again."""
    ledger._in_flight -= 1
    if ledger._in_flight == 0:
        # Exactly nothing in flight: no float residue of the sums may refuse a later call.
        ledger._reserved_usd, ledger._reserved_tokens = 0.0, 0
    else:
        ledger._reserved_usd -= reservation.usd
        ledger._reserved_tokens -= reservation.tokens
    ledger._wake()


def _decide(
    ledger: JudgeLedger, budget: Budget, worst: _Reservation, model_id: str, *, first: bool,
) -> _Reservation | BudgetExhausted | None:
    """A hard budget's decision on a call: admitted (reserved), refused, or ``None``: wait
    until the calls in flight settle.

    A call that cannot fit even with nothing in flight is refused at once, wherever it waits
    (what was spent only grows, so it never could). Otherwise the first waiting call is
    admitted when it fits beside the calls in flight; the others wait behind it, so calls are
    admitted in the order they asked, and every decision is the one a single call at a time
    would get: the spend and refusals do not depend on the concurrency.
    """
    if ledger.overrun is not None:
        ledger.refused += 1
        by_cost = budget.max_cost_usd is not None
        return BudgetExhausted(
            limit="max_cost_usd" if by_cost else "max_tokens",
            limit_value=(budget.max_cost_usd if by_cost else budget.max_tokens) or 0,
            spent=ledger.spent_usd if by_cost else ledger.spent_tokens,
            in_flight=ledger.in_flight_usd if by_cost else ledger.in_flight_tokens,
            needed=worst.usd if worst.priced or not by_cost else None, model_id=model_id,
            output_tokens=worst.output_tokens, overrun=ledger.overrun,
        )
    never = _refusal(ledger, budget, worst, model_id, counting_in_flight=False)
    if never is not None:
        ledger.refused += 1
        return never
    if not first:
        return None
    if _refusal(ledger, budget, worst, model_id, counting_in_flight=True) is None:
        return _reserve(ledger, worst)
    return None  # fits once the calls in flight (there are some) settle


async def _admit(
    ledger: JudgeLedger, budget: Budget, pricing: Pricing | None, model_id: str,
    request: JudgeRequest, *, batch: bool = False,
) -> _Reservation | BudgetExhausted:
    """Reserve a call's worst case: a hard budget waits its turn (see :func:`_decide`), a
    soft one never waits and warns once when passed."""
    worst = _worst_case(budget, pricing, model_id, request, batch=batch)
    if budget.mode == "soft":
        refusal = _refusal(ledger, budget, worst, model_id, counting_in_flight=True)
        if refusal is not None:
            _soft_pass(ledger, refusal.describe())
        return _reserve(ledger, worst)
    turn = object()
    ledger._turns.append(turn)
    try:
        while True:
            decided = _decide(ledger, budget, worst, model_id, first=ledger._turns[0] is turn)
            if decided is not None:
                return decided
            await ledger._changed()
    finally:
        # Admitted, refused or cancelled while waiting: the next call's turn.
        ledger._turns.remove(turn)
        ledger._wake()


# The cache key of the judge call the running task is making (set around the model call only).
_CALL_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "scorecore_judge_call_key", default=None
)


def current_cache_key() -> str | None:
    """The judge cache key of the call the running task is making, for a judge model to read
    inside ``generate``; ``None`` outside a metered call or when the run has no cache.

    A batch judge journals each request under this key (it holds the trial index and the
    model's identity), so a process started again knows which requests it already submitted.

    >>> current_cache_key() is None
    True
    """
    return _CALL_KEY.get()


def _spent_nothing(response: JudgeResponse) -> JudgeResponse:
    """The reply with no tokens spent (``attrs.evolve(response, usage=...)``, spelt out: the
    warm path)."""
    return JudgeResponse(
        text=response.text, usage=_NOTHING_SPENT, finish_reason=response.finish_reason,
        model_id=response.model_id, structured_output=response.structured_output,
    )


# A model's ``cache_identity`` that raised or is not a ``str``: a string no model's identity
# equals by accident (the meter compares it by identity, and never puts it in a key).
_UNREADABLE = "\x00unreadable cache identity"


def _is_batch(model: object) -> bool:
    """Whether the model answers through a batch API (its optional ``batch_api`` is true)."""
    try:
        return getattr(model, "batch_api", False) is True
    except Exception:  # noqa: BLE001 - a user's model is a boundary: unreadable is "no"
        return False


def _cache_identity(model: object) -> str | None:
    try:
        identity = getattr(model, "cache_identity", None)
    except Exception:  # noqa: BLE001 - a user's model is a boundary: unreadable, not a crash
        return _UNREADABLE
    if identity is None or isinstance(identity, str):
        return identity
    return _UNREADABLE


@final
class MeteredExecution:
    """One judge execution's view of the meter (internal; used by the judge loop only).

    ``call`` wraps each attempt's model call (cache, single flight, budget, charging);
    ``store`` keeps the reply that passed validation; ``settlement`` gives the cost and cache
    counts of the execution's telemetry.
    """

    __slots__ = ("_batch", "_candidate", "_cost", "_cost_known", "_hits", "_identity",
                 "_meter", "_misses", "_model", "_saved")

    def __init__(self, meter: JudgeMeter | None, model: JudgeModel) -> None:
        self._meter = meter
        self._model = model
        self._identity = (
            _cache_identity(model) if meter is not None and meter.cache is not None else None
        )
        self._batch = _is_batch(model)
        self._candidate: tuple[str, JudgeResponse] | None = None
        self._hits = 0
        self._misses = 0
        self._cost = 0.0
        self._cost_known = True
        self._saved = 0.0

    def _price_of(self, usage: JudgeUsage) -> float | None:
        pricing = self._meter.pricing if self._meter is not None else None
        if pricing is None or not isinstance(usage, JudgeUsage):
            return None
        return pricing.cost(self._model.model_id, usage, batch=self._batch)

    def _batch_saving(self, usage: JudgeUsage) -> float | None:
        """What a batch API call saved against the same call made directly."""
        pricing = self._meter.pricing if self._meter is not None else None
        if not self._batch or pricing is None or not isinstance(usage, JudgeUsage):
            return None
        full = pricing.cost(self._model.model_id, usage)
        paid = pricing.cost(self._model.model_id, usage, batch=True)
        return None if full is None or paid is None else full - paid

    async def _lookup(self, cache: JudgeCache, key: str) -> JudgeResponse | None:
        try:
            found = await cache.get(key)
        except Exception:  # noqa: BLE001 - a user's cache is a boundary: a raising get is a miss
            return None
        return found if isinstance(found, JudgeResponse) else None

    def _hit(self, ledger: JudgeLedger, response: JudgeResponse) -> JudgeResponse:
        self._hits += 1
        ledger.cache_hits += 1
        if usage_problem(response.usage) is not None:
            # An edited (or damaged) entry: it saves nothing rather than a made-up amount.
            ledger.usage_errors += 1
            return _spent_nothing(response)
        saved = self._price_of(response.usage)
        if saved is not None:
            self._saved += saved
            ledger.saved_usd += saved
        # A hit spends nothing: the execution's usage counts only tokens paid for now.
        return _spent_nothing(response)

    async def call(
        self, request: JudgeRequest, call: Callable[[], Awaitable[_R]],
        schema_key: SchemaKey | None = None,
    ) -> _R | JudgeResponse | BudgetExhausted:
        """Answer from the cache, or wait for an identical call in flight, or call.

        ``schema_key`` is the request's output schema's part of the cache key, written when
        the step was added (written now when not given).
        """
        meter = self._meter
        if meter is None:
            return await call()
        ledger = meter.ledger
        identity = self._identity
        # A model whose cache identity cannot be read never shares (or fills) the cache.
        cache = None if identity is _UNREADABLE else meter.cache
        key = ""
        if cache is not None:
            model = self._model
            key = request_key(
                request, provider=model.provider, model_id=model.model_id, trial=meter.trial,
                identity=identity,
                schema=SchemaKey(request.output_schema) if schema_key is None else schema_key,
            )
            while True:
                found = await self._lookup(cache, key)
                if found is not None:
                    return self._hit(ledger, found)
                flight = ledger._flights.get(key)
                if flight is None:
                    break
                await flight.done.wait()
                if flight.response is not None:
                    return self._hit(ledger, flight.response)
                # The call we waited for failed: look again, then ask the judge ourselves.
            self._misses += 1
            ledger.cache_misses += 1
        reservation: _Reservation | None = None
        if meter.budget is not None:
            admitted = await _admit(ledger, meter.budget, meter.pricing,
                                    self._model.model_id, request, batch=self._batch)
            if isinstance(admitted, BudgetExhausted):
                return admitted
            reservation = admitted
        flight = _Flight(done=anyio.Event())
        if cache is not None:
            ledger._flights[key] = flight
        ledger.model_calls += 1
        token = _CALL_KEY.set(key or None)
        try:
            outcome: _R | JudgeResponse = await call()
            if isinstance(outcome, JudgeResponse):
                outcome = flight.response = self._received(meter, request, outcome, reservation)
                if cache is not None:
                    self._candidate = (key, outcome)
        finally:
            _CALL_KEY.reset(token)
            if reservation is not None:
                _release(ledger, reservation)
            if cache is not None and ledger._flights.get(key) is flight:
                del ledger._flights[key]
            flight.done.set()
        return outcome

    def _received(
        self, meter: JudgeMeter, request: JudgeRequest, response: JudgeResponse,
        reservation: _Reservation | None,
    ) -> JudgeResponse:
        """Charge a reply; a reply with a usage error comes back with unknown counts."""
        ledger = meter.ledger
        model_id = self._model.model_id
        worst = reservation or _worst_case(
            meter.budget or _DEFAULT_BUDGET, meter.pricing, model_id, request,
            batch=self._batch)
        reported = response.usage
        bad = usage_problem(reported) is not None
        past_cap = not bad and self._batch and _past_cap(reported, worst)
        if past_cap:
            # A provider batch's replies all come back together, long after the budget
            # admitted every one of them: stopping the budget at the first reply past its cap
            # bounds nothing, so a batch reply is charged no more than its reserve (its prompt
            # and output cap) and its count is a usage error. (A direct call's overrun is
            # charged what it reports: at most the calls in flight pass their reserve.)
            bad = True
        if bad:
            # A usage error of this reply: its counts are unknown, so it is charged at its
            # worst case and nothing downstream sums the bad numbers.
            ledger.usage_errors += 1
            response = attrs.evolve(response, usage=_UNKNOWN_USAGE)
        self._charge(ledger, response, worst)
        if reservation is not None and meter.budget is not None:
            # A batch reply past its cap still stops a hard budget (its later calls).
            _note_overrun(ledger, meter.budget, model_id,
                          reported if past_cap else response.usage, reservation)
        return response

    def _charge(
        self, ledger: JudgeLedger, response: JudgeResponse, reservation: _Reservation
    ) -> None:
        # A hand-written model may break the contract and return no JudgeUsage.
        usage: object = response.usage
        if not isinstance(usage, JudgeUsage):
            usage = JudgeUsage()
        cost = self._price_of(usage)
        if cost is None:
            self._cost_known = False
        else:
            self._cost += cost
        saving = self._batch_saving(usage)
        if saving is not None:
            self._saved += saving
            ledger.saved_usd += saving
            ledger.batch_saved_usd += saving
        known_tokens = usage.input_tokens is not None and usage.output_tokens is not None
        if known_tokens:
            ledger.spent_tokens += (usage.input_tokens or 0) + (usage.output_tokens or 0)
        else:
            ledger.spent_tokens += reservation.tokens
        ledger.spent_usd += reservation.usd if cost is None else cost

    @property
    def storing(self) -> bool:
        """Whether :meth:`store` has a reply to keep (a cache hit has none)."""
        return self._candidate is not None

    async def store(self) -> None:
        """Keep the last reply the judge gave (it passed validation) in the cache."""
        meter = self._meter
        if meter is None or meter.cache is None or self._candidate is None:
            return
        key, response = self._candidate
        self._candidate = None
        # A user's cache is a boundary: a raising put only loses the entry.
        with contextlib.suppress(Exception):
            await meter.cache.put(key, response)

    def settlement(self) -> tuple[float | None, float | None, int, int]:
        """The execution's ``cost_usd``, ``saved_usd``, ``cache_hits`` and ``cache_misses``."""
        meter = self._meter
        if meter is None:
            return None, None, 0, 0
        priced = meter.pricing is not None and meter.pricing.price(self._model.model_id)
        return (
            round(self._cost, 12) if priced and self._cost_known else None,
            round(self._saved, 12) if priced else None,
            self._hits,
            self._misses,
        )


_CENT_TENTH = 0.001
_MAX_DECIMALS = 12


def format_usd(value: float) -> str:
    """``value`` dollars as printed in reports: four decimals, and for an amount below a tenth
    of a cent as many as two significant digits need (a $0.000001 limit is not "$0.0000").

    >>> format_usd(0.42), format_usd(0.00042), format_usd(0.000001), format_usd(0.0)
    ('$0.4200', '$0.00042', '$0.000001', '$0.0000')
    """
    size = abs(value)
    if size == 0 or size >= _CENT_TENTH or not math.isfinite(size):
        return f"${value:.4f}"
    decimals = min(_MAX_DECIMALS, 1 - math.floor(math.log10(size)))
    text = f"{value:.{decimals}f}"
    whole, _, fraction = text.partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(4, '0')}"

