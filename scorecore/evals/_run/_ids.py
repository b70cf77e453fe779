"""Run ids of a batch's items, and which item first used each, so none overwrites another's rows."""

from __future__ import annotations

import re
from typing import final

from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore.evals._run._items import ItemFailure

__all__ = ["RunIds"]

_POSITION_ID = re.compile(r"#(0|[1-9][0-9]{0,17})")
_CLAIMED: Result[None, ItemFailure] = Success(None)


@final
class RunIds:
    """The run ids of one batch: ``f"{batch_id}:{item id}"``, or ``f"{batch_id}:#{index}"``.

    Each id is claimed by the first item using it, so no item overwrites another's rows: ids
    are kept (flat memory for id-less items: one bit each), and an id spelled ``#<position>`` is
    checked against the id-less item at that position. Claim in dataset order.

    >>> ids = RunIds("b")
    >>> ids.of(0, "q1"), ids.of(1, None)
    ('b:q1', 'b:#1')
    >>> ids.claim(0, "q1", 3)
    <Success: None>
    >>> ids.claim(5, "q1", 9).failure().error
    "duplicate id 'q1', first seen at line 3"
    """

    __slots__ = ("_batch_id", "_first", "_idless", "_position_ids")

    # The first item of each id: its index, and its line (when known) in the bits above.
    _LINE_SHIFT = 40

    def __init__(self, batch_id: str) -> None:
        self._batch_id = batch_id
        self._first: dict[str, int] = {}
        self._idless = bytearray()
        self._position_ids = False

    def of(self, index: int, item_id: str | None) -> str:
        """The run id of item ``index``."""
        return f"{self._batch_id}:{item_id}" if item_id else f"{self._batch_id}:#{index}"

    def claim(self, index: int, item_id: str | None, line: int | None) -> Result[None, ItemFailure]:
        """Claim the run id of item ``index``; a failure naming the first item if it is taken."""
        if item_id is None:
            byte = index >> 3
            if byte >= len(self._idless):
                self._idless.extend(bytes(byte + 1024 - len(self._idless)))
            self._idless[byte] |= 1 << (index & 7)
            packed = self._first.get(f"#{index}") if self._position_ids else None
            if packed is None:
                return _CLAIMED
            first, where = self._unpack(packed)
            return Failure(ItemFailure(
                error=f"no id, and its run id (position #{index}) is the id of an earlier "
                      f"item, first seen at {where}",
                duplicate_of=first,
            ))
        packed = self._first.get(item_id)
        if packed is not None:
            first, where = self._unpack(packed)
            return Failure(ItemFailure(
                error=f"duplicate id {short_repr(item_id)}, first seen at {where}",
                duplicate_of=first,
            ))
        position = _POSITION_ID.fullmatch(item_id)
        if position is not None:
            self._position_ids = True
            other = int(position[1])
            if other < index and other >> 3 < len(self._idless) and (
                self._idless[other >> 3] >> (other & 7)
            ) & 1:
                return Failure(ItemFailure(
                    error=f"duplicate id {short_repr(item_id)}: it is the run id of item "
                          f"#{other}, which has no id",
                    duplicate_of=other,
                ))
        self._first[item_id] = index | ((line or 0) << self._LINE_SHIFT)
        return _CLAIMED

    def _unpack(self, packed: int) -> tuple[int, str]:
        index = packed & ((1 << self._LINE_SHIFT) - 1)
        line = packed >> self._LINE_SHIFT
        return index, f"line {line}" if line else f"item #{index}"
