"""Spending limits: the :class:`Budget`, the :class:`JudgeLedger` a batch's calls share, and the
admission of a call (its worst case reserved, refused, or waiting its turn).
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from typing import Literal, TypeVar, final

import anyio
import attrs

from scorecore._core._causes import BudgetExhausted
from scorecore._core._judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore._core._pricing import MILLION, Pricing
from scorecore.validators import check_count, is_int, is_number, misuse

__all__ = ["Budget", "BudgetWarning", "JudgeLedger"]  # the rest is internal: the meter admits calls

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

# Every message costs a few tokens of framing on top of its text (role, separators).
_MESSAGE_OVERHEAD_TOKENS = 8


def _limit(_inst: object, attribute: attrs.Attribute[_F], value: _F) -> None:
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


def _mode(_inst: object, _attribute: attrs.Attribute[_F], value: _F) -> None:
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
    worst_case_output_tokens: int = attrs.field(default=4096)

    @worst_case_output_tokens.validator
    def _check_worst_case(self, attribute: attrs.Attribute[int], value: object) -> None:
        check_count(f"Budget.{attribute.name}", value, minimum=1)


class BudgetWarning(UserWarning):
    """A soft :class:`Budget` was passed; the batch goes on (warned once per batch)."""


@attrs.define
class Flight:
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
    # The calls in flight by cache key, which an identical call waits for instead of asking.
    _flights: dict[str, Flight] = attrs.field(factory=dict, init=False, repr=False)
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

    async def changed(self) -> None:
        """Wait until a call in flight settles or a waiting call leaves the queue."""
        if self._settled is None:
            self._settled = anyio.Event()
        await self._settled.wait()

    def queue(self) -> object:
        """Join the queue of the calls waiting for a hard budget; the token names the turn."""
        turn = object()
        self._turns.append(turn)
        return turn

    def is_next(self, turn: object) -> bool:
        """Whether ``turn`` is the first call waiting for the budget."""
        return self._turns[0] is turn

    def leave(self, turn: object) -> None:
        """Leave the queue (admitted, refused or cancelled): the next call's turn."""
        self._turns.remove(turn)
        self._wake()

    def reserve(self, worst: Reservation) -> Reservation:
        """Hold a call's worst case until :meth:`release`."""
        self._reserved_usd += worst.usd
        self._reserved_tokens += worst.tokens
        self._in_flight += 1
        return worst

    def release(self, reservation: Reservation) -> None:
        """A call in flight settled (answered, failed or cancelled): its reserve is free again,
        and the calls waiting for the budget look again."""
        self._in_flight -= 1
        if self._in_flight == 0:
            # Exactly nothing in flight: no float residue of the sums may refuse a later call.
            self._reserved_usd, self._reserved_tokens = 0.0, 0
        else:
            self._reserved_usd -= reservation.usd
            self._reserved_tokens -= reservation.tokens
        self._wake()

    def flight(self, key: str) -> Flight | None:
        """The call in flight under cache key ``key``, if any."""
        return self._flights.get(key)

    def take_off(self, key: str, flight: Flight) -> None:
        """``flight`` is the call in flight under ``key`` (identical calls wait for it)."""
        self._flights[key] = flight

    def land(self, key: str, flight: Flight) -> None:
        """``flight`` is over: identical calls no longer wait for it."""
        if self._flights.get(key) is flight:
            del self._flights[key]

    @property
    def in_flight_usd(self) -> float:
        """The worst-case cost of the calls in flight."""
        return max(0.0, self._reserved_usd)

    @property
    def in_flight_tokens(self) -> int:
        """The worst-case tokens of the calls in flight."""
        return max(0, self._reserved_tokens)


def _worst_tokens(request: JudgeRequest, budget: Budget) -> tuple[int, int]:
    text_bytes = sum(len(m.content.encode("utf-8", "surrogatepass")) for m in request.messages)
    if request.native_schema and request.output_schema is not None:
        text_bytes += len(json.dumps(request.output_schema, default=repr).encode())
    input_tokens = text_bytes + _MESSAGE_OVERHEAD_TOKENS * (len(request.messages) + 1)
    cap = request.settings.output_cap  # what the adapters send
    return input_tokens, budget.worst_case_output_tokens if cap is None else cap


@attrs.frozen
class Reservation:
    """A call's worst case: USD (0 without a price), tokens, and its output cap."""

    usd: float
    tokens: int
    output_tokens: int
    priced: bool


DEFAULT_BUDGET = Budget()


def worst_case(
    budget: Budget, pricing: Pricing | None, model_id: str, request: JudgeRequest,
    *, batch: bool = False,
) -> Reservation:
    worst_in, worst_out = _worst_tokens(request, budget)
    price = pricing.price(model_id, batch=batch) if pricing is not None else None
    usd = 0.0 if price is None else (worst_in * price.input + worst_out * price.output) / MILLION
    return Reservation(usd=usd, tokens=worst_in + worst_out, output_tokens=worst_out,
                        priced=price is not None)


def _soft_pass(ledger: JudgeLedger, line: str) -> None:
    if ledger.soft_limit_passed is None:
        ledger.soft_limit_passed = f"{line}; the budget is soft, so the batch goes on"
        # Warnings turned into errors must not make the run raise; the ledger keeps the line.
        with contextlib.suppress(BudgetWarning):
            warnings.warn(ledger.soft_limit_passed, BudgetWarning, stacklevel=3)


def note_overrun(
    ledger: JudgeLedger, budget: Budget, model_id: str, usage: object, reservation: Reservation,
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


def exceeds_cap(usage: object, reservation: Reservation) -> bool:
    """Whether a reply reports more output tokens than its cap allowed."""
    output = usage.output_tokens if isinstance(usage, JudgeUsage) else None
    return output is not None and output > reservation.output_tokens


def _refusal(
    ledger: JudgeLedger, budget: Budget, worst: Reservation, model_id: str, *,
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


def _decide(
    ledger: JudgeLedger, budget: Budget, worst: Reservation, model_id: str, *, first: bool,
) -> Reservation | BudgetExhausted | None:
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
        return ledger.reserve(worst)
    return None  # fits once the calls in flight (there are some) settle


async def admit(
    ledger: JudgeLedger, budget: Budget, pricing: Pricing | None, model_id: str,
    request: JudgeRequest, *, batch: bool = False,
) -> Reservation | BudgetExhausted:
    """Reserve a call's worst case: a hard budget waits its turn (see :func:`_decide`), a
    soft one never waits and warns once when passed."""
    worst = worst_case(budget, pricing, model_id, request, batch=batch)
    if budget.mode == "soft":
        refusal = _refusal(ledger, budget, worst, model_id, counting_in_flight=True)
        if refusal is not None:
            _soft_pass(ledger, refusal.describe())
        return ledger.reserve(worst)
    turn = ledger.queue()
    try:
        while True:
            decided = _decide(ledger, budget, worst, model_id, first=ledger.is_next(turn))
            if decided is not None:
                return decided
            await ledger.changed()
    finally:
        # Admitted, refused or cancelled while waiting: the next call's turn.
        ledger.leave(turn)
