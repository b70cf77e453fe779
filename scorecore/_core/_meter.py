"""The meter every judge call of a run goes through: cache, single flight, budget, charging.

A :class:`JudgeMeter` (carried by :class:`~scorecore.Runtime`) brings a run its
:class:`~scorecore.judge.economics.JudgeCache`, its :class:`~scorecore.judge.economics.Pricing`,
its :class:`~scorecore.judge.economics.Budget` and the trial index. Copies made with
:meth:`JudgeMeter.for_trial` share one :class:`~scorecore.judge.economics.JudgeLedger`: what a
batch spent, what it saved, and the calls in flight.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar, final

import anyio
import attrs

from scorecore._core._budget import (
    DEFAULT_BUDGET,
    Budget,
    Flight,
    JudgeLedger,
    Reservation,
    admit,
    exceeds_cap,
    note_overrun,
    worst_case,
)
from scorecore._core._cache import (
    JudgeCache,
    SchemaKey,
    prompt_key,
    prompt_key_parts,
    request_key,
)
from scorecore._core._call_key import CALL_KEY
from scorecore._core._causes import BudgetExhausted
from scorecore._core._judge import (
    DEFAULT_OUTPUT_CAP,
    JudgeModel,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    ModelSettings,
    model_default_cap,
)
from scorecore._core._pricing import Pricing, usage_problem
from scorecore.validators import is_int, misuse

__all__ = ["JudgeMeter"]  # MeteredExecution and default_cap are internal: the judge loop

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

_R = TypeVar("_R")
NOTHING_SPENT = JudgeUsage(input_tokens=0, output_tokens=0, total_tokens=0)
"""The usage of a reply read from the cache: it spent nothing now."""
_UNKNOWN_USAGE = JudgeUsage()


def _cap(_inst: object, _attribute: attrs.Attribute[_F], value: _F) -> None:
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


# The last usage a cache hit held that usage_problem found sound (see MeteredExecution._hit).
_sound_usage: list[JudgeUsage | None] = [None]

# A model's ``cache_identity`` that raised or is not a ``str``: a string no model's identity
# equals by accident (the meter compares it by identity, and never puts it in a key).
_UNREADABLE = "\x00unreadable cache identity"


@final
class MeteredExecution:
    """One judge execution's view of the meter (internal; used by the judge loop only).

    ``lookup`` (and ``after_miss``) answer an attempt from the cache (or an
    identical call in flight) and ``ask`` makes its model call (budget, single flight,
    charging); ``store`` keeps the reply that passed validation; ``settlement`` gives the
    cost and cache counts of the execution's telemetry.
    """

    __slots__ = ("_batch", "_candidate", "_cost", "_cost_known", "_hits", "_identity",
                 "_meter", "_misses", "_model", "_saved", "cap", "keyed")

    def __init__(self, meter: JudgeMeter | None, model: JudgeModel) -> None:
        self._meter = meter
        self._model = model
        cache = meter.cache if meter is not None else None
        # Read here, without a helper call each: one execution per prompt step of every run
        # reads them, and each call is a measurable share of a step answered from the cache.
        # The model's cache identity: one that raises or is not a str is unreadable (no key).
        identity: object = None
        if cache is not None:
            try:
                identity = getattr(model, "cache_identity", None)
            except Exception:  # noqa: BLE001 - a user's model is a boundary: unreadable
                identity = _UNREADABLE
        self._identity: str | None = (
            identity if identity is None or isinstance(identity, str) else _UNREADABLE)
        # Whether the model answers through a batch API (its optional ``batch_api`` is true).
        try:
            self._batch = getattr(model, "batch_api", False) is True
        except Exception:  # noqa: BLE001 - a user's model is a boundary: unreadable is "no"
            self._batch = False
        self.cap: int = default_cap(meter, model)
        """The output cap of a step that sets none (:func:`default_cap`)."""
        self.keyed: bool = cache is not None and self._identity is not _UNREADABLE
        """Whether calls are looked up in (and stored to) a cache, under a key."""
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

    def _hit(self, ledger: JudgeLedger, response: JudgeResponse) -> JudgeResponse:
        self._hits += 1
        ledger.cache_hits += 1
        usage = response.usage
        # The hits a cache reads back share their usage value when their rows share it (a
        # frozen value): the last one found sound is not checked again.
        if usage is not _sound_usage[0]:
            if usage_problem(usage) is not None:
                # An edited (or damaged) entry: it saves nothing rather than a made-up amount.
                ledger.usage_errors += 1
                return response
            if type(usage) is JudgeUsage:
                _sound_usage[0] = usage
        if self._meter is None or self._meter.pricing is None:  # nothing to price it at
            return response
        saved = self._price_of(usage)
        if saved is not None:
            self._saved += saved
            ledger.saved_usd += saved
        return response

    def key_of(self, request: JudgeRequest, schema_key: SchemaKey | None = None) -> str:
        """The cache key of ``request`` for this execution's model and trial (only asked when
        :attr:`keyed`); ``schema_key`` is its output schema's part, written when the step was
        added (written now when not given)."""
        meter = self._meter
        assert meter is not None  # noqa: S101 - keyed says so
        model = self._model
        return request_key(
            request, provider=model.provider, model_id=model.model_id, trial=meter.trial,
            identity=self._identity,
            schema=SchemaKey(request.output_schema) if schema_key is None else schema_key,
        )

    def prompt_key(  # noqa: PLR0917 - the request's parts
        self, settings: ModelSettings, native: bool, schema_key: SchemaKey, system: str,
        system_note: str, note: str, prompt: str,
    ) -> str | None:
        """The cache key of the request of two messages, ``system`` followed by
        ``system_note`` and ``prompt`` followed by ``note``, for this execution's model and
        trial (:func:`~scorecore._core._cache.prompt_key` of
        :func:`~scorecore._core._cache.prompt_key_parts`); ``None`` when such a request is
        keyed another way (built, then :meth:`key_of`). Only asked when :attr:`keyed`."""
        meter = self._meter
        assert meter is not None  # noqa: S101 - keyed says so
        model = self._model
        parts = prompt_key_parts(settings, model.provider, model.model_id, meter.trial,
                                 self._identity, native, schema_key, system, system_note, note)
        return None if parts is None else prompt_key(parts, prompt)

    async def lookup(self, key: str) -> JudgeResponse | None:
        """The reply to the request keyed ``key``: from the cache (counted as a hit), or from
        an identical call in flight (:meth:`after_miss`); ``None``, a counted miss, after
        which :meth:`ask` calls the judge. An exception from the cache is a miss.

        Only for a :attr:`keyed` execution, with the key of the request :meth:`ask` sends.

        A hit spends nothing: its reply comes back as stored (the usage of the call that
        paid for it), and the execution counts :data:`NOTHING_SPENT` for it.
        """
        meter = self._meter
        assert meter is not None  # noqa: S101 - keyed says so
        cache = meter.cache
        assert cache is not None  # noqa: S101 - keyed says so
        try:
            found = await cache.get(key)
        except Exception:  # noqa: BLE001 - a user's cache is a boundary: a miss
            found = None
        if isinstance(found, JudgeResponse):
            return self._hit(meter.ledger, found)
        return await self.after_miss(key)

    async def after_miss(self, key: str) -> JudgeResponse | None:
        """Once the cache had no reply under ``key``: the reply of an identical call in
        flight (waited for; looked up again when it failed), counted as a hit, or ``None``,
        a counted miss, after which :meth:`ask` calls the judge."""
        meter = self._meter
        assert meter is not None  # noqa: S101 - keyed says so
        ledger = meter.ledger
        flight = ledger.flight(key)
        if flight is not None:
            await flight.done.wait()
            if flight.response is not None:
                return self._hit(ledger, flight.response)
            # The call we waited for failed: look again (then wait for the next identical
            # call in flight, or ask the judge ourselves).
            return await self.lookup(key)
        self._misses += 1
        ledger.cache_misses += 1
        return None

    async def ask(
        self, request: JudgeRequest, call: Callable[[], Awaitable[_R]], key: str = ""
    ) -> _R | JudgeResponse | BudgetExhausted:
        """Call the judge (through the budget) for ``request``, once :meth:`after_miss` missed
        ``key`` (``""``: an execution that is not :attr:`keyed`); a reply is charged, shared
        with identical calls waiting for it and kept for :meth:`store`."""
        meter = self._meter
        if meter is None:
            return await call()
        ledger = meter.ledger
        reservation: Reservation | None = None
        if meter.budget is not None:
            admitted = await admit(ledger, meter.budget, meter.pricing,
                                    self._model.model_id, request, batch=self._batch)
            if isinstance(admitted, BudgetExhausted):
                return admitted
            reservation = admitted
        flight = Flight(done=anyio.Event())
        if key:
            ledger.take_off(key, flight)
        ledger.model_calls += 1
        token = CALL_KEY.set(key or None)
        try:
            outcome: _R | JudgeResponse = await call()
            if isinstance(outcome, JudgeResponse):
                outcome = flight.response = self._received(meter, request, outcome, reservation)
                if key:
                    self._candidate = (key, outcome)
        finally:
            CALL_KEY.reset(token)
            if reservation is not None:
                ledger.release(reservation)
            if key:
                ledger.land(key, flight)
            flight.done.set()
        return outcome

    def _received(
        self, meter: JudgeMeter, request: JudgeRequest, response: JudgeResponse,
        reservation: Reservation | None,
    ) -> JudgeResponse:
        """Charge a reply; a reply with a usage error comes back with unknown counts."""
        ledger = meter.ledger
        model_id = self._model.model_id
        worst = reservation or worst_case(
            meter.budget or DEFAULT_BUDGET, meter.pricing, model_id, request,
            batch=self._batch)
        reported = response.usage
        bad = usage_problem(reported) is not None
        past_cap = not bad and self._batch and exceeds_cap(reported, worst)
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
            note_overrun(ledger, meter.budget, model_id,
                          reported if past_cap else response.usage, reservation)
        return response

    def _charge(
        self, ledger: JudgeLedger, response: JudgeResponse, reservation: Reservation
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
