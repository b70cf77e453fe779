"""Prices: what a judge model costs per million tokens, and what a reply's usage costs.

:class:`Pricing` maps model ids to :class:`ModelPrice`; :func:`usage_problem` says when a reply's
token counts cannot be charged; :func:`format_usd` prints dollars as reports do.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any, TypeVar, final

import attrs

from scorecore._core._judge import JudgeUsage
from scorecore._core._reprs import short_repr
from scorecore.validators import is_int

__all__ = ["ModelPrice", "Pricing", "format_usd"]  # usage_problem and the constants are internal

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

_USAGE_FIELDS = tuple(f.name for f in attrs.fields(JudgeUsage))
_COUNTS = operator.attrgetter(*_USAGE_FIELDS)  # a usage's counts as a tuple, in one call
# No judge reply has a billion tokens: a count past this is a broken report, not a cost.
MAX_CREDIBLE_TOKENS = 1_000_000_000
# Prices are per million tokens.
MILLION = 1_000_000.0


def _price_field(_inst: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is None and attribute.name == "cached_input":
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:  # type: ignore[arg-type, operator]
        raise ValueError(
            f"ModelPrice.{attribute.name} must be a finite number >= 0 (USD per million "
            f"tokens), got {short_repr(value)}"
        )


def _discount_field(_inst: object, attribute: attrs.Attribute[_F], value: _F) -> None:
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
    # What every reply and cache hit holds, checked without a call per count: each count
    # None or an exact int in range (a bool or an int subclass takes the loop below).
    for value in _COUNTS(usage):
        if value is not None and not (
            type(value) is int and 0 <= value <= MAX_CREDIBLE_TOKENS
        ):
            break
    else:
        return None
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
        return round(total / MILLION, 12)


# Any: the converter's parameter is what Pricing(models=...) accepts, any mapping (checked here).
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
    def from_mapping(cls, data: Mapping[str, object]) -> Pricing:
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
