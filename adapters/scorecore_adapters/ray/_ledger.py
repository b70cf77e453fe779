"""The crash ledger: which items are in flight, so that an item that kills its worker is found."""

from __future__ import annotations

from typing import Final

from scorecore.evals.engine import ItemFailure

__all__: list[str] = []

CRASHED: Final = ItemFailure(
    error="its worker died while scoring it, alone, after dying with its batch (a crash, "
          "running out of memory or a kill): not scored; a resume tries it again"
)
"""The failure of an item that killed its worker twice, scored alone."""


class Ledger:
    """Which items are in flight, so that an item that kills its worker is found.

    One small actor per :func:`score_dataset` call. A batch marks its items started and, when
    its rows are saved, ended; a batch Ray retries after its worker died finds them still
    started (suspects). Each suspect is then scored alone: one that dies alone twice is
    failed (:data:`CRASHED`), one that survives is counted as safe again.
    """

    def __init__(self) -> None:
        self._started: dict[int, int] = {}
        self._alone: dict[int, int] = {}

    def begin(self, indices: list[int]) -> list[int]:
        """Mark ``indices`` started; the ones started before and never ended."""
        started = self._started
        suspects = [i for i in indices if i in started]
        for index in indices:
            started[index] = started.get(index, 0) + 1
        return suspects

    def isolate(self, index: int) -> int:
        """Mark ``index`` about to be scored alone; how many times it was (this one included)."""
        self._alone[index] = self._alone.get(index, 0) + 1
        return self._alone[index]

    def survived(self, index: int) -> None:
        """``index`` was scored alone without its worker dying."""
        self._alone.pop(index, None)

    def end(self, indices: list[int]) -> None:
        """The batch of ``indices`` is saved."""
        for index in indices:
            self._started.pop(index, None)
            self._alone.pop(index, None)
