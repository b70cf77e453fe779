"""Dataset items: :class:`EvalItem`, the :class:`InvalidItem` placeholder, and reading raw items.

Whatever a dataset yields becomes an item or an :class:`ItemFailure` (the one failure value of the
run path: an item that cannot run, with the reason in one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, final

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore._core._slot_init import fast_init, new_success
from scorecore._core._values import RUN_ARGUMENTS
from scorecore.evals._persistence._sanitize import is_clean_text
from scorecore.validators import is_int

__all__ = [
    "EvalItem",
    "InvalidItem",
    "ItemFailure",
    "ItemLike",
    "item_from_mapping",
    "item_key",
    "read_item",
]

_MESSAGE_LIMIT = 120  # characters of a value shown in an item's one-line error


def _check_request_context(
    _instance: object, _attribute: attrs.Attribute[Any], value: object
) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(
            f"EvalItem.request_context must be a mapping or None, got {short_repr(value)}"
        )


def _id_problem(value: object) -> str | None:
    """Why ``value`` cannot name an item (its run id and stored rows), or ``None``."""
    if not isinstance(value, str) or not value:
        return f"must be a non-empty str or None, got {short_repr(value)}"
    if not is_clean_text(value):
        # Run ids are keys of stored rows: replacing the character could merge two items.
        return (
            f"must not contain a NUL character or a lone surrogate (no store can keep it), "
            f"got {short_repr(value)}"
        )
    return None


def _check_id(instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    problem = None if value is None else _id_problem(value)
    if problem is not None:
        raise TypeError(f"{type(instance).__name__}.id {problem}")


def _check_line(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not is_int(value) or value < 1):
        raise TypeError(f"EvalItem.line must be an int >= 1 or None, got {short_repr(value)}")


def _check_extra(_instance: object, _attribute: attrs.Attribute[Any], value: object) -> None:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict: no ABC lookup
        raise TypeError(f"EvalItem.extra must be a mapping, got {short_repr(value)}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"EvalItem.extra keys must be str, got {short_repr(key)}")
        if key in RUN_ARGUMENTS:
            raise ValueError(
                f"EvalItem.extra must not contain {short_repr(key)}: it is a field of the run; "
                f"set it on the item instead"
            )


@final
@attrs.frozen(kw_only=True)
class EvalItem:
    """One dataset item: what the scorers see for it.

    ``output`` is ignored when :func:`run_evals` has a ``target`` (the target's return value
    is the output). ``id`` names the item in run ids and stored rows; without one the
    item's position is used. Ids must be unique within a dataset: :func:`run_evals` reports an
    item repeating an earlier item's id as failed and stores nothing for it. ``extra`` keys
    reach the scorers as the run's extra keys. ``line`` is where a reader found the item in
    its file (1-based); messages about the item then name the line.

    >>> EvalItem(input="2+2?", output="4", ground_truth="4", id="sum").id
    'sum'
    """

    input: Any
    output: Any = None
    ground_truth: Any = None
    request_context: Mapping[str, Any] | None = attrs.field(
        default=None, validator=_check_request_context
    )
    expected_trajectory: Any = None
    id: str | None = attrs.field(default=None, validator=_check_id)
    extra: Mapping[str, Any] = attrs.field(factory=dict, validator=_check_extra)
    line: int | None = attrs.field(default=None, validator=_check_line)


# EvalItem(...) by position, its checks left to the caller (_item_of makes them).
_new_item: Final = fast_init(EvalItem, checked_by_caller=True)


@final
@attrs.frozen(kw_only=True)
class InvalidItem:
    """A placeholder a data source yields for an item it could not read.

    :func:`run_evals` records it as a failed item with ``reason`` (and stores a failed row per
    scorer), then goes on. The command line yields one for a malformed JSONL line.

    ``extra`` is what the source still knows about the item (``eval-traces``: the trace and
    span it came from, ``target_trace_id`` / ``target_span_id``); the failed result keeps it,
    so an OpenTelemetry report of the failure lands under the judged span.

    >>> InvalidItem(reason="data.jsonl:3: invalid JSON").reason
    'data.jsonl:3: invalid JSON'
    """

    reason: str
    id: str | None = attrs.field(default=None, validator=_check_id)
    extra: Mapping[str, Any] = attrs.field(factory=dict, validator=_check_extra)


ItemFailureKind: TypeAlias = Literal["item", "target_raised"]
"""Why a whole item failed: the target raised, or anything else about the item."""

ItemLike: TypeAlias = EvalItem | Mapping[str, Any] | InvalidItem
"""What a dataset yields: an :class:`EvalItem`, a mapping with the same keys, or a placeholder."""


@final
@attrs.frozen(kw_only=True)
class ItemFailure:
    """Why an item cannot run (the run path's one failure value).

    Attributes:
        error: one line saying why (it becomes the item's and each scorer's ``error``).
        duplicate_of: the index of the earlier item whose run id this item repeats.
        kind: ``"target_raised"`` when the target raised, else ``"item"`` (unreadable,
            repeated id, …); reports group by it, never by ``error``'s text.
    """

    error: str
    duplicate_of: int | None = None
    kind: ItemFailureKind = "item"
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    """What the source knew about an item it could not read (see :class:`InvalidItem`)."""


_KEYS: Mapping[str, str] = {
    "input": "input",
    "output": "output",
    "ground_truth": "ground_truth",
    "groundTruth": "ground_truth",
    "request_context": "request_context",
    "requestContext": "request_context",
    "expected_trajectory": "expected_trajectory",
    "expectedTrajectory": "expected_trajectory",
    "id": "id",
    "extra": "extra",
    # A pairwise judgement's second output (scorecore.scorers.pairwise): an extra key of the run.
    "baseline_output": "baseline_output",
    "baselineOutput": "baseline_output",
}
_ACCEPTED = ("input, output, ground_truth, request_context, expected_trajectory, id, extra, "
             "baseline_output")


def _item_of(
    raw: Mapping[Any, Any], *, needs_output: bool, line: int | None = None, where: str = ""
) -> Result[EvalItem, ItemFailure]:
    """The item a mapping describes, or why not (``where`` prefixes the message)."""
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        name = _KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            return Failure(ItemFailure(
                error=f"{where}unknown field {short_repr(key, _MESSAGE_LIMIT)} "
                      f"(accepted: {_ACCEPTED}; put anything else under 'extra')"
            ))
        if name in fields:
            return Failure(ItemFailure(
                error=f"{where}field {name!r} given twice (snake_case and camelCase)"
            ))
        fields[name] = value
    if "input" not in fields:
        return Failure(ItemFailure(error=f"{where}missing field 'input'"))
    if needs_output and "output" not in fields:
        return Failure(ItemFailure(
            error=f"{where}missing field 'output' (and no target to produce it)"
        ))
    if "baseline_output" in fields:
        baseline = fields.pop("baseline_output")
        extra = fields.get("extra")
        extra = {} if extra is None else extra
        if isinstance(extra, Mapping):  # any other extra is refused below, as it is
            if "baseline_output" in extra:
                return Failure(ItemFailure(
                    error=f"{where}field 'baseline_output' given twice (at the top and in "
                          f"extra)"))
            fields["extra"] = {**extra, "baseline_output": baseline}
    item_id = _int_id(fields.get("id"))
    if item_id is not None:
        fields["id"] = item_id
    if fields.get("extra") is None:
        fields.pop("extra", None)
        item_id = fields.get("id")
        context = fields.get("request_context")
        # The common item (no extra, a clean str id or none) built without __init__'s keyword
        # call: the checks its validators would make are the ones made here.
        if (context is None or type(context) is dict) and (
            item_id is None or (type(item_id) is str and _id_problem(item_id) is None)
        ) and (line is None or (is_int(line) and line >= 1)):
            return new_success(_new_item(
                fields["input"], fields.get("output"), fields.get("ground_truth"), context,
                fields.get("expected_trajectory"), item_id, {}, line))
    try:
        return new_success(EvalItem(**fields, line=line))
    except (TypeError, ValueError) as exc:  # a field validator's message names field and value
        return Failure(ItemFailure(error=f"{where}{exc}"))


def item_from_mapping(
    raw: Mapping[str, Any], *, needs_output: bool = False, line: int | None = None
) -> EvalItem:
    """Build an :class:`EvalItem` from a mapping with snake_case or Mastra camelCase keys.

    An integer ``id`` becomes a string. ``baseline_output`` (the output a pairwise judgement
    compares ``output`` with) is kept in ``extra``, so it reaches the scorers as the run's
    ``baseline_output`` extra key. ``needs_output`` makes a missing ``output`` an error.
    ``line`` is the item's line in its file, when a reader knows it (see :class:`EvalItem`).

    Raises:
        ValueError: an unknown or duplicated key, a missing ``input`` (or ``output``), or a
            field of the wrong type; the message names the field and value.

    >>> item_from_mapping({"input": "q", "output": "a", "groundTruth": "a", "id": 7}).id
    '7'
    """
    item = _item_of(raw, needs_output=needs_output, line=line)
    if isinstance(item, Failure):
        raise ValueError(item.failure().error)  # noqa: TRY004 - a bad dataset item is a value error
    return item.unwrap()


def read_item(raw: object, index: int, *, needs_output: bool) -> Result[EvalItem, ItemFailure]:
    """What the dataset yielded at ``index`` as an item, or why (one line) it cannot be one.

    ``needs_output`` makes a mapping without ``output`` a failure (no target to produce it).

    >>> read_item({"input": "q"}, 3, needs_output=True).failure().error
    "item #3: missing field 'output' (and no target to produce it)"
    """
    # A dict first: the Mapping check alone is an abstract-class lookup per item.
    if type(raw) is dict or isinstance(raw, Mapping):
        return _item_of(raw, needs_output=needs_output, where=f"item #{index}: ")
    if isinstance(raw, EvalItem):
        return Success(raw)
    if isinstance(raw, InvalidItem):
        return Failure(ItemFailure(error=raw.reason, extra=raw.extra))
    return Failure(ItemFailure(
        error=f"item #{index}: expected a mapping or EvalItem, "
              f"got {type(raw).__name__} {short_repr(raw, _MESSAGE_LIMIT)}"
    ))


def _int_id(value: object) -> str | None:
    """An int id as text (ints too long for ``str()`` are left to be refused as ids)."""
    if is_int(value) and value.bit_length() <= 64:
        return str(value)
    return None


def item_key(raw: object, index: int) -> tuple[str | None, int | None]:
    """The id and line (when known) naming what a dataset yielded at ``index`` in run ids.

    An entry that is not a valid item keeps its id when the id itself is usable.

    >>> item_key({"input": "q", "output": "a", "id": 7}, 0), item_key({"id": "x"}, 1)
    (('7', None), ('x', None))
    """
    read = read_item(raw, index, needs_output=False)
    if isinstance(read, Success):
        item = read.unwrap()
        return item.id, item.line
    return raw_id(raw), None


def raw_id(raw: object) -> str | None:
    """The usable id of a dataset entry that is not a valid item, for its run id."""
    if isinstance(raw, InvalidItem):
        return raw.id
    if isinstance(raw, Mapping):
        value = raw.get("id")
        value = _int_id(value) or value
        if isinstance(value, str) and _id_problem(value) is None:
            return value
    return None
